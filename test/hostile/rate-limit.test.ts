// A 429 asking us to come back in a year. The client honours Retry-After but
// caps it (60 s by default, AERIAL_MAX_RETRY_AFTER for impatient CI and tests),
// retries three times, then exits 8. Proven three ways, none of which waits a
// minute: the whole CLI with a small cap, the whole CLI with the default cap
// interrupted once its trace shows the capped wait, and the client in-process
// with a recording sleep.
import { describe, expect, it } from 'vitest';
import { GenAerialClient } from '../../src/api/client.js';
import { ApiError } from '../../src/api/errors.js';
import { cliErrorOf, ExitCode } from '../../src/lifecycle/errors.js';
import { registerSecret, runCli, spawnCli, tempDir, assertNoSecrets } from '../helpers/cli.js';
import { answerJson, useHostileServerPerFile, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_ratelimit_77e0b2';
registerSecret(KEY);
const YEAR = 365 * 24 * 60 * 60;

let server: HostileServer;
let config: ReturnType<typeof tempDir>;
useHostileServerPerFile((started, dir) => {
  server = started;
  config = dir;
});

const slowDown = (retryAfter: string) =>
  answerJson(429, { status: 429, error: 'TooManyRequests', message: 'slow down' }, { 'retry-after': retryAfter });

describe('Retry-After of a year', () => {
  for (const [form, header] of [
    ['delta-seconds', String(YEAR)],
    ['an HTTP date', new Date(Date.now() + YEAR * 1000).toUTCString()],
  ] as const) {
    it(`as ${form}: capped by AERIAL_MAX_RETRY_AFTER, retried 3 times, then exit 8 in well under a second per wait`, async () => {
      server.respond(slowDown(header));
      const started = Date.now();
      const result = await runCli(['list', '--verbose'], {
        configDir: config.path,
        env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, AERIAL_MAX_RETRY_AFTER: '0.2' },
      });
      const elapsed = Date.now() - started;
      expect(result.exitCode).toBe(ExitCode.RateLimited);
      expect(server.requests).toHaveLength(4);
      // The waits really happened, and really were the capped ones.
      const gaps = server.requests.slice(1).map((r, i) => r.at - server.requests[i]!.at);
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(190);
        expect(gap).toBeLessThan(1500);
      }
      expect(elapsed).toBeLessThan(8000);
      const lines = result.stderr.split('\n').filter(Boolean);
      const retries = lines.filter((l) => /retrying in 0\.2s \(Retry-After \d+(\.\d+)?s capped at 0\.2s\)/.test(l));
      expect(retries, result.stderr).toHaveLength(3);
      expect(lines.at(-1)).toBe('error: TooManyRequests — slow down');
      // --verbose adds trace lines and nothing else: no headers, no key.
      expect(lines.slice(0, -1).every((l) => l.startsWith('→ GET '))).toBe(true);
      expect(result.stderr.toLowerCase()).not.toContain('x-api-key');
    });
  }

  it('with the default cap: the trace shows a 60 s wait, not a year, and Ctrl-C ends the wait at once (exit 130)', async () => {
    server.respond(slowDown(String(YEAR)));
    const child = spawnCli(['list', '--verbose'], {
      configDir: config.path,
      env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url },
    });
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no retry trace; stderr so far: ${stderr}`)), 10_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/retrying in/.test(stderr)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(stderr).toMatch(new RegExp(`retrying in 60\\.0s \\(Retry-After ${YEAR}s capped at 60s\\)`));
    const interruptedAt = Date.now();
    child.kill('SIGINT');
    const result = await child;
    expect(Date.now() - interruptedAt).toBeLessThan(3000);
    expect(result.exitCode).toBe(ExitCode.Interrupted);
    expect(server.requests).toHaveLength(1);
    assertNoSecrets(String(result.stderr) + String(result.stdout), 'interrupted list');
  });

  it('in-process with the default settings: every wait asked of the sleeper is exactly the 60 s cap', async () => {
    server.respond(slowDown(String(YEAR)));
    const waits: number[] = [];
    const client = new GenAerialClient({
      baseUrl: server.url,
      apiKey: KEY,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    try {
      const error = await client.list().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(cliErrorOf(error as ApiError).exitCode).toBe(ExitCode.RateLimited);
      expect(waits).toEqual([60_000, 60_000, 60_000]);
      expect(server.requests).toHaveLength(4);
    } finally {
      await client.close();
    }
  });
});
