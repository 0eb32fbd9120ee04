// End-to-end: every wait the CLI promises to end does end, on time, while the
// garbage collector runs all the time (node --expose-gc with a preload that
// collects every 20 ms); and duration flags read as documented: a bare number
// is seconds, units are written out, and a bad value is refused with exit 2
// naming the flag before anything is sent.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertNoSecrets, registerSecret, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { forcedGcChild } from '../helpers/forced-gc.js';
import { answerJson, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { API_PATH, generationRequest } from '../helpers/sandbox.js';

const KEY = 'deadline-test-key-0001';
const SCENE = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD'];

let home: ReturnType<typeof tempDir>;
let server: HostileServer;
let accepted = 0;

beforeAll(async () => {
  registerSecret(KEY);
  home = tempDir('aerial-deadlines-');
  server = await startHostileServer();
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => {
  server.reset();
  // A service that accepts every async request and never calls back.
  server.respond((res, received, req) => answerJson(202, { requestId: `never-${++accepted}`, status: 'processing' })(res, received, req));
});

const env = (extra: Record<string, string> = {}) => ({ AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY, ...extra });
const asyncRequests = () => server.requests.filter((request) => request.url === `${API_PATH}/async`);

describe('deadlines under forced garbage collection', () => {
  it('generate-async --listen --timeout 2 gives up after 2 seconds, exit 7', async () => {
    const gc = forcedGcChild(home.path);
    const started = Date.now();
    const result = await runCli(['generate-async', ...SCENE, '--listen', '--timeout', '2', '-o', join(home.path, 'never.jpg')], {
      configDir: home.path,
      env: env(gc.env),
      timeout: 20_000,
    });
    const elapsed = Date.now() - started;
    expect(result.exitCode, result.stderr).toBe(7);
    expect(result.stderr).toContain('waiting up to 2s for the callback');
    expect(result.stderr).toMatch(/error: no callback for request never-\d+ within 2s/);
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(8000);
    expect(asyncRequests()).toHaveLength(1);
    // The collector really ran while the CLI waited: 2 s at one collection per 20 ms.
    expect(gc.collections()).toBeGreaterThan(30);
  });

  it('batch --async --callback-timeout 1.5 fails every row after 1.5 seconds, exit 7, each sent once', async () => {
    const gc = forcedGcChild(home.path);
    const csv = join(home.path, 'rows.csv');
    writeFileSync(csv, 'lat,lng\n10,20\n11,21\n12,22\n');
    const started = Date.now();
    const result = await runCli(
      ['batch', csv, '--async', '--callback-timeout', '1.5', '--concurrency', '3', '--resolution', 'HD', '--output-template', join(home.path, 'out', '{row}.jpg'), '--json'],
      { configDir: home.path, env: env(gc.env), timeout: 20_000 },
    );
    const elapsed = Date.now() - started;
    expect(result.exitCode, result.stderr).toBe(7);
    const summary = JSON.parse(result.stdout);
    expect(summary.rows).toHaveLength(3);
    for (const row of summary.rows) {
      expect(row.status).toBe('failed');
      expect(row.error).toMatch(/no callback for request never-\d+ within 1\.5s/);
    }
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    expect(elapsed).toBeLessThan(8000);
    // A callback that never came may still be charged: the row is not sent again.
    expect(asyncRequests()).toHaveLength(3);
    expect(gc.collections()).toBeGreaterThan(20);
  });
});

describe('the sandbox under forced garbage collection', () => {
  it('gives up on a webhook receiver that never answers after the 5 s attempt limit, and tries again', async () => {
    // A receiver that takes each delivery and never answers it.
    const arrivals: number[] = [];
    const receiver = createServer((req) => {
      arrivals.push(Date.now());
      req.resume();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // Every 50 ms: full collections in a process with render threads are not cheap.
    const gc = forcedGcChild(home.path, 50);
    const sandbox = spawnCli(['sandbox', '--port', '0', '--json', '--data-dir', join(home.path, 'sandbox-data')], {
      configDir: home.path,
      env: gc.env,
      timeout: 30_000,
    });
    try {
      const info = await new Promise<{ url: string; key: string }>((resolve, reject) => {
        let out = '';
        sandbox.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
        });
        void sandbox.then((result) => reject(new Error(`the sandbox exited: ${String(result.stderr)}`)));
      });
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const accepted = await fetch(`${info.url}${API_PATH}/async`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': info.key, 'x-callback-url': hook },
        body: JSON.stringify(generationRequest()),
      });
      expect(accepted.status).toBe(202);
      const { requestId } = (await accepted.json()) as { requestId: string };
      const until = Date.now() + 15_000;
      while (arrivals.length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(arrivals, 'the second delivery attempt never came').toHaveLength(2);
      // The first attempt was given up after 5 s, then retried 200 ms later.
      const gap = arrivals[1]! - arrivals[0]!;
      expect(gap).toBeGreaterThanOrEqual(5000);
      expect(gap).toBeLessThan(7500);
      const attempts = (await (await fetch(`${info.url}/__sandbox/webhooks`)).json()) as Array<{ requestId: string; attempt: number; outcome: string; detail?: string }>;
      expect(attempts.filter((a) => a.requestId === requestId).map((a) => [a.attempt, a.outcome, a.detail])).toEqual([[1, 'failed', 'no answer within 5s']]);
    } finally {
      // The second Ctrl-C stops at once, without the grace the hanging delivery would get.
      sandbox.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 100));
      sandbox.kill('SIGINT');
      await sandbox;
      await new Promise((resolve) => receiver.close(resolve));
      receiver.closeAllConnections();
    }
    // Many ran during the 5 s wait: about 100 at rest, fewer on a busy machine (37 seen at load 11); one would have
    // been enough to drop a deadline the collector could drop.
    expect(gc.collections()).toBeGreaterThan(10);
  });
});

