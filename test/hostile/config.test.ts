// The config file against racing writers (processes) and a place an
// unprivileged user cannot write: every `config set` that says "Set" has
// stored its key, and an unwritable place is one clear line with exit 2.
// Broken and hostile files and profile names are tested in-process:
// test/unit/commands/config-files.test.ts.
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AS_UNPRIVILEGED_USER, BIN, cliEnv, runCli, spawnCli, tempDir } from '../helpers/cli.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-config-');
});
afterAll(() => home.remove());

function freshDir(name: string): string {
  const dir = join(home.path, name);
  mkdirSync(dir);
  return dir;
}

function config(dir: string, args: string[], env: Record<string, string> = {}) {
  return runCli(['config', ...args], { configDir: dir, env });
}

function stored(dir: string): { profiles: Record<string, { apiKey?: string; baseUrl?: string; defaults?: Record<string, unknown> }> } {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
}

/** Keys that can be set side by side, each with a value of its own. */
const KEYS: Array<[string, string, (profile: { baseUrl?: string; defaults?: Record<string, unknown> }) => unknown, unknown]> = [
  ['base-url', 'https://api.example.com', (p) => p.baseUrl, 'https://api.example.com'],
  ['defaults.zoom', 'High', (p) => p.defaults?.zoom, 'High'],
  ['defaults.bearing', 'ne', (p) => p.defaults?.bearing, 'NorthEast'],
  ['defaults.angle', 'Top', (p) => p.defaults?.angle, 'Top'],
  ['defaults.weather', 'Snow', (p) => p.defaults?.weather, 'Snow'],
  ['defaults.daytime', 'Night', (p) => p.defaults?.daytime, 'Night'],
  ['defaults.epoch', 'Ancient', (p) => p.defaults?.epoch, 'Ancient'],
  ['defaults.save-image', 'false', (p) => p.defaults?.saveImage, false],
];

describe('racing writers', () => {
  it('eight `config set` of different keys at once keep all eight, round after round', async () => {
    for (let round = 0; round < 4; round++) {
      const dir = freshDir(`race-${round}`);
      // Half the keys in the default profile, half in another: both kinds of merge race.
      const runs = KEYS.map(([key, value], i) => spawnCli(['config', 'set', key, value, ...(i % 2 ? ['--profile', 'work'] : [])], { configDir: dir }));
      const results = await Promise.all(runs);
      for (const result of results) {
        expect(result.exitCode, String(result.stderr)).toBe(0);
        expect(String(result.stderr)).toMatch(/^✔ Set /);
      }
      const file = stored(dir);
      KEYS.forEach(([key, , read, expected], i) => {
        expect(read(file.profiles[i % 2 ? 'work' : 'default']!), `round ${round}: ${key}`).toEqual(expected);
      });
      // No temp or lock file is left behind.
      expect(readdirSync(dir)).toEqual(['config.json']);
    }
  }, 60_000);

  it('takes over a lock left by a process that died', async () => {
    const dir = freshDir('stale-lock');
    writeFileSync(join(dir, 'config.json.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), token: 'dead' }));
    const result = await config(dir, ['set', 'defaults.zoom', 'Low']);
    expect(result.exitCode).toBe(0);
    expect(stored(dir).profiles.default!.defaults).toEqual({ zoom: 'Low' });
    expect(readdirSync(dir)).toEqual(['config.json']);
  });
});

describe('places the config cannot be written', () => {
  it('a config directory the user may not write (run as an unprivileged user): one line, exit 2, no "unexpected"', async () => {
    const dir = freshDir('read-only');
    chmodSync(home.path, 0o755);
    chmodSync(dir, 0o755);
    const result = await execa('setpriv', [...AS_UNPRIVILEGED_USER, process.execPath, BIN, 'config', 'set', 'defaults.zoom', 'High'], {
      env: cliEnv(dir),
      extendEnv: false,
      cwd: dir,
      reject: false,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^error: ConfigError — cannot write config file .*read-only\/config\.json: permission denied \(set AERIAL_CONFIG_DIR to a directory you can write\)$/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
