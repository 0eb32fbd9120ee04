// `aerial whoami` in-process: the profile, the service and where the key comes
// from (never more of it than its last 4 characters), and the service's word
// on the key.
import { describe, expect, it } from 'vitest';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { runCommand } from '../../helpers/terminal.js';

describe('aerial whoami', () => {
  const fixture = useCommandsAgainstSandbox();
  const { cli } = fixture;
  /** Runs with `env` alone: no key, or a key the sandbox refuses. */
  const runWith = (args: string[], env: Record<string, string>) => runCommand(args, { configDir: fixture.home.path, env });

  it('--json names the profile, the base URL and the key\'s source, never the key', async () => {
    const result = await cli(['whoami', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: 'default',
      profileSource: 'default',
      baseUrl: fixture.sandbox.url,
      baseUrlSource: 'env',
      keySource: 'env',
      keyEnding: fixture.sandbox.key.slice(-4),
      accepted: true,
      images: 0,
      credits: null,
    });
    expect(result.stdout).not.toContain(fixture.sandbox.key.slice(0, -4));
  });

  it('says on a line each what it found, and that the API has no balance', async () => {
    const result = await cli(['whoami']);
    expect(result.stdout).toBe(
      [
        'profile  default (default)',
        `service  ${fixture.sandbox.url} (environment)`,
        `API key  from AERIAL_API_KEY, ending …${fixture.sandbox.key.slice(-4)}`,
        'check    ✔ accepted; 0 images in the history',
        'credits  not reported: the v1 API has no balance (a generation refused for credits exits 4)',
        '',
      ].join('\n'),
    );
  });

  it('a refused key: still said where it came from, exit 3', async () => {
    const result = await runWith(['whoami', '--json'], { AERIAL_BASE_URL: fixture.sandbox.url, AERIAL_API_KEY: 'not-the-right-key-1234' });
    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ keySource: 'env', keyEnding: '1234', accepted: false, images: null });
    expect(JSON.parse(result.stderr)).toMatchObject({ status: 401, exitCode: 3 });
  });

  it('no key: nothing sent, exit 3, and the profile and service still shown', async () => {
    fixture.sandbox.clearRequests();
    const result = await runWith(['whoami'], { AERIAL_BASE_URL: fixture.sandbox.url });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain('API key  none');
    expect(result.stderr).toMatch(/^error: no API key/);
    expect(fixture.sandbox.requests()).toEqual([]);
  });

  it('a short key shows none of itself', async () => {
    const result = await runWith(['whoami', '--json'], { AERIAL_BASE_URL: fixture.sandbox.url, AERIAL_API_KEY: 'short-k' });
    expect(JSON.parse(result.stdout).keyEnding).toBeNull();
  });
});