describe('duration flags', () => {
  it('reads --timeout 30 as 30 seconds: still waiting after 3 s, then Ctrl-C', async () => {
    const child = spawnCli(['generate-async', ...SCENE, '--listen', '--timeout', '30', '-o', join(home.path, 'wait.jpg')], {
      configDir: home.path,
      env: env(),
      timeout: 20_000,
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!stderr.includes('for the callback') && Date.now() < deadline && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stderr).toMatch(/Accepted request never-\d+; waiting up to 30s for the callback/);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    // Read as milliseconds, it would have given up long ago (exit 7).
    expect(child.exitCode).toBeNull();
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    assertNoSecrets(String(result.stderr), 'stderr');
  });

  const refusals: Array<[string, string[], RegExp]> = [
    ['generate-async --timeout', ['generate-async', ...SCENE, '--listen', '--timeout', 'soon'], /^error: --timeout must be a duration from 1ms to 24h, .*; got 'soon'\n$/],
    ['generate-async --timeout, old milliseconds', ['generate-async', ...SCENE, '--listen', '--timeout', '30000'], /^error: --timeout .*got '30000': for milliseconds write 30000ms, or for 30000 seconds write 8h20m\n$/],
    ['batch --callback-timeout', ['batch', '-', '--async', '--callback-timeout', '0'], /^error: --callback-timeout must be a duration from 1ms to 24h, .*; got '0'\n$/],
    ['batch --retry-delay, old milliseconds', ['batch', '-', '--retry-delay', '500'], /^error: --retry-delay must be a duration from 0s to 30s, .*; got '500': for milliseconds write 500ms\n$/],
    ['batch --retry-delay', ['batch', '-', '--retry-delay', '1m'], /^error: --retry-delay must be a duration from 0s to 30s, .*; got '1m'\n$/],
    ['batch --progress-interval', ['batch', '-', '--progress-interval', '5x'], /^error: --progress-interval must be a duration from 1s to 1h, .*; got '5x'\n$/],
    ['export --retry-delay', ['export', 'backup', '--retry-delay', '250'], /^error: --retry-delay .*; got '250': for milliseconds write 250ms\n$/],
    ['export --progress-interval', ['export', 'backup', '--progress-interval', '-1'], /^error: --progress-interval must be a duration .*; got '-1'\n$/],
    ['sandbox --latency, old milliseconds', ['sandbox', '--port', '0', '--latency', '100'], /^error: --latency .*; got '100': for milliseconds write 100ms, or for 100 seconds write 1m40s\n$/],
  ];
  it.each(refusals)('refuses a bad %s with exit 2 naming the flag, sending nothing', async (_what, args, message) => {
    const result = await runCli(args, { configDir: home.path, env: env(), input: 'lat,lng\n1,2\n' });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(server.requests).toEqual([]);
  });

  it('takes units and decimals: --retry-delay 20ms, --progress-interval 1.5, --callback-timeout 1m30s', async () => {
    const csv = join(home.path, 'dry.csv');
    writeFileSync(csv, 'lat,lng\n1,2\n');
    const result = await runCli(
      ['batch', csv, '--async', '--callback-timeout', '1m30s', '--retry-delay', '20ms', '--progress-interval', '1.5', '--dry-run'],
      { configDir: home.path, env: env() },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(server.requests).toEqual([]);
  });
});
