// Timeouts that fit the operation, over real sockets: servers that accept and
// never answer, never finish a TLS handshake, stall or drip a body, and a
// proxy that never answers CONNECT. Each gives exit 7 and one line naming the
// host, the stage that ran out and the attempts made. The CLI runs with short
// limits through AERIAL_TIMEOUT_MS; the default limits and the lookup's budget
// are exercised on the client itself with small values. The knobs refused
// before anything is sent: test/unit/cli/timeout-knobs.test.ts.
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { NetworkError } from '../../src/api/errors.js';
import { ExitCode } from '../../src/lifecycle/errors.js';
import { resolveSettings } from '../../src/config/config.js';
import { buildGenerationRequest } from '../../src/input/scene-request.js';
import { registerSecret, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { failure, memorySink, withAttempts, withClientAt, withLimits } from '../helpers/client.js';
import { answer, answerJpeg, listingOf, serveOnLoopback, useHostileServerPerFile, writeForever, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_timeouts_5c1f9a';
registerSecret(KEY);
const request = buildGenerationRequest({ lat: '1', lng: '2' }, resolveSettings({}, {}, {}).sceneDefaults);

let server: HostileServer;
let config: ReturnType<typeof tempDir>;
useHostileServerPerFile((started, dir) => {
  server = started;
  config = dir;
});

/** Never answers: the request is read, and then nothing. */
const silence = () => {};

function aerial(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(args, { configDir: config.path, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, NODE_EXTRA_CA_CERTS: undefined, ...env } });
}

/** The one error line; `(N attempts)` stands for `(N attempts in <seconds>s)` when there were several. */
function expectOneLine(result: CliResult, line: string): void {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/(\d+ attempts)\\\)/, '$1 in \\d+(\\.\\d)?s\\)');
  expect(result.stderr).toMatch(new RegExp(`^error: ${escaped}\n$`));
}

/** A TCP server that accepts connections and never says a word (for TLS: a handshake that never completes). */
async function startMute(): Promise<{ port: number; accepted: () => number; close(): Promise<void> }> {
  let accepted = 0;
  const served = await serveOnLoopback(createServer(() => (accepted += 1)));
  return { ...served, accepted: () => accepted };
}

describe('each stage names itself, the host and the attempts (the CLI, AERIAL_TIMEOUT_MS=300)', () => {
  it('headers: a list that is never answered is tried 3 times, then one line, in a few seconds', async () => {
    server.respond(silence);
    const started = Date.now();
    const result = await aerial(['list'], { AERIAL_TIMEOUT_MS: '300' });
    expect(result.exitCode).toBe(ExitCode.Network);
    expectOneLine(result, `timed out waiting for response headers from 127.0.0.1:${server.port}: none within 0.3s (3 attempts)`);
    expect(server.requests).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('headers: a delete is a lookup too (3 attempts); a generation is sent once, never repeated', async () => {
    // The id is found in the listing; the deletion itself is never answered.
    server.respond(listingOf(['img_1'], silence));
    const deleted = await aerial(['delete', 'img_1', '--yes'], { AERIAL_TIMEOUT_MS: '300' });
    expect(deleted.exitCode).toBe(ExitCode.Network);
    expectOneLine(deleted, `timed out waiting for response headers from 127.0.0.1:${server.port}: none within 0.3s (3 attempts)`);
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'DELETE', 'DELETE', 'DELETE']);

    server.reset();
    const generated = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'never.jpg'], { AERIAL_TIMEOUT_MS: '300' });
    expect(generated.exitCode).toBe(ExitCode.Network);
    expectOneLine(generated, `timed out waiting for response headers from 127.0.0.1:${server.port}: none within 0.3s (1 attempt)`);
    expect(server.requests).toHaveLength(1);
  });

  it('connect: a TLS handshake that never completes', async () => {
    const mute = await startMute();
    try {
      const result = await aerial(['list'], { AERIAL_BASE_URL: `https://127.0.0.1:${mute.port}`, AERIAL_TIMEOUT_MS: '300' });
      expect(result.exitCode).toBe(ExitCode.Network);
      expectOneLine(result, `timed out connecting to 127.0.0.1:${mute.port}: no connection within 0.3s (3 attempts)`);
      expect(mute.accepted()).toBe(3);
    } finally {
      await mute.close();
    }
  });

  it('connect: a proxy that never answers CONNECT is named, and the public service is never reached', async () => {
    const connects: string[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req) => connects.push(req.url ?? ''));
    const { port, close } = await serveOnLoopback(proxy);
    try {
      const result = await aerial(['list'], { AERIAL_BASE_URL: undefined, HTTPS_PROXY: `http://127.0.0.1:${port}`, AERIAL_TIMEOUT_MS: '300' });
      expect(result.exitCode).toBe(ExitCode.Network);
      expectOneLine(
        result,
        `timed out connecting to the proxy 127.0.0.1:${port} (HTTPS_PROXY) for api.genaerial.com: no connection within 0.3s (3 attempts)`,
      );
      expect(connects).toEqual(['api.genaerial.com:443', 'api.genaerial.com:443', 'api.genaerial.com:443']);
    } finally {
      await close();
    }
  });

  it('body: a list whose body drips forever', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      writeForever(res, ' ', 50);
    });
    const dripped = await aerial(['list'], { AERIAL_TIMEOUT_MS: '300' });
    expect(dripped.exitCode).toBe(ExitCode.Network);
    expectOneLine(dripped, `timed out receiving the response body from 127.0.0.1:${server.port}: it did not finish within 0.3s (1 attempt)`);
  });
});

