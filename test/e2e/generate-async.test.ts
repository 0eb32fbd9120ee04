// End-to-end: `aerial generate-async` (bin/aerial.js in a child process) against
// a sandbox in this process, over real sockets. The sandbox delivers its
// webhooks to the CLI's temporary listener; the tests also play the attacker
// (forged callbacks), the tunnel (a forwarding proxy that delivers twice) and
// the impatient user (Ctrl-C), and check the listener's port is free after each.
// bin/aerial.js ends with process.exit(), which would free a leaked port anyway,
// so the last group runs the command in this process (a test terminal) to see
// that the command itself closed the listener before returning, on every exit path.
// The acceptance record of --callback-url and the refused flags are tested
// in-process: test/unit/commands/generate-async.test.ts.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import exifr from 'exifr';
import { beforeEach, describe, expect, it } from 'vitest';
import { assertNoSecrets, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { headerNames, startHostileServer, tinyJpeg } from '../helpers/hostile-server.js';
import { API_PATH, jpegInfo, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { runInProcess, TestTerminal } from '../helpers/terminal.js';

const SCENE = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD'];
const TOKEN_PATH = /^\/[A-Za-z0-9_-]{32}$/;

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let dir: string;

useSandboxPerFile(
  (started, tempHome) => {
    sandbox = started;
    home = tempHome;
  },
  { homePrefix: 'aerial-async-' },
);

beforeEach(() => {
  dir = mkdtempSync(join(home.path, 'out-'));
});

function cli(args: string[], env: Record<string, string | undefined> = sandbox.env()) {
  return runCli(['generate-async', ...SCENE, ...args], { configDir: home.path, env });
}

function asyncRequests() {
  return sandbox.requests().filter((entry) => entry.path === `${API_PATH}/async`);
}

// The listener binds port 0 (--listen-port's default: the OS's choice) and the tests learn the port
// afterwards, from what the CLI told the service or printed: a port probed here and handed over could be
// taken by another process in between.

/** The port of a URL the listener is reached at; always explicit, never the scheme's default. */
function portOf(url: string): number {
  const port = Number(new URL(url).port);
  expect(port, url).toBeGreaterThan(0);
  return port;
}

/** The listener's port, from the `Listening on <host>:<port>` line it prints (not with --json). */
function listeningPort(stderr: string): number {
  const port = Number(stderr.match(/Listening on 127\.0\.0\.1:(\d+)/)?.[1]);
  expect(port, stderr).toBeGreaterThan(0);
  return port;
}

/** The port in the `listener: listening at <url>` line --verbose prints, once the CLI has printed it. */
async function verbosePort(run: { waitFor(pattern: RegExp): Promise<RegExpMatchArray> }): Promise<number> {
  return portOf((await run.waitFor(/listener: listening at (http:\/\/\S+)/))[1]!);
}

/** The listener must give its port back on every exit path: binding it again proves it did. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** A running CLI whose stderr the test reads while it waits (listening URL, request id). */
function startCli(args: string[]) {
  const child = spawnCli(['generate-async', ...SCENE, ...args], { configDir: home.path, env: sandbox.env() });
  let stderr = '';
  const waiters: Array<{ pattern: RegExp; resolve: (match: RegExpMatchArray) => void }> = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of [...waiters]) {
      const match = stderr.match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  });
  return {
    child,
    waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
      const match = stderr.match(pattern);
      if (match) return Promise.resolve(match);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void child.then(() => reject(new Error(`CLI exited before printing ${pattern}; stderr:\n${stderr}`)));
      });
    },
    async result() {
      const result = await child;
      const out = { exitCode: result.exitCode ?? -1, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
      assertNoSecrets(out.stdout, 'stdout');
      assertNoSecrets(out.stderr, 'stderr');
      return out;
    },
  };
}

interface Reply {
  status: number | string;
  body: string;
}

/** One raw HTTP request; a refused or reset connection is reported as its error code. */
function send(url: string, body?: string | Buffer, method = 'POST'): Promise<Reply> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: error.code ?? 'error', body: '' }));
    req.end(body);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/**
 * Stands in for ngrok/cloudflared: receives the sandbox's POST on its public URL and forwards it to the
 * listener `copies` times at once, path unchanged (2: a retrying service delivering twice). It is up
 * before the CLI starts, so it learns the listener's port only when the CLI has bound it: `forwardTo`
 * takes the port as a promise, which a delivery waits for (the CLI prints its listening line before it
 * sends the request, so before any delivery can arrive).
 */
