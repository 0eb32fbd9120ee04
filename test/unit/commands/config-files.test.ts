// The config file when it is broken or hostile, in-process: a broken file is
// named and never replaced, __proto__ and constructor profiles are plain data,
// hostile profile names are refused naming the flag or variable, and a config
// directory that runs through a file is one line with exit 2. Racing writers
// (processes) and a directory an unprivileged user may not write are
// test/hostile/config.test.ts's.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/lifecycle/errors.js';
import { checkProfileName } from '../../../src/config/config.js';
import { tempDir } from '../../helpers/cli.js';
import { runCommand } from '../../helpers/terminal.js';

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
  return runCommand(['config', ...args], { configDir: dir, env });
}

function stored(dir: string): { profiles: Record<string, { apiKey?: string; baseUrl?: string; defaults?: Record<string, unknown> }> } {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
}

describe('broken and hostile config files', () => {
  const BROKEN: Array<[string, string, RegExp]> = [
    ['not JSON', '{"profiles": {', /config file .*config\.json is not valid JSON \(.+\); fix or delete it/],
    ['a list', '[]', /config file .*config\.json: the top level must be an object/],
    ['a key of the wrong type', '{"profiles":{"default":{"apiKey":5}}}', /config file .*config\.json: profiles\.default\.apiKey must be a string/],
    ['a default of the wrong type', '{"profiles":{"default":{"defaults":{"saveImage":"yes"}}}}', /profiles\.default\.defaults\.saveImage must be a boolean/],
  ];
  for (const [what, text, message] of BROKEN) {
    it(`${what}: config set, unset and list fail naming the file and the problem, and leave it byte for byte`, async () => {
      const dir = freshDir(`broken-${what.replace(/\W+/g, '-')}`);
      writeFileSync(join(dir, 'config.json'), text);
      for (const args of [['set', 'defaults.zoom', 'High'], ['unset', 'defaults.zoom'], ['list']]) {
        const result = await config(dir, args);
        expect(result.exitCode, args.join(' ')).toBe(2);
        expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
        expect(result.stderr).toMatch(message);
      }
      expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(text);
      expect(readdirSync(dir)).toEqual(['config.json']);
    });
  }

  it('a file with __proto__ and constructor profiles is read as plain data, and setting a key keeps them', async () => {
    const dir = freshDir('proto-file');
    const text = '{"profiles":{"__proto__":{"apiKey":"x"},"constructor":{"baseUrl":"https://c.example"},"default":{}}}';
    writeFileSync(join(dir, 'config.json'), text);
    const set = await config(dir, ['set', 'defaults.zoom', 'High']);
    expect(set.exitCode).toBe(0);
    const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(Object.keys(file.profiles).sort()).toEqual(['__proto__', 'constructor', 'default']);
    expect(file.profiles.default).toEqual({ defaults: { zoom: 'High' } });
  });
});

describe('profile names', () => {
  const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'a/b', '../x', '..', '.', 'a.b', 'a b', '-x', 'x\u001b[2J', 'é', 'x'.repeat(65)];

  it('are refused with exit 2 naming the flag or variable, and nothing is written', async () => {
    const dir = freshDir('names');
    for (const name of HOSTILE) {
      for (const [args, env, label] of [
        [['set', 'defaults.zoom', 'High', '--profile', name], {}, '--profile'],
        [['set', 'defaults.zoom', 'High'], { AERIAL_PROFILE: name }, 'AERIAL_PROFILE'],
      ] as const) {
        const result = await config(dir, [...args], env);
        expect(result.exitCode, name).toBe(2);
        expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
        expect(result.stderr).toContain(label);
      }
    }
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    // The other commands read the same rule.
    const list = await runCommand(['list'], { configDir: dir, env: { AERIAL_PROFILE: 'constructor' } });
    expect(list.exitCode).toBe(2);
    expect(list.stderr).toMatch(/AERIAL_PROFILE 'constructor' is reserved/);
  }, 60_000);

  it('a valid name is stored under exactly that name (generated names)', async () => {
    const dir = freshDir('good-names');
    const names = fc.sample(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/).filter((n) => !['constructor', 'toString', 'valueOf', 'prototype'].includes(n)), { numRuns: 6, seed: 14 });
    for (const name of names) {
      const result = await config(dir, ['set', 'defaults.zoom', 'Low', '--profile', name]);
      expect(result.exitCode, name).toBe(0);
      expect(stored(dir).profiles[name]).toEqual({ defaults: { zoom: 'Low' } });
    }
  });

  it('the rule accepts exactly letters, digits, - and _, starting with a letter or digit, and no object internals (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 70 }), fc.constantFrom('__proto__', 'constructor', 'valueOf', 'work', 'ci-2', 'A_b')), (name) => {
        let error: unknown;
        try {
          checkProfileName(name, '--profile');
        } catch (caught) {
          error = caught;
        }
        const expected = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name) && !(name in Object.prototype) && name !== 'prototype';
        expect(error === undefined).toBe(expected);
        if (error) expect((error as { exitCode: number }).exitCode).toBe(ExitCode.Usage);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('places the config cannot be written', () => {
  it('a config directory that runs through a file: one line, exit 2', async () => {
    const blocker = join(home.path, 'blocker');
    writeFileSync(blocker, 'a file');
    const result = await runCommand(['config', 'set', 'defaults.zoom', 'High'], { configDir: join(blocker, 'aerial') });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^error: ConfigError — cannot write config file .*blocker\/aerial\/config\.json: a file is in the way, where a directory must be \(set AERIAL_CONFIG_DIR to a directory you can write\)\n$/);
  });
});
