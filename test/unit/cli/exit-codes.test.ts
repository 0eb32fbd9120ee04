// The exit code of each answer the service can give (docs/contract.md), and
// the output rules every command keeps (--verbose, colour), in-process
// against the sandbox fixture. The shell's view of an exit code is
// test/e2e/core.test.ts's (a refused key, spawned).
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { runCommand } from '../../helpers/terminal.js';

const fixture = useCommandsAgainstSandbox({ seed: 7 });
const { cli, apiRequests } = fixture;

describe('exit codes from the service', () => {
  it('4 when the account has too few credits, and nothing is written', async () => {
    const poor = await fixture.sandbox.createAccount({ credits: 1 });
    registerSecret(poor.key);
    const out = join(fixture.home.path, 'poor.jpg');
    const result = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'UHD', '-o', out], { env: { AERIAL_API_KEY: poor.key } });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(/InsufficientCredits/);
    expect(existsSync(out)).toBe(false);
    expect(await fixture.sandbox.credits(poor.key)).toBe(1);
  });

  it('5 when deleting an unknown id', async () => {
    const result = await cli(['delete', 'no-such-image', '--yes']);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/NotFound/);
  });

  it('6 when generation fails, leaving no file', async () => {
    fixture.sandbox.setFaults({ failRate: 1 });
    const out = join(fixture.home.path, 'failed.jpg');
    const result = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out]);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/ErrorGeneratingImage/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(fixture.home.path).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('7 when the service cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await cli(['list'], { env: { AERIAL_BASE_URL: `http://127.0.0.1:${port}` } });
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toMatch(new RegExp(`^error: could not connect to 127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED; 3 attempts in \\d+(\\.\\d)?s\\)\n$`));
  });

  it('8 when still rate limited after the retries', async () => {
    const limited = await fixture.sandbox.createAccount({ credits: 10 });
    registerSecret(limited.key);
    fixture.sandbox.setFaults({ rateLimit: 0.01 });
    const as = { env: { AERIAL_API_KEY: limited.key, AERIAL_MAX_RETRY_AFTER: '0.05' } };
    expect((await cli(['list', '--json'], as)).exitCode).toBe(0);
    const result = await cli(['list', '--json'], as);
    expect(result.exitCode).toBe(8);
    expect(JSON.parse(result.stderr.trim())).toMatchObject({ status: 429, exitCode: 8 });
    // The first answer and three retries, each refused.
    expect(apiRequests().filter((r) => r.status === 429)).toHaveLength(4);
  });

  it('2 for the service\'s own ValidationFailed', async () => {
    const result = await cli(['list', '--sort', 'colour,asc']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/ValidationFailed/);
  });

  it('2 for a refusal the contract does not list (418), never 1', async () => {
    const teapot: Server = createServer((_req, res) => res.writeHead(418, { 'content-type': 'text/plain' }).end("I'm a teapot"));
    await new Promise<void>((resolve) => teapot.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(teapot.address() as AddressInfo).port}`;
      const result = await cli(['list'], { env: { AERIAL_BASE_URL: url } });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/^error: Http418 — I'm a teapot\n$/);
    } finally {
      teapot.close();
    }
  });

  it('3 with no key at all, naming where to get one for the public service, and suggesting the sandbox', async () => {
    const dir = tempDir();
    try {
      // Nothing configured: the public service is the default, and it needs a key; nothing is sent.
      const noKey = await runCommand(['list'], { configDir: dir.path });
      // No key is an authentication failure (exit 3), as a refused key is.
      expect(noKey.exitCode).toBe(3);
      expect(noKey.stderr).toBe(
        "error: no API key (sign up at genaerial.com for one): set AERIAL_API_KEY, run 'aerial init' or 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox\n",
      );
      const noKeyHere = await runCommand(['list'], { configDir: dir.path, env: { AERIAL_BASE_URL: fixture.sandbox.url } });
      expect(noKeyHere.exitCode).toBe(3);
      expect(noKeyHere.stderr).toMatch(/^error: no API key: set AERIAL_API_KEY/);
    } finally {
      dir.remove();
    }
  });
});

describe('output rules', () => {
  it('traces requests with --verbose, never the key', async () => {
    const result = await cli(['list', '--verbose', '--json']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/→ GET http:\/\/127\.0\.0\.1:\d+\/api\/external\/v1\/image-generation 200 \d+ms/);
    expect(result.stderr).not.toContain(fixture.sandbox.defaultKey);
  });

  it('colours only when asked to off a terminal', async () => {
    const plain = await cli(['delete', 'x']);
    expect(plain.stderr).not.toMatch(/\u001b\[/);
    const forced = await cli(['delete', 'x'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stderr).toMatch(/\u001b\[31merror:/);
    const vetoed = await cli(['delete', 'x'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(vetoed.stderr).not.toMatch(/\u001b\[/);
  });
});
