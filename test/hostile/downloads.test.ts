// Image downloads whose URLs a hostile service chose (webhook signedUrl, list
// record url): only plain http(s), never a link-local or cloud metadata
// address in any spelling, nor a name that resolves to one when the socket
// connects; and the API key never travels with a download. generate-async
// --listen with each such signedUrl is tested in-process:
// test/unit/commands/download-destinations.test.ts.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GenAerialClient } from '../../src/api/client.js';
import { ForbiddenDestinationError, guardedLookup, guardLookup, isForbiddenAddress } from '../../src/api/download-guard.js';
import { cliErrorOf } from '../../src/lifecycle/errors.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { memorySink } from '../helpers/client.js';
import { acceptAndCallBack, answerJson, FORBIDDEN_URLS, headerNames, NOT_HTTP, startHostileServer, tinyJpeg, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_downloads_0c7d3a';
registerSecret(KEY);

let service: HostileServer;
let storage: HostileServer;
let home: ReturnType<typeof tempDir>;

beforeAll(async () => {
  service = await startHostileServer();
  storage = await startHostileServer();
  home = tempDir('aerial-downloads-');
});
afterAll(async () => {
  await service.close();
  await storage.close();
  home.remove();
});
beforeEach(() => {
  service.reset();
  storage.reset();
  storage.respond((res) => {
    const body = tinyJpeg();
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  });
});

function aerial(args: string[], cwd = home.path) {
  return runCli(args, { configDir: home.path, cwd, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: service.url }, timeout: 60_000 });
}

describe('batch --async and export with hostile URLs', () => {
  it('batch --async: rows whose signedUrl is forbidden fail alone; the good one downloads without the key', async () => {
    const urls = [FORBIDDEN_URLS[0]!, `${storage.url}/signed/good.jpg?sig=1`, FORBIDDEN_URLS[13]!];
    acceptAndCallBack(service, (requestId) => ({ signedUrl: urls[Number(requestId.slice(4)) - 1], generatedImageId: requestId, creditsUsed: 1 }));
    const work = tempDir('aerial-downloads-batch-');
    try {
      const csv = join(work.path, 'rows.csv');
      writeFileSync(csv, 'lat,lng\n1,2\n3,4\n5,6\n');
      const result = await aerial(['batch', csv, '--async', '--concurrency', '1', '--max-retries', '0', '--json'], work.path);
      expect(result.exitCode).toBe(6);
      const rows = JSON.parse(result.stdout).rows as Array<{ status: string; error?: string }>;
      expect(rows.map((r) => r.status)).toEqual(['failed', 'done', 'failed']);
      expect(rows[0]!.error).toMatch(/refused to download from 169\.254\.169\.254/);
      expect(rows[2]!.error).toMatch(/refused to download from metadata\.google\.internal/);
      expect(storage.requests.map((r) => r.url)).toEqual(['/signed/good.jpg?sig=1']);
      expect(headerNames(storage.requests[0]!.headers)).not.toContain('x-api-key');
      expect(JSON.stringify(storage.requests[0]!.headers)).not.toContain(KEY);
    } finally {
      work.remove();
    }
  });

  it('export: records whose url is forbidden fail, the others are saved', async () => {
    const record = (id: string, url: string) => ({ id, url, coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2025-01-01T00:00:00Z' });
    const content = [record('good', `${storage.url}/good.jpg`), record('meta', FORBIDDEN_URLS[7]!), record('file', NOT_HTTP[0]!)];
    service.respond(answerJson(200, { content, totalElements: 3, totalPages: 1, page: 0, size: 50 }));
    const dir = join(home.path, 'export');
    const result = await aerial(['export', dir, '--json']);
    expect(result.exitCode).toBe(6);
    const summary = JSON.parse(result.stdout) as { rows: Array<{ id: string; status: string; error?: string }> };
    expect(summary.rows.map((r) => [r.id, r.status])).toEqual([['good', 'done'], ['meta', 'failed'], ['file', 'failed']]);
    expect(readdirSync(dir).sort()).toEqual(['good.jpg', 'index.geojson', 'index.html', 'index.jsonl', 'index.thumbnails']);
    expect(headerNames(storage.requests[0]!.headers)).not.toContain('x-api-key');
  });
});

describe('names that resolve to a forbidden address, refused as the socket connects', () => {
  const answers: Record<string, string[]> = {
    'images.example': ['127.0.0.1'],
    'rebind.example': ['127.0.0.1', '169.254.169.254'],
    'mapped.example': ['::ffff:169.254.169.254'],
    'linklocal6.example': ['fe80::1'],
  };
  /** A resolver with fixed answers (this machine's DNS cannot be made to lie); everything else about the socket is real. */
  const resolve = (hostname: string, options: { all?: boolean }, callback: (error: NodeJS.ErrnoException | null, address: unknown, family?: number) => void) => {
    const addresses = (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  };

  it('connects to a name that resolves to an allowed address, and refuses one that resolves to a forbidden one (exit 6)', async () => {
    const dispatcher = new Agent({ connect: { lookup: guardLookup(resolve as never) } });
    const client = new GenAerialClient({ baseUrl: service.url, apiKey: KEY, dispatcher });
    try {
      const sink = memorySink();
      await client.downloadInto(`http://images.example:${storage.port}/ok.jpg`, sink);
      expect(sink.bytes().equals(tinyJpeg())).toBe(true);
      expect(storage.requests.map((r) => r.url)).toEqual(['/ok.jpg']);
      for (const name of ['rebind.example', 'mapped.example', 'linklocal6.example']) {
        const failure = await client.downloadInto(`http://${name}:${storage.port}/steal.jpg`, memorySink()).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure, name).toBeInstanceOf(ForbiddenDestinationError);
        expect(cliErrorOf(failure as ForbiddenDestinationError), name).toMatchObject({ code: 'ForbiddenDestination', exitCode: 6 });
        expect((failure as Error).message).toMatch(new RegExp(`^refused to connect to ${name.replace('.', '\\.')} \\(.+\\): a link-local or cloud metadata address$`));
      }
      // The name that answered 127.0.0.1 first never reached the server: refused before connecting.
      expect(storage.requests.map((r) => r.url)).toEqual(['/ok.jpg']);
    } finally {
      await dispatcher.close();
    }
  });

  it('the CLI connects through the guard to names that resolve as usual (localhost)', async () => {
    service.respond(answerJson(200, { content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 }));
    const result = await runCli(['list', '--json'], { configDir: home.path, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: `http://localhost:${service.port}` } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(service.requests).toHaveLength(1);
  });

  it("looks names up with the system's resolver, loaded on first use", async () => {
    const lookUp = (hostname: string) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) => guardedLookup(hostname, { all: true }, (error, address) => resolve({ error, address })));
    const local = await lookUp('localhost');
    expect(local.error).toBeNull();
    expect((local.address as Array<{ address: string }>).map((entry) => entry.address)).toEqual(expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]));
  });

  it('the address rule covers link-local and metadata addresses in every family, and nothing ordinary', () => {
    for (const address of ['169.254.0.1', '169.254.169.254', '169.254.255.255', 'fe80::1', 'febf::1', 'fd00:ec2::254', '::ffff:169.254.1.1', '100.100.100.200']) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['127.0.0.1', '10.0.0.1', '192.168.1.1', '169.253.255.255', '169.255.0.0', '::1', 'fec0::1', '100.100.100.199', '8.8.8.8', 'not-an-ip']) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});
