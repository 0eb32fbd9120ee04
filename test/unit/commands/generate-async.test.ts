// `aerial generate-async` in-process against the sandbox fixture: the
// acceptance record of --callback-url, and every flag refused with exit 2 in
// one line before anything is bound or sent. The listener catching callbacks,
// forged ones, tunnels and Ctrl-C: test/e2e/generate-async.test.ts.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { API_PATH } from '../../helpers/sandbox.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';

const SCENE = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD'];

const fixture = useCommandsAgainstSandbox({ homePrefix: 'aerial-async-' });
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(fixture.home.path, 'out-'));
});

function cli(args: string[]) {
  return fixture.cli(['generate-async', ...SCENE, ...args]);
}

function asyncRequests() {
  return fixture.apiRequests().filter((entry) => entry.path === `${API_PATH}/async`);
}

describe('generate-async --callback-url (no listener)', () => {
  it('sends the callback URL and prints exactly the acceptance record with --json', async () => {
    const result = await cli(['--callback-url', 'https://hooks.example.com/aerial', '--json']);
    expect(result.exitCode).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(Object.keys(record).sort()).toEqual(['requestId', 'status']);
    expect(record.status).toBe('processing');
    const [sent] = asyncRequests();
    expect(sent).toMatchObject({ status: 202, requestId: record.requestId, callbackUrl: 'https://hooks.example.com/aerial' });
  });

  it('refuses bad flags with exit 2 before sending anything', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /^error: generate-async needs --listen \(aerial waits for the result itself and saves the image\) or --callback-url <url>/],
      [['--callback-url', 'ftp://hooks.example.com/x'], /--callback-url must be an absolute http\(s\) URL/],
      [['--callback-url', 'not a url'], /--callback-url must be an absolute http\(s\) URL/],
      [['--callback-url', 'https://h.example/x', '--timeout', '5m'], /--timeout only applies with --listen/],
      [['--callback-url', 'https://h.example/x', '-o', join(dir, 'a.jpg')], /--output only applies with --listen/],
      [['--callback-url', 'https://h.example/x', '--public-url', 'https://t.example'], /--public-url only applies with --listen/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(asyncRequests()).toEqual([]);
  });
});

describe('generate-async --listen: refused input', () => {
  it('validates --timeout, --listen-port, --public-url and the output path before binding or sending', async () => {
    const existing = join(dir, 'taken.jpg');
    writeFileSync(existing, 'not overwritten');
    const cases: Array<[string[], RegExp]> = [
      [['--timeout', 'soon'], /--timeout must be a duration .*90s, 10m or 1h.*got 'soon'/],
      [['--timeout', '0'], /--timeout must be a duration/],
      [['--timeout', '25h'], /--timeout must be a duration from 1ms to 24h/],
      [['--timeout', '-5s'], /--timeout must be a duration/],
      [['--timeout', '30000'], /--timeout .*got '30000': for milliseconds write 30000ms, or for 30000 seconds write 8h20m/],
      [['--listen-port', '70000'], /--listen-port must be a port number from 0 to 65535/],
      [['--listen-port', 'http'], /--listen-port must be a port number/],
      [['--public-url', 'ftp://tunnel.example'], /--public-url must be an absolute http\(s\) URL/],
      [['--public-url', 'https://a.example', '--callback-url', 'https://b.example'], /--callback-url and --public-url mean the same/],
      [['--listen-host', '203.0.113.7'], /--listen-host 203\.0\.113\.7 is not an address of this machine/],
      [['-o', existing], /already exists; pass --force/],
      [['-o', '-'], /--output - is not supported/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(['--listen', ...args]);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(asyncRequests()).toEqual([]);
    expect(readFileSync(existing, 'utf8')).toBe('not overwritten');
    expect(readdirSync(dir)).toEqual(['taken.jpg']);
  });

  it('reports a --listen-port already in use with exit 2 and sends nothing', async () => {
    const blocker = createNetServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as AddressInfo).port)));
    try {
      const result = await cli(['--listen', '--listen-port', String(port), '-o', join(dir, 'x.jpg')]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(`--listen-port ${port} is already in use`);
      expect(asyncRequests()).toEqual([]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
