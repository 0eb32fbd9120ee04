// `aerial sandbox` as a command: flags are validated into UsageErrors, the URL
// and key are printed as data, and it serves until its signal aborts.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/api/errors.js';
import type { ActionFactory, CommandBody } from '../../src/cli.js';
import { register } from '../../src/commands/sandbox.js';
import { Context, type GlobalOptions } from '../../src/context.js';
import { Terminal } from '../../src/io.js';
import { Shutdown } from '../../src/shutdown.js';
import { tempDataDir } from '../helpers/sandbox.js';

interface Harness {
  program: Command;
  stdout: PassThrough;
  stderr: PassThrough;
  shutdown: Shutdown;
  /** Resolves with the first line printed on stdout. */
  firstLine(): Promise<string>;
  stdoutText(): string;
  stderrText(): string;
}

function harness(): Harness {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let errText = '';
  stderr.on('data', (chunk: Buffer) => (errText += chunk.toString('utf8')));
  const shutdown = new Shutdown();
  const action: ActionFactory =
    <O,>(body: CommandBody<O>) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const globals = command.optsWithGlobals() as GlobalOptions & O;
      const io = new Terminal({ stdout, stderr, stdin, env: {}, json: globals.json, quiet: globals.quiet, color: false });
      const ctx = new Context(io, globals, { AERIAL_CONFIG_DIR: '/nonexistent' }, shutdown);
      try {
        await body(ctx, globals, command.args);
      } finally {
        await ctx.cleanup();
      }
    };
  const program = new Command('aerial').exitOverride().option('--json').option('-q, --quiet');
  program.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  register(program, action);
  let outText = '';
  const lineWaiters: Array<(line: string) => void> = [];
  stdout.on('data', (chunk: Buffer) => {
    outText += chunk.toString('utf8');
    if (outText.includes('\n')) for (const wake of lineWaiters.splice(0)) wake(outText.split('\n')[0]!);
  });
  return {
    program,
    stdout,
    stderr,
    shutdown,
    firstLine: () => new Promise((resolve) => (outText.includes('\n') ? resolve(outText.split('\n')[0]!) : lineWaiters.push(resolve))),
    stdoutText: () => outText,
    stderrText: () => errText,
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('aerial sandbox', () => {
  it('prints {url, port, key, dataDir} with --json, serves, and stops cleanly on abort', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const h = harness();
    const run = h.program.parseAsync(['node', 'aerial', 'sandbox', '--port', '0', '--json', '--data-dir', dir, '--credits', '7']);
    const info = JSON.parse(await h.firstLine()) as { url: string; port: number; key: string; dataDir: string };
    expect(info).toMatchObject({ url: `http://127.0.0.1:${info.port}`, dataDir: dir, key: expect.stringMatching(/^sbx_/) });
    expect(info.port).toBeGreaterThan(0);

    const res = await fetch(`${info.url}/__sandbox/accounts/${info.key}`);
    expect(await res.json()).toMatchObject({ credits: 7 });
    const listed = await fetch(`${info.url}/api/external/v1/image-generation`, { headers: { 'x-api-key': info.key } });
    expect(listed.status).toBe(200);
    await listed.arrayBuffer();

    h.shutdown.abort();
    await run;
    await expect(fetch(info.url)).rejects.toThrow();
    expect(h.stderrText()).toMatch(/Sandbox serving GenAerial v1 at/);
    expect(h.stderrText()).toMatch(/GET \/api\/external\/v1\/image-generation 200/);
    expect(h.stderrText()).not.toContain(info.key);
  });

  it('prints url and key lines without --json, and a fixed --key', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const h = harness();
    const run = h.program.parseAsync(['node', 'aerial', 'sandbox', '--port', '0', '--data-dir', dir, '--key', 'sbx_my-own-sandbox-key', '-q']);
    expect(await h.firstLine()).toMatch(/^url: http:\/\/127\.0\.0\.1:\d+$/);
    h.shutdown.abort();
    await run;
    expect(h.stdoutText()).toMatch(/^url: http:\/\/127\.0\.0\.1:\d+\nkey: sbx_my-own-sandbox-key\n$/);
    expect(h.stderrText()).toBe('');
  });

  const badFlags: Array<[string[], RegExp]> = [
    [['--port', '70000'], /--port must be a whole number from 0 to 65535/],
    [['--port', 'http'], /--port must be a whole number/],
    [['--credits', '-1'], /--credits must be a whole number from 0/],
    [['--latency', 'slow'], /--latency must be a duration from 0s to 10m/],
    [['--latency', '500'], /--latency .*got '500': for milliseconds write 500ms, or for 500 seconds write 8m20s/],
    [['--latency', '11m'], /--latency must be a duration from 0s to 10m/],
    [['--fail-rate', '2'], /--fail-rate must be a number from 0 to 1/],
    [['--drop-rate', 'often'], /--drop-rate must be a number from 0 to 1/],
    [['--rate-limit', '0'], /--rate-limit must be a number of requests per second above 0/],
    [['--webhook-fail', '-3'], /--webhook-fail must be a whole number/],
    [['--seed', 'abc'], /--seed must be a whole number/],
    [['--key', 'short'], /--key must be 8 to 256/],
    [['--host', ' '], /--host must not be empty/],
  ];
  it.each(badFlags)('refuses %j with a UsageError naming the flag', async (flags, message) => {
    const h = harness();
    const run = h.program.parseAsync(['node', 'aerial', 'sandbox', '--port', '0', ...flags]);
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(message);
  });

  it('says so when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const dir = tempDataDir();
    dirs.push(dir);
    try {
      const h = harness();
      const port = String((blocker.address() as AddressInfo).port);
      await expect(h.program.parseAsync(['node', 'aerial', 'sandbox', '--port', port, '--data-dir', dir])).rejects.toThrow(
        new RegExp(`port ${port} on 127.0.0.1 is already in use`),
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
