// In-process: config keys as people mistype them get the key they meant, and a
// profile that does not exist is refused by `config get` and `config list` as
// every other command refuses it (exit 2, the known profiles, how to create it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import { runCommand } from '../../helpers/terminal.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-config-keys-');
  writeFileSync(join(home.path, 'config.json'), JSON.stringify({ profiles: { default: { baseUrl: 'http://127.0.0.1:9' }, work: { defaults: { zoom: 'High' } } } }));
});
afterAll(() => home.remove());

const aerial = (args: string[]) => runCommand(args, { configDir: home.path });
const KEYS =
  'api-key, base-url, defaults.resolution, defaults.zoom, defaults.bearing, defaults.angle, defaults.weather, defaults.daytime, defaults.aspect-ratio, defaults.epoch, defaults.include-context, defaults.include-surroundings, defaults.improve-output, defaults.save-image, defaults.preview';

describe('an unknown config key', () => {
  const typos: Array<[string, string]> = [
    ['defaults.zooom', 'defaults.zoom'],
    ['zoom', 'defaults.zoom'],
    ['base-uri', 'base-url'],
    ['apikey-', 'api-key'],
    ['defaults.aspect', 'defaults.aspect-ratio'],
    ['defaults.savimage', 'defaults.save-image'],
    ['defaults.include', 'defaults.include-context or defaults.include-surroundings'],
  ];
  it.each(typos)("'%s' suggests %s, exit 2, for get, set and unset", async (typed, meant) => {
    for (const args of [['get', typed], ['set', typed, 'x'], ['unset', typed]]) {
      const result = await aerial(['config', ...args]);
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`error: unknown config key '${typed}' (did you mean ${meant}?); keys: ${KEYS}\n`);
    }
  });

  it('with nothing near it, lists the keys', async () => {
    const result = await aerial(['config', 'get', 'colour']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`error: unknown config key 'colour'; keys: ${KEYS}\n`);
  });
});

describe('config get and list with a profile that does not exist', () => {
  const refusal = "error: profile 'wrok' does not exist (profiles: default, work); create it with 'aerial config set api-key --profile wrok'\n";

  it('fail as every other command does: exit 2 and one line', async () => {
    const get = await aerial(['config', 'get', 'defaults.zoom', '--profile', 'wrok']);
    expect(get.exitCode).toBe(2);
    expect(get.stdout).toBe('');
    expect(get.stderr).toBe(refusal);
    const list = await aerial(['config', 'list', '--profile', 'wrok']);
    expect(list.exitCode).toBe(2);
    expect(list.stderr).toBe(refusal);
    // The same words as a command that would send a request.
    expect((await aerial(['list', '--profile', 'wrok'])).stderr).toBe(refusal);
    const json = await aerial(['config', 'get', 'defaults.zoom', '--profile', 'wrok', '--json']);
    expect(json.exitCode).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'UsageError', exitCode: 2, message: refusal.slice('error: '.length, -1) });
  });

  it('and an existing profile is read as before', async () => {
    const get = await aerial(['config', 'get', 'defaults.zoom', '--profile', 'work']);
    expect(get).toMatchObject({ exitCode: 0, stdout: 'High\n' });
  });
});
