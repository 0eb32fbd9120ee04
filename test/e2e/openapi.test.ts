// End-to-end: the CLI's traffic with the sandbox, checked against the OpenAPI
// document (docs/openapi.yaml, as the sandbox serves it at /openapi.json) by
// Stoplight Prism's validator, through scripts/openapi-proxy.mjs exactly as a
// user runs it against the real service. Every request of every command and
// every answer, errors included, must keep to the document; and the proxy
// must catch a request or an answer that does not.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ROOT, runCli, tempDir } from '../helpers/cli.js';
import { jpegInfo, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

const API = '/api/external/v1/image-generation';

interface Exchange {
  method: string;
  path: string;
  status: number | null;
  violations: { side: string; path: string; message: string }[];
}

interface Proxy {
  url: string;
  /** The proxy's report so far: one entry per exchange. */
  exchanges: Exchange[];
  stop(): Promise<void>;
}

/** Starts scripts/openapi-proxy.mjs in front of `upstream`, with --errors, as docs/sandbox.md tells users to. */
async function startProxy(upstream: string, spec: string): Promise<Proxy> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, 'scripts/openapi-proxy.mjs'), '--upstream', upstream, '--spec', spec, '--port', '0', '--errors'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exchanges: Exchange[] = [];
  let errors = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    errors += chunk;
    const lines = errors.split('\n');
    errors = lines.pop()!;
    for (const line of lines) if (line.startsWith('{')) exchanges.push(JSON.parse(line) as Exchange);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`the proxy exited early (${code}): ${errors}`)));
  });
  return {
    url,
    exchanges,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

let sandbox: TestSandbox;
let home: { path: string; remove(): void };
let proxy: Proxy;

useSandboxPerFile(
  (started, dir) => {
    sandbox = started;
    home = dir;
  },
  { homePrefix: 'aerial-openapi-' },
);

beforeAll(async () => {
  proxy = await startProxy(sandbox.url, `${sandbox.url}/openapi.json`);
}, 60_000);
afterAll(() => proxy?.stop());
beforeEach(() => {
  proxy.exchanges.length = 0;
});

/** aerial through the proxy, with the sandbox's key (or another). */
function aerial(args: string[], key = sandbox.key) {
  return runCli(args, { configDir: home.path, env: { AERIAL_BASE_URL: proxy.url, AERIAL_API_KEY: key }, timeout: 60_000 });
}

/** Waits until the proxy has reported `count` exchanges (its report comes on stderr, after the answer). */
async function reported(count: number): Promise<Exchange[]> {
  const deadline = Date.now() + 10_000;
  while (proxy.exchanges.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return proxy.exchanges;
}

const apiRequests = () => sandbox.requests().filter((entry) => entry.path.startsWith(API));

describe('the OpenAPI document', () => {
  it('is served at /openapi.json without a key: docs/openapi.yaml as JSON, with the full paths and a callback', async () => {
    const response = await fetch(`${sandbox.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const served = (await response.json()) as { openapi: string; paths: Record<string, Record<string, { callbacks?: object }>> };
    expect(served).toEqual(parseYaml(readFileSync(join(ROOT, 'docs/openapi.yaml'), 'utf8')));
    expect(served.openapi).toBe('3.1.0');
    expect(Object.keys(served.paths).sort()).toEqual([API, `${API}/async`, `${API}/{id}`]);
    expect(Object.keys(served.paths[`${API}/async`]!.post!.callbacks!)).toEqual(['generationResult']);
    // Not an API request: the request log stays the API's.
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('every command keeps to the document, answers included', () => {
  it('generate, list, delete, generate-async, batch and export, and their errors', async () => {
    const out = tempDir('aerial-openapi-out-');
    try {
      const runs: [string[], number, string?][] = [
        [['generate', '--lat', '40.6892', '--lng', '-74.0445', '--resolution', 'HD', '-o', join(out.path, 'liberty.jpg')], 0],
        [
          ['generate', '--at', '48.8584,2.2945', '--resolution', 'HD', '--zoom', 'High', '--angle', 'Low', '--bearing', 'NE', '--weather', 'GoldenHour', '--daytime', 'Dusk', '--aspect-ratio', 'Square', '--epoch', 'Historical', '--include-context', '--no-include-surroundings', '--improve-output', '--no-save-image', '--tag', 'tower', '--tag', 'paris', '--prompt', 'make it purple', '-o', join(out.path, 'eiffel.jpg')],
          0,
        ],
        [['list'], 0],
        [['list', '--json', '--all', '--size', '1', '--sort', 'createdAt,asc'], 0],
        [['list', '--json', '--sort', 'id,desc', '--sort', 'resolution'], 0],
        [['generate-async', '--lat', '35.6586', '--lng', '139.7454', '--resolution', 'HD', '--callback-url', 'http://127.0.0.1:9/hook'], 0],
        [['generate-async', '--lat', '51.5007', '--lng', '-0.1246', '--resolution', 'HD', '--listen', '-o', join(out.path, 'westminster.jpg')], 0],
        [['delete', 'no-such-image', '--yes'], 5, 'NotFound'],
      ];
      for (const [args, exitCode, error] of runs) {
        const result = await aerial(args);
        expect({ args, exitCode: result.exitCode, stderr: error ? result.stderr.includes(error) : result.exitCode === 0 ? '' : result.stderr }).toEqual({
          args,
          exitCode,
          stderr: error ? true : '',
        });
      }
      expect(jpegInfo(readFileSync(join(out.path, 'liberty.jpg'))).width).toBe(1280);
      expect(jpegInfo(readFileSync(join(out.path, 'westminster.jpg'))).width).toBe(1280);

      const csv = join(out.path, 'places.csv');
      writeFileSync(csv, 'lat,lng,zoom\n0,-30,Low\n23.4,11.5,Medium\n72,-40,High\n');
      expect((await aerial(['batch', csv, '--resolution', 'HD', '--output-template', join(out.path, 'batch-{row}.jpg')])).exitCode).toBe(0);
      expect((await aerial(['export', join(out.path, 'export')])).exitCode).toBe(0);

      const ids = (JSON.parse((await aerial(['list', '--json'])).stdout) as { content: { id: string }[] }).content.map((image) => image.id);
      expect((await aerial(['delete', ids[0]!, '--yes'])).exitCode).toBe(0);
      // delete looks an id up in the listing first and sends no DELETE for one that is not there (the run of
      // 'no-such-image' above): the document's 404 answer to a DELETE is asked for directly, through the proxy.
      const gone = await fetch(`${proxy.url}${API}/no-such-image`, { method: 'DELETE', headers: { 'x-api-key': sandbox.key } });
      expect(gone.status).toBe(404);
      await gone.arrayBuffer();

      // The errors of the document: 402 with no credits, 401 with a key the service does not know, 500 when generation fails.
      const broke = await sandbox.createAccount({ credits: 0 });
      expect((await aerial(['generate', '--lat', '1', '--lng', '2', '-o', join(out.path, 'none.jpg')], broke.key)).exitCode).toBe(4);
      expect((await aerial(['generate-async', '--lat', '1', '--lng', '2', '--callback-url', 'http://127.0.0.1:9/hook'], broke.key)).exitCode).toBe(4);
      expect((await aerial(['list'], 'sbx_not_a_key_of_this_sandbox')).exitCode).toBe(3);
      sandbox.setFaults({ failRate: 1 });
      expect((await aerial(['generate', '--lat', '1', '--lng', '2', '-o', join(out.path, 'failed.jpg')])).exitCode).toBe(6);
      sandbox.setFaults({ failRate: 0 });

      const sent = apiRequests().length;
      const exchanges = await reported(sent);
      // Every API request went through the proxy, and none broke the document either way.
      expect(exchanges.length).toBe(sent);
      expect(exchanges.filter((exchange) => exchange.violations.length > 0)).toEqual([]);
      expect(new Set(exchanges.map((exchange) => `${exchange.method} ${exchange.status}`))).toEqual(
        new Set(['POST 200', 'POST 202', 'GET 200', 'DELETE 200', 'DELETE 404', 'POST 402', 'GET 401', 'POST 500']),
      );
    } finally {
      out.remove();
    }
  }, 180_000);
});

describe('the proxy catches what breaks the document', () => {
  it('a request: refused with 422 naming the fields, and never sent on', async () => {
    const response = await fetch(`${proxy.url}${API}`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.key, 'content-type': 'application/json' },
      body: JSON.stringify({ coordinates: { latitude: 100, longitude: 2 }, resolution: 'HD', zoom: 'Low', bearing: 'N', angle: 'Top', weather: 'Sunny', daytime: 'Day', aspectRatio: 'Square', epoch: 'Nowadays', tags: [] }),
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { detail: string };
    expect(problem.detail).toContain("must have required property 'lat'");
    expect(problem.detail).toContain('bearing');
    expect(apiRequests()).toEqual([]);
  });

  it('an answer: a page without its totals and an image record without its url is a 502 for the CLI', async () => {
    const hostile: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ content: [{ id: 'a', coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2030-01-01T00:00:00Z' }], page: 0, size: 20 }));
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const upstream = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    const checking = await startProxy(upstream, join(ROOT, 'docs/openapi.yaml'));
    try {
      const result = await runCli(['list', '--json'], { configDir: home.path, env: { AERIAL_BASE_URL: checking.url, AERIAL_API_KEY: sandbox.key } });
      expect(result.exitCode).toBe(6);
      const deadline = Date.now() + 10_000;
      while (checking.exchanges.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const messages = checking.exchanges.flatMap((exchange) => exchange.violations.map((violation) => `${violation.side}: ${violation.message}`));
      expect(messages).toContain("response: Response body must have required property 'totalElements'");
      expect(messages).toContain("response: Response body property content.0 must have required property 'url'");
    } finally {
      await checking.stop();
      hostile.close();
    }
  });
});
