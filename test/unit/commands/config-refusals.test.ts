// Values `aerial config` and every command refuse where they are given,
// in-process: an empty profile name (--profile '', AERIAL_PROFILE=''), and an
// API key with characters no HTTP header can carry, from stdin, the command
// line, the environment or a hand-edited file; one line, exit 2, nothing saved
// or sent. The config file where users keep it (links, mounts, FIFOs, full
// disks) and the hidden prompt on a terminal are test/e2e/config-files.test.ts's.
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSecret, type CliResult } from '../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { runCommand } from '../../helpers/terminal.js';

const fixture = useCommandsAgainstSandbox();

let dirCount = 0;
function fresh(name: string): string {
  const dir = join(fixture.home.path, `${name}-${++dirCount}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function aerial(configDir: string, args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}) {
  return runCommand(args, { configDir, env: options.env, input: options.input });
}

function expectOneLine(result: CliResult, exitCode: number, message: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(exitCode);
  expect(result.stderr).not.toMatch(/unexpected/);
  expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(result.stderr).toMatch(message);
}

describe('profile names', () => {
  it("--profile '' and AERIAL_PROFILE='' are refused, not taken as the default profile", async () => {
    const configDir = fresh('empty-profile');
    writeFileSync(join(configDir, 'config.json'), '{"profiles":{"default":{"defaults":{"zoom":"Low"}}}}');
    const before = readFileSync(join(configDir, 'config.json'), 'utf8');
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['config', 'set', 'defaults.zoom', 'High', '--profile', ''], {}, /^error: --profile is empty; name a profile, or leave --profile out for the default one\n$/],
      [['config', 'set', 'defaults.zoom', 'High', '--profile='], {}, /--profile is empty/],
      [['config', 'get', 'defaults.zoom', '--profile', ''], {}, /--profile is empty/],
      [['list', '--profile', ''], fixture.sandbox.env(), /--profile is empty/],
      [['config', 'set', 'defaults.zoom', 'High'], { AERIAL_PROFILE: '' }, /^error: AERIAL_PROFILE is empty; name a profile, or unset AERIAL_PROFILE for the default one\n$/],
      [['list'], { ...fixture.sandbox.env(), AERIAL_PROFILE: '' }, /AERIAL_PROFILE is empty/],
    ];
    for (const [args, env, message] of cases) expectOneLine(await aerial(configDir, args, { env }), 2, message);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe(before);
    expect(fixture.sandbox.requests()).toEqual([]);
  });
});

describe('an API key with characters no HTTP header can carry', () => {
  // Two halves that would each give the key away: neither may appear in any output.
  const FRONT = 'Zq7Xk2Lp9';
  const BACK = 'Wm4Rt8Yn3Bv6';
  for (const secret of [FRONT, BACK]) registerSecret(secret);
  const BAD: Array<[name: string, codePoint: string, key: string, at: number]> = [
    ['a zero-width space', 'U+200B', `${FRONT}\u200b${BACK}`, 10],
    ['a typographic quote', 'U+201C', `\u201c${FRONT}${BACK}\u201d`, 1],
    ['a no-break space', 'U+00A0', `${FRONT}\u00a0${BACK}`, 10],
    ['a byte order mark \\(zero-width no-break space\\)', 'U+FEFF', `${FRONT}\ufeff${BACK}`, 10],
    ['a control character', 'U+0007', `${FRONT}\u0007${BACK}`, 10],
    ['a tab', 'U+0009', `${FRONT}\t${BACK}`, 10],
  ];

  it('is refused when it is set, from stdin or the command line, naming what was found; nothing is saved', async () => {
    const configDir = fresh('bad-keys');
    for (const [name, codePoint, key, at] of BAD) {
      const found = `${name} \\(${codePoint.replace('+', '\\+')}\\) at character ${at} of ${[...key].length}`;
      const message = new RegExp(`^error: api-key contains ${found}; a key is printable ASCII without spaces: paste it again without that\\n$`);
      expectOneLine(await aerial(configDir, ['config', 'set', 'api-key'], { input: `${key}\n` }), 2, message);
      expectOneLine(await aerial(configDir, ['config', 'set', 'api-key', key]), 2, message);
    }
    expect(readdirSync(configDir)).toEqual([]);
  }, 60_000);

  it('is refused from AERIAL_API_KEY, --api-key and a hand-edited config file, before anything is sent', async () => {
    const configDir = fresh('bad-keys-env');
    for (const [name, codePoint, key, at] of BAD.slice(0, 3)) {
      const found = `${name} \\(${codePoint.replace('+', '\\+')}\\) at character ${at} of ${[...key].length}`;
      expectOneLine(
        await aerial(configDir, ['list'], { env: { AERIAL_BASE_URL: fixture.sandbox.url, AERIAL_API_KEY: key } }),
        2,
        new RegExp(`^error: the API key in AERIAL_API_KEY contains ${found}; a key is printable ASCII without spaces: set it again without that\\n$`),
      );
      expectOneLine(
        await aerial(configDir, ['list', '--api-key', key], { env: { AERIAL_BASE_URL: fixture.sandbox.url } }),
        2,
        new RegExp(`^error: the API key in --api-key contains ${found}; a key is printable ASCII without spaces: pass it again without that\\n$`),
      );
    }
    // Edited by hand, and kept private (a file others can read would add its warning line).
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles: { work: { apiKey: BAD[0]![2], baseUrl: fixture.sandbox.url } } }));
    chmodSync(join(configDir, 'config.json'), 0o600);
    expectOneLine(
      await aerial(configDir, ['list', '--profile', 'work']),
      2,
      /^error: the API key in the config file \(profile work\) contains a zero-width space \(U\+200B\) at character 10 of 22; a key is printable ASCII without spaces: set it again with 'aerial config set api-key --profile work'\n$/,
    );
    expect(fixture.sandbox.requests()).toEqual([]);
  }, 60_000);
});
