// `aerial config` in-process: set, get, list with sources, unset, per
// profile, the key read from stdin into a 0600 file, and the stored settings
// used by a plain command. The spawned smoke test is test/e2e/core.test.ts's.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { runCommand } from '../../helpers/terminal.js';

const fixture = useCommandsAgainstSandbox();

describe('aerial config', () => {
  it('sets, gets, lists with sources, and unsets values per profile', async () => {
    registerSecret(fixture.sandbox.defaultKey);
    const dir = tempDir();
    const run = (args: string[], extra: Record<string, string> = {}, input?: string) => runCommand(args, { configDir: dir.path, env: extra, input });
    try {
      expect((await run(['config', 'set', 'base-url', fixture.sandbox.url])).exitCode).toBe(0);
      expect((await run(['config', 'set', 'defaults.zoom', 'high'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'])).stdout).toBe('High\n');
      const keySet = await run(['config', 'set', 'api-key'], {}, `${fixture.sandbox.defaultKey}\n`);
      expect(keySet.exitCode).toBe(0);
      expect(keySet.stderr).toMatch(/Set api-key = sbx_/);

      const file = (await run(['config', 'path'])).stdout.trim();
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default.apiKey).toBe(fixture.sandbox.defaultKey);

      const listed = JSON.parse((await run(['config', 'list', '--json'], { AERIAL_BASE_URL: 'http://env.example' })).stdout);
      expect(listed['base-url']).toEqual({ value: 'http://env.example', source: 'env' });
      expect(listed['defaults.zoom']).toEqual({ value: 'High', source: 'profile' });
      expect(listed['defaults.weather']).toEqual({ value: 'Sunny', source: 'default' });
      expect(listed['api-key'].source).toBe('profile');

      // The stored settings are what a plain command uses.
      const generated = await run(['generate', '--lat', '3', '--lng', '4', '--resolution', 'HD', '-o', join(dir.path, 'cfg.jpg'), '--json']);
      expect(generated.exitCode).toBe(0);
      expect(JSON.parse(generated.stdout).request.zoom).toBe('High');

      expect((await run(['config', 'set', 'defaults.zoom', 'Low', '--profile', 'work'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'], { AERIAL_PROFILE: 'work' })).stdout).toBe('Low\n');
      expect((await run(['config', 'unset', 'defaults.zoom'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'])).stdout).toBe('Medium\n');
      const bad = await run(['config', 'set', 'defaults.zoom', 'Hihg']);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(/did you mean High\?/);
    } finally {
      dir.remove();
    }
  });
});