describe('the limits of each kind of call, on the client (real sockets, small limits)', () => {
  it('a lookup has a short header wait where a generation keeps its long one', async () => {
    const page = answer(200, '{"content":[],"totalElements":0,"totalPages":0,"page":0,"size":20}', 'application/json');
    server.respond(async (res, received, req) => {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await (received.method === 'POST' ? answerJpeg : page)(res, received, req);
    });
    const timeouts = withLimits('lookup', { headersMs: 300 });
    await withClientAt(server.url, { apiKey: KEY, timeouts, retry: withAttempts('lookup', 1) }, async (client) => {
      const listed = await failure(client.list());
      expect(listed.message).toBe(`timed out waiting for response headers from 127.0.0.1:${server.port}: none within 0.3s (1 attempt)`);
      await client.generateInto(request, memorySink());
    });
  });

  it('a body that stalls meets the idle limit; one that drips meets the whole-body limit', async () => {
    const timeouts = withLimits('lookup', { bodyIdleMs: 300, responseMs: 1500 });
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"content":[');
    });
    const stalled = await withClientAt(server.url, { apiKey: KEY, timeouts }, (client) => failure(client.list()));
    expect(stalled.message).toBe(`timed out receiving the response body from 127.0.0.1:${server.port}: no data for 0.3s (1 attempt)`);
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      writeForever(res, ' ', 50);
    });
    const dripped = await withClientAt(server.url, { apiKey: KEY, timeouts }, (client) => failure(client.list()));
    expect(dripped.message).toBe(`timed out receiving the response body from 127.0.0.1:${server.port}: it did not finish within 1.5s (1 attempt)`);
  });

  it("a lookup's budget ends the attempts: with 3 s for 400 ms waits, a third attempt would not fit", async () => {
    server.respond(silence);
    const timeouts = withLimits('lookup', { headersMs: 400, totalMs: 3000 });
    const started = Date.now();
    const error = await withClientAt(server.url, { apiKey: KEY, timeouts, retry: withAttempts('lookup', 5) }, (client) => failure(client.list()));
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(NetworkError);
    // 0.4-1 s (undici checks its timers about twice a second), a 0.5 s backoff, 0.4-1 s again: a 1 s
    // backoff would then leave less than the second an attempt needs, of the 3 s.
    expect(error.message).toMatch(new RegExp(`^timed out waiting for response headers from 127\\.0\\.0\\.1:${server.port}: none within 0\\.4s \\(2 attempts in [1-3](\\.\\d)?s\\)$`));
    expect(server.requests).toHaveLength(2);
    expect(elapsed).toBeLessThan(3500);
  });

  it("a header wait longer than the budget is cut to the budget", async () => {
    server.respond(silence);
    const timeouts = withLimits('lookup', { headersMs: 60_000, totalMs: 1500 });
    const started = Date.now();
    const error = await withClientAt(server.url, { apiKey: KEY, timeouts, retry: withAttempts('lookup', 1) }, (client) => failure(client.list()));
    expect(error.message).toBe(`timed out waiting for response headers from 127.0.0.1:${server.port}: none within 1.5s (1 attempt)`);
    // undici checks its timers about twice a second.
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
