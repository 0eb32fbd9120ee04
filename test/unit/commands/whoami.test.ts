// `aerial whoami` in-process: the profile, the service and where the key comes
// from (never more of it than its last 4 characters), and the service's word
// on the key.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';
import { runInProcess, TestTerminal } from '../../helpers/terminal.js';

describe('aerial whoami', () => {
  let sandbox: TestSandbox;
  let home: ReturnType<typeof tempDir>;
  const run = (args: string[], env: Record<string, string> = {}) =>
    runInProcess(args, new TestTerminal({ env: { AERIAL_CONFIG_DIR: join(home.path, 'config'), ...env } }));

  beforeAll(async () => {
    home = tempDir();
    sandbox = await startTestSandbox();
    registerSecret(sandbox.key);
  });
  afterAll(async () => {
    await sandbox.close();
    home.remove();
  });

  it('--json names the profile, the base URL and the key\'s source, never the key', async () => {
    const result = await run(['whoami', '--json'], sandbox.env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: 'default',
      profileSource: 'default',
      baseUrl: sandbox.url,
      baseUrlSource: 'env',
      keySource: 'env',
      keyEnding: sandbox.key.slice(-4),
      accepted: true,
      images: 0,
      credits: null,
    });
    expect(result.stdout).not.toContain(sandbox.key.slice(0, -4));
  });

  it('says on a line each what it found, and that the API has no balance', async () => {
    const result = await run(['whoami'], sandbox.env());
    expect(result.stdout).toBe(
      [
        'profile  default (default)',
        `service  ${sandbox.url} (environment)`,
        `API key  from AERIAL_API_KEY, ending …${sandbox.key.slice(-4)}`,
        'check    ✔ accepted; 0 images in the history',
        'credits  not reported: the v1 API has no balance (a generation refused for credits exits 4)',
        '',
      ].join('\n'),
    );
  });

  it('a refused key: still said where it came from, exit 3', async () => {
    const result = await run(['whoami', '--json'], { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: 'not-the-right-key-1234' });
    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ keySource: 'env', keyEnding: '1234', accepted: false, images: null });
    expect(JSON.parse(result.stderr)).toMatchObject({ status: 401, exitCode: 3 });
  });

  it('no key: nothing sent, exit 3, and the profile and service still shown', async () => {
    sandbox.clearRequests();
    const result = await run(['whoami'], { AERIAL_BASE_URL: sandbox.url });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain('API key  none');
    expect(result.stderr).toMatch(/^error: no API key/);
    expect(sandbox.requests()).toEqual([]);
  });

  it('a short key shows none of itself', async () => {
    const result = await run(['whoami', '--json'], { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: 'short-k' });
    expect(JSON.parse(result.stdout).keyEnding).toBeNull();
  });
});
