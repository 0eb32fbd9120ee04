// `aerial sandbox` as a command, run in this process in a test terminal:
// flags are validated into usage errors (exit 2, one line naming the flag),
// the URL and key are printed as data, and it serves until a signal stops it.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../helpers/sandbox.js';
import { runInProcess, TestTerminal } from '../helpers/terminal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('aerial sandbox', () => {
  it('prints {url, port, key, dataDir} with --json, serves, and stops cleanly on SIGTERM (exit 130)', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const terminal = new TestTerminal();
    const run = runInProcess(['sandbox', '--port', '0', '--json', '--data-dir', dir, '--credits', '7'], terminal);
    const info = JSON.parse((await terminal.stdout.waitFor(/\n/)).split('\n')[0]!) as { url: string; port: number; key: string; dataDir: string };
    expect(info).toMatchObject({ url: `http://127.0.0.1:${info.port}`, dataDir: dir, key: expect.stringMatching(/^sbx_/) });
    expect(info.port).toBeGreaterThan(0);

    const res = await fetch(`${info.url}/__sandbox/accounts/${info.key}`);
    expect(await res.json()).toMatchObject({ credits: 7 });
    const listed = await fetch(`${info.url}/api/external/v1/image-generation`, { headers: { 'x-api-key': info.key } });
    expect(listed.status).toBe(200);
    await listed.arrayBuffer();

    terminal.kill('SIGTERM');
    const result = await run;
    expect(result.exitCode).toBe(130);
    await expect(fetch(info.url)).rejects.toThrow();
    expect(result.stderr).toMatch(/Sandbox serving GenAerial v1 at/);
    expect(result.stderr).toMatch(/GET \/api\/external\/v1\/image-generation 200/);
    expect(result.stderr).not.toContain(info.key);
  });

  it('prints url and key lines without --json, and a fixed --key', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const terminal = new TestTerminal();
    const run = runInProcess(['sandbox', '--port', '0', '--data-dir', dir, '--key', 'sbx_my-own-sandbox-key', '-q'], terminal);
    expect(await terminal.stdout.waitFor(/\n/)).toMatch(/^url: http:\/\/127\.0\.0\.1:\d+\n/);
    terminal.kill('SIGINT');
    const result = await run;
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toMatch(/^url: http:\/\/127\.0\.0\.1:\d+\nkey: sbx_my-own-sandbox-key\n$/);
    expect(result.stderr).toBe('');
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
  it.each(badFlags)('refuses %j with a usage error naming the flag (exit 2, one line)', async (flags, message) => {
    const result = await runInProcess(['sandbox', '--port', '0', ...flags]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^error: [^\n]*\n$/);
    expect(result.stdout).toBe('');
  });

  it('says so when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const dir = tempDataDir();
    dirs.push(dir);
    try {
      const port = String((blocker.address() as AddressInfo).port);
      const result = await runInProcess(['sandbox', '--port', port, '--data-dir', dir]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`port ${port} on 127.0.0.1 is already in use`));
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