async function startTunnel(copies: number) {
  let port: Promise<number> | undefined;
  const delivered: Array<{ path: string; body: string }> = [];
  const forwarded: Reply[] = [];
  const server = createHttpServer(async (req, res) => {
    const body = await readBody(req);
    delivered.push({ path: req.url ?? '', body });
    const listenerPort = await port?.catch(() => undefined);
    if (listenerPort === undefined) return void res.writeHead(502).end();
    const target = `http://127.0.0.1:${listenerPort}${req.url}`;
    const replies = await Promise.all(Array.from({ length: copies }, () => send(target, body)));
    forwarded.push(...replies);
    res.writeHead(typeof replies[0]!.status === 'number' ? replies[0]!.status : 502).end();
  });
  const tunnelPort = await listen(server);
  return {
    port: tunnelPort,
    url: `http://127.0.0.1:${tunnelPort}`,
    delivered,
    forwarded,
    forwardTo(listenerPort: Promise<number>) {
      port = listenerPort;
      port.catch(() => {}); // a CLI that ends before it listens fails its own test; read again by listenerPort()
    },
    listenerPort(): Promise<number> {
      if (!port) throw new Error('the tunnel was never told where the listener is');
      return port;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('generate-async --listen', () => {
  it('catches the success callback, downloads the signed image and prints the result record', async () => {
    const out = join(dir, 'eiffel.jpg');
    const creditsBefore = await sandbox.credits(sandbox.key);
    const result = await cli(['--listen', '-o', out, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);

    const record = JSON.parse(result.stdout);
    expect(Object.keys(record).sort()).toEqual(['creditsUsed', 'file', 'generatedImageId', 'requestId']);
    const [sent] = asyncRequests();
    expect(record.requestId).toBe(sent?.requestId);
    expect(record.file).toBe(out);
    expect(await sandbox.credits(sandbox.key)).toBe(creditsBefore! - record.creditsUsed);
    // The callback URL carried a fresh token path on the listener's own address.
    const callback = new URL(sent!.callbackUrl!);
    const port = portOf(callback.href);
    expect(callback.origin).toBe(`http://127.0.0.1:${port}`);
    expect(callback.pathname).toMatch(TOKEN_PATH);
    // The image came from the signed URL of the callback, and it is a real HD JPEG with the location in EXIF.
    expect(sandbox.requests().some((entry) => entry.method === 'GET' && entry.path.includes(record.generatedImageId) && entry.status === 200)).toBe(true);
    expect(jpegInfo(readFileSync(out))).toMatchObject({ width: 1280, height: 720 });
    // The bytes, not the path: exifr reads a path with FileHandle.stat(path), which Node 26 refuses.
    const gps = await exifr.gps(readFileSync(out));
    expect(gps?.latitude).toBeCloseTo(48.8584, 3);
    expect(readdirSync(dir)).toEqual(['eiffel.jpg']);
    expect(await canBind(port)).toBe(true);
  });

  it('prints the file path on stdout and a success line on stderr without --json', async () => {
    const out = join(dir, 'plain.jpg');
    const result = await cli(['--listen', '-o', out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${out}\n`);
    const [sent] = asyncRequests();
    expect(result.stderr).toContain(`Accepted request ${sent!.requestId}`);
    expect(result.stderr).toMatch(/Saved .*plain\.jpg \(\d+ KiB, 1 credit, [\d.]+s\)/);
  });

  it('works with --sandbox: the in-process sandbox calls back the in-process listener', async () => {
    const out = join(dir, 'inproc.jpg');
    // No base URL or key in the environment: --sandbox supplies both.
    const result = await cli(['--sandbox', '--listen', '-o', out, '--json', '--verbose'], {});
    expect(result.exitCode, result.stderr).toBe(0);
    const port = Number(result.stderr.match(/listener: listening at http:\/\/127\.0\.0\.1:(\d+)\//)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(JSON.parse(result.stdout).file).toBe(out);
    expect(jpegInfo(readFileSync(out))).toMatchObject({ width: 1280, height: 720 });
    expect(asyncRequests()).toEqual([]); // the test's sandbox was not involved
    expect(await canBind(port)).toBe(true);
  });

  it('exits 6 with errorCode and errorMessage on the error callback, writing nothing, human and --json', async () => {
    sandbox.setFaults({ failRate: 1 });
    const result = await cli(['--listen', '-o', join(dir, 'fail.jpg')]);
    expect(result.exitCode).toBe(6);
    const [sent] = asyncRequests();
    const port = listeningPort(result.stderr);
    expect(portOf(sent!.callbackUrl!)).toBe(port);
    expect(result.stderr).toMatch(new RegExp(`error: ErrorGeneratingImage — .+ \\(request ${sent!.requestId}\\)\\n$`));
    expect(sandbox.webhookAttempts().filter((a) => a.requestId === sent!.requestId).map((a) => [a.kind, a.outcome])).toEqual([['error', 'delivered']]);
    expect(readdirSync(dir)).toEqual([]);
    expect(await canBind(port)).toBe(true);

    const json = await cli(['--listen', '-o', join(dir, 'fail.jpg'), '--json']);
    expect(json.exitCode).toBe(6);
    expect(json.stdout).toBe('');
    const line = JSON.parse(json.stderr.trim().split('\n').at(-1)!);
    expect(line).toMatchObject({ error: 'ErrorGeneratingImage', exitCode: 6, requestId: asyncRequests()[1]!.requestId });
  });

  it('exits 7 on timeout and prints the request id, human and --json', async () => {
    // Every delivery attempt is withheld: the callback never comes.
    sandbox.setFaults({ webhookFail: 1000 });
    const started = Date.now();
    const human = await cli(['--listen', '--timeout', '1s', '-o', join(dir, 'late.jpg')]);
    const elapsed = Date.now() - started;
    expect(human.exitCode).toBe(7);
    const first = asyncRequests()[0]!.requestId!;
    expect(human.stderr).toMatch(new RegExp(`error: (Timeout — )?no callback for request ${first} within 1s`));
    expect(human.stderr).toContain("aerial list");
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(8000);
    const port = listeningPort(human.stderr);
    expect(portOf(asyncRequests()[0]!.callbackUrl!)).toBe(port);
    expect(await canBind(port)).toBe(true);

    const json = await cli(['--listen', '--timeout', '700ms', '-o', join(dir, 'late.jpg'), '--json']);
    expect(json.exitCode).toBe(7);
    expect(json.stdout).toBe('');
    const second = asyncRequests()[1]!.requestId!;
    const line = JSON.parse(json.stderr.trim().split('\n').at(-1)!);
    expect(line).toMatchObject({ error: 'Timeout', exitCode: 7, requestId: second });
    expect(line.message).toContain(second);
    expect(readdirSync(dir)).toEqual([]);
    expect(await canBind(portOf(asyncRequests()[1]!.callbackUrl!))).toBe(true);
  });

  it('ignores forged callbacks while it waits, then completes with the genuine one', async () => {
    // Latency gives the test time to forge between the acceptance and the real callback.
    sandbox.setFaults({ latencyMs: 1200 });
    const out = join(dir, 'genuine.jpg');
    const run = startCli(['--listen', '-o', out, '--json', '--verbose']);
    const url = (await run.waitFor(/listener: listening at (http:\/\/\S+)/))[1]!;
    const port = portOf(url);
    const requestId = (await run.waitFor(/Accepted request (\S+);/))[1]!;
    const origin = new URL(url).origin;
    const genuineLooking = { requestId, signedUrl: 'http://127.0.0.1:1/evil.jpg', generatedImageId: 'evil', creditsUsed: 0 };

    const forgeries: Array<[string, Promise<Reply>, number]> = [
      ['wrong token', send(`${origin}/${'A'.repeat(32)}`, JSON.stringify(genuineLooking)), 404],
      ['no token', send(`${origin}/`, JSON.stringify(genuineLooking)), 404],
      ['GET on the token path', send(url, undefined, 'GET'), 404],
      ['wrong requestId', send(url, JSON.stringify({ ...genuineLooking, requestId: 'someone-else' })), 400],
      ['error payload, wrong requestId', send(url, JSON.stringify({ requestId: 'x', errorCode: 'Forged', errorMessage: 'no' })), 400],
      ['oversized body', send(url, JSON.stringify({ ...genuineLooking, pad: 'x'.repeat(70_000) })), 400],
      ['malformed JSON', send(url, '{"requestId":'), 400],
    ];
    for (const [what, reply, status] of forgeries) expect((await reply).status, what).toBe(status);

    const result = await run.result();
    expect(result.exitCode, result.stderr).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.requestId).toBe(requestId);
    expect(record.generatedImageId).not.toBe('evil');
    expect(jpegInfo(readFileSync(out))).toMatchObject({ width: 1280, height: 720 });
    // Every forgery was turned away before the genuine callback was accepted.
    const ignored = [...result.stderr.matchAll(/listener: ignored /g)].map((m) => m.index!);
    expect(ignored).toHaveLength(forgeries.length);
    expect(Math.max(...ignored)).toBeLessThan(result.stderr.indexOf('listener: accepted a callback'));
    expect(readdirSync(dir)).toEqual(['genuine.jpg']);
    expect(await canBind(port)).toBe(true);
  });

  it('ignores a second delivery of the same callback through a tunnel, leaving the file intact', async () => {
    const tunnel = await startTunnel(2);
    try {
      const out = join(dir, 'once.jpg');
      const run = startCli([
        '--listen', '--public-url', `${tunnel.url}/tunnel/`,
        '-o', out, '--json', '--no-metadata', '--verbose',
      ]);
      tunnel.forwardTo(verbosePort(run));
      const result = await run.result();
      expect(result.exitCode, result.stderr).toBe(0);
      const listenPort = await tunnel.listenerPort();
      expect(listenPort).not.toBe(tunnel.port);
      const record = JSON.parse(result.stdout);

      const { delivered, forwarded } = tunnel;
      expect(delivered).toHaveLength(1);
      expect(delivered[0]!.path).toMatch(/^\/tunnel\/[A-Za-z0-9_-]{32}$/);
      expect(asyncRequests()[0]!.callbackUrl).toBe(`${tunnel.url}${delivered[0]!.path}`);
      expect(forwarded.map((reply) => reply.status)).toEqual([200, 200]);
      expect(result.stderr.match(/listener: accepted a callback/g)).toHaveLength(1);
      expect(result.stderr.match(/listener: ignored a repeated delivery/g)).toHaveLength(1);

      // --no-metadata: the file is byte for byte what the signed URL serves.
      const payload = JSON.parse(delivered[0]!.body);
      expect(payload.requestId).toBe(record.requestId);
      const served = Buffer.from(await (await fetch(payload.signedUrl)).arrayBuffer());
      expect(readFileSync(out).equals(served)).toBe(true);
      expect(readdirSync(dir)).toEqual(['once.jpg']);
      expect(await canBind(listenPort)).toBe(true);
    } finally {
      await tunnel.close();
    }
  });

  it('completes when the sandbox fails the first deliveries and a retry gets through (--callback-url advertised)', async () => {
    sandbox.setFaults({ webhookFail: 2 });
    // With --listen, --callback-url is the URL to advertise; here a tunnel that passes each delivery on once.
    const tunnel = await startTunnel(1);
    try {
      const out = join(dir, 'retried.jpg');
      const run = startCli(['--listen', '--callback-url', `${tunnel.url}/hooks`, '-o', out, '--json', '--verbose']);
      tunnel.forwardTo(verbosePort(run));
      const result = await run.result();
      expect(result.exitCode, result.stderr).toBe(0);
      const port = await tunnel.listenerPort();
      const { requestId } = JSON.parse(result.stdout);
      const [sent] = asyncRequests();
      expect(new URL(sent!.callbackUrl!).origin).toBe(tunnel.url);
      expect(new URL(sent!.callbackUrl!).pathname).toMatch(/^\/hooks\/[A-Za-z0-9_-]{32}$/);
      const attempts = sandbox.webhookAttempts().filter((attempt) => attempt.requestId === requestId);
      expect(attempts.map((attempt) => attempt.outcome)).toEqual(['skipped', 'skipped', 'delivered']);
      // The one delivery reached the listener, path unchanged.
      expect(tunnel.delivered.map((delivery) => delivery.path)).toEqual([new URL(sent!.callbackUrl!).pathname]);
      expect(tunnel.forwarded.map((reply) => reply.status)).toEqual([200]);
      expect(jpegInfo(readFileSync(out))).toMatchObject({ width: 1280, height: 720 });
      expect(await canBind(port)).toBe(true);
    } finally {
      await tunnel.close();
    }
  });
});

describe('generate-async --listen: Ctrl-C', () => {
  it('exits 130 while waiting, names the request and frees the port', async () => {
    sandbox.setFaults({ webhookFail: 1000 });
    const run = startCli(['--listen', '--timeout', '1m', '-o', join(dir, 'never.jpg')]);
    const requestId = (await run.waitFor(/Accepted request (\S+);/))[1]!;
    const port = portOf(asyncRequests()[0]!.callbackUrl!);
    expect(await canBind(port)).toBe(false);
    run.child.kill('SIGINT');
    const result = await run.result();
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain(`Request ${requestId} may still finish; look for it later with 'aerial list'`);
    expect(result.stderr).toMatch(/error: interrupted\s*$/);
    expect(readdirSync(dir)).toEqual([]);
    expect(await canBind(port)).toBe(true);
  });

  it('exits 130 mid-download without leaving a temp file, and never sends the key to the signed URL', async () => {
    sandbox.setFaults({ webhookFail: 1000 });
    // The signed URL's host sends half a JPEG, then stalls until the client goes away.
    const storage = await startHostileServer();
    const image = tinyJpeg();
    storage.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length });
      res.write(image.subarray(0, image.length >> 1));
    });
    try {
      const run = startCli(['--listen', '-o', join(dir, 'half.jpg'), '--verbose']);
      const url = (await run.waitFor(/listener: listening at (http:\/\/\S+)/))[1]!;
      const port = portOf(url);
      const requestId = (await run.waitFor(/Accepted request (\S+);/))[1]!;
      // Delivered the way the service would: right token, right requestId.
      const callback = { requestId, signedUrl: `${storage.url}/signed/half.jpg?sig=1`, generatedImageId: 'img_half', creditsUsed: 1 };
      expect((await send(url, JSON.stringify(callback))).status).toBe(200);
      for (let i = 0; i < 200 && !readdirSync(dir).some((name) => name.endsWith('.part')); i++) await new Promise((r) => setTimeout(r, 20));
      expect(readdirSync(dir).filter((name) => name.endsWith('.part'))).toHaveLength(1);

      run.child.kill('SIGINT');
      const result = await run.result();
      expect(result.exitCode).toBe(130);
      expect(readdirSync(dir)).toEqual([]);
      expect(storage.requests).toHaveLength(1);
      expect(storage.requests[0]!.url).toBe('/signed/half.jpg?sig=1');
      expect(headerNames(storage.requests[0]!.headers)).not.toContain('x-api-key');
      expect(await canBind(port)).toBe(true);
    } finally {
      await storage.close();
    }
  });
});

describe('generate-async --listen in-process: the port is closed before the command returns', () => {
  /** Runs the command in this process (a test terminal), so a listener left open would still hold its port afterwards. */
  async function runHere(args: string[], options: { env?: Record<string, string>; whileRunning?: (terminal: TestTerminal) => Promise<void> } = {}) {
    const terminal = new TestTerminal({ env: { AERIAL_CONFIG_DIR: home.path, ...(options.env ?? sandbox.env()) } });
    const running = runInProcess(['generate-async', ...SCENE, ...args], terminal);
    await options.whileRunning?.(terminal);
    return running;
  }

  it('after success, error payload, timeout and a refused request', async () => {
    const outcomes: Array<[string, () => void, string[], number]> = [
      ['success', () => {}, ['-o', join(dir, 'ok.jpg')], 0],
      ['error payload', () => sandbox.setFaults({ failRate: 1 }), ['-o', join(dir, 'err.jpg')], 6],
      ['timeout', () => sandbox.setFaults({ failRate: 0, webhookFail: 1000 }), ['--timeout', '300ms', '-o', join(dir, 'late.jpg')], 7],
    ];
    for (const [what, arrange, args, expected] of outcomes) {
      arrange();
      const sentBefore = asyncRequests().length;
      const result = await runHere(['--listen', ...args]);
      expect(result.exitCode, `${what}: ${result.stderr}`).toBe(expected);
      const port = listeningPort(result.stderr);
      expect(portOf(asyncRequests()[sentBefore]!.callbackUrl!), what).toBe(port);
      expect(await canBind(port), what).toBe(true);
    }
    // Bound, then the service refused the request (bad key, 401): the listener must not outlive it.
    const refused = await runHere(['--listen', '-o', join(dir, 'auth.jpg')], {
      env: { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: 'sk_sandbox_not_a_real_key_0000' },
    });
    expect(refused.exitCode).toBe(3);
    const port = listeningPort(refused.stderr);
    expect(await canBind(port)).toBe(true);
    expect(readdirSync(dir)).toEqual(['ok.jpg']);
  });

  it('after Ctrl-C while waiting', async () => {
    sandbox.setFaults({ webhookFail: 1000 });
    let port = 0;
    const result = await runHere(['--listen', '-o', join(dir, 'never.jpg')], {
      whileRunning: async (terminal) => {
        port = listeningPort(await terminal.stderr.waitFor(/Accepted request/));
        expect(await canBind(port)).toBe(false);
        terminal.kill('SIGINT');
      },
    });
    expect(result.exitCode).toBe(130);
    expect(await canBind(port)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });
});
