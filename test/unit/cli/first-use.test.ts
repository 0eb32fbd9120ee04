// The first-five-minutes experience, in-process against the sandbox fixture:
// profiles and the layer each setting comes from, help examples that are real
// (they parse and validate), suggestions for typos, coordinates in every
// accepted form, and metadata in the saved JPEG. What needs the process
// (--version's fast path, the tagged JPEG on a pipe, signals) is
// test/e2e/ux.test.ts's.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import exifr from 'exifr';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/main.js';
import type { ActionFactory } from '../../../src/cli/context.js';
import { resolveSettings } from '../../../src/config/config.js';
import { buildGenerationRequest } from '../../../src/input/scene-request.js';
import { sceneInputFrom } from '../../../src/commands/shared/scene-options.js';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';
import { runCommand } from '../../helpers/terminal.js';

const fixture = useCommandsAgainstSandbox();
const { cli, apiRequests } = fixture;

describe('profiles', () => {
  let dir: ReturnType<typeof tempDir>;
  let workKey: string;
  const run = (args: string[], env: Record<string, string | undefined> = {}) => runCommand(args, { configDir: dir.path, env });

  beforeAll(async () => {
    dir = tempDir();
    workKey = (await fixture.sandbox.createAccount({ credits: 50 })).key;
    registerSecret(workKey);
    for (const [profile, key, zoom] of [
      ['default', fixture.sandbox.key, 'Low'],
      ['work', workKey, 'ExtraHigh'],
    ] as const) {
      for (const args of [
        ['config', 'set', 'base-url', fixture.sandbox.url],
        ['config', 'set', 'api-key', key],
        ['config', 'set', 'defaults.zoom', zoom],
      ]) {
        expect((await run([...args, '--profile', profile])).exitCode).toBe(0);
      }
    }
  });
  afterAll(() => dir.remove());

  /** Generates at latitude `lat` (which tells the runs apart in the request log) and returns what the sandbox received. */
  async function generatedWith(lat: number, args: string[], env: Record<string, string | undefined> = {}) {
    const result = await run(['generate', '--lat', String(lat), '--lng', '2', '--resolution', 'HD', '-o', '-', '--no-metadata', ...args], env);
    expect(result.exitCode, result.stderr).toBe(0);
    return () => apiRequests().find((r) => (r.body as { coordinates: { lat: number } }).coordinates.lat === lat)!;
  }

  it('--profile and AERIAL_PROFILE pick the account and defaults; the flag beats the environment', async () => {
    const [plain, work, viaEnv, flagWins] = (
      await Promise.all([
        generatedWith(1, []),
        generatedWith(2, ['--profile', 'work']),
        generatedWith(3, [], { AERIAL_PROFILE: 'work' }),
        generatedWith(4, ['--profile', 'default'], { AERIAL_PROFILE: 'work' }),
      ])
    ).map((sent) => sent());
    expect((plain.body as { zoom: string }).zoom).toBe('Low');
    expect((work.body as { zoom: string }).zoom).toBe('ExtraHigh');
    expect((viaEnv.body as { zoom: string }).zoom).toBe('ExtraHigh');
    expect((flagWins.body as { zoom: string }).zoom).toBe('Low');
    // Different accounts, not just different defaults.
    expect(work.keyId).not.toBe(plain.keyId);
    expect(viaEnv.keyId).toBe(work.keyId);
    expect(flagWins.keyId).toBe(plain.keyId);
  });

  it('config list shows each value with its layer: flag, env, profile, default', async () => {
    const result = await run(['config', 'list', '--json', '--api-key', 'flag-key-123456'], {
      AERIAL_PROFILE: 'work',
      AERIAL_BASE_URL: 'http://env.example',
    });
    registerSecret('flag-key-123456');
    expect(result.exitCode).toBe(0);
    const rows = JSON.parse(result.stdout);
    expect(rows.profile).toEqual({ value: 'work', source: 'env' });
    expect(rows['api-key'].source).toBe('flag');
    expect(rows['api-key'].value).not.toContain('flag-key');
    expect(rows['base-url']).toEqual({ value: 'http://env.example', source: 'env' });
    expect(rows['defaults.zoom']).toEqual({ value: 'ExtraHigh', source: 'profile' });
    expect(rows['defaults.epoch']).toEqual({ value: 'Nowadays', source: 'default' });

    const human = await run(['config', 'list', '--profile', 'work']);
    expect(human.stdout).toMatch(/^profile\s+work\s+\(flag\)$/m);
    expect(human.stdout).toMatch(/^defaults\.zoom\s+ExtraHigh\s+\(profile\)$/m);
    expect(human.stdout).toMatch(/^defaults\.angle\s+High\s+\(default\)$/m);
    expect(human.stderr).toContain('profiles: default, work');
  });

  it('an unknown profile is refused (exit 2) with the known ones listed, and nothing is sent', async () => {
    fixture.sandbox.clearRequests();
    const result = await run(['list', '--profile', 'wrok']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      "error: profile 'wrok' does not exist (profiles: default, work); create it with 'aerial config set api-key --profile wrok'\n",
    );
    expect(apiRequests()).toEqual([]);
  });
});

/** Splits a shell example into the argument lists of its `aerial` invocations. */
function aerialInvocations(line: string): string[][] {
  const segments: string[][] = [[]];
  let word: string | undefined;
  let quote: string | undefined;
  let skipNext = false;
  const endWord = () => {
    if (word !== undefined) {
      if (skipNext) skipNext = false;
      else segments[segments.length - 1]!.push(word);
    }
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word = (word ?? '') + c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === ' ') {
      endWord();
    } else if (c === '#' && word === undefined) {
      break;
    } else if (c === '|' || c === ';' || c === '&') {
      endWord();
      segments.push([]);
    } else if (c === '>' || c === '<') {
      endWord();
      skipNext = true; // the redirection target is not an argument
      if (line[i + 1] === c) i++;
    } else {
      word = (word ?? '') + c;
    }
  }
  endWord();
  return segments
    .map((words) => words.slice(Math.max(0, words.findIndex((w) => !/^[A-Z_]+=/.test(w))))) // drop VAR=value prefixes
    .filter((words) => words[0] === 'aerial')
    .map((words) => words.slice(1));
}

describe('help', () => {
  const topLevel = buildProgram().commands.map((c) => c.name());

  it('finds every command to check (guards against an empty loop)', () => {
    expect(topLevel).toEqual(expect.arrayContaining(['generate', 'generate-async', 'list', 'delete', 'init', 'config', 'completion', 'sandbox']));
  });

  // `help` shows the others' help; its own has nothing to exemplify.
  const withExamples = buildProgram().commands.map((c) => c.name()).filter((name) => name !== 'help');
  for (const name of ['(program)', ...withExamples]) {
    it(`${name} --help has 2–4 examples that parse and validate`, async () => {
      const args = name === '(program)' ? ['--help'] : [name, '--help'];
      const result = await cli(args);
      expect(result.exitCode).toBe(0);
      const section = result.stdout.split(/^Examples:\n/m)[1];
      expect(section, `${name} --help has no Examples section`).toBeDefined();
      const examples = section!
        .replace(/\\\n\s*/g, '') // a trailing backslash continues the example on the next line
        .split('\n')
        .filter((l) => l.startsWith('  $ '))
        .map((l) => l.slice(4));
      expect(examples.length).toBeGreaterThanOrEqual(2);
      expect(examples.length).toBeLessThanOrEqual(4);

      for (const example of examples) {
        for (const argv of aerialInvocations(example)) {
          let captured: { command: Command; options: Record<string, unknown> } | undefined;
          const capture: ActionFactory = () => async (...callArgs: unknown[]) => {
            const command = callArgs[callArgs.length - 1] as Command;
            captured = { command, options: command.optsWithGlobals() };
          };
          const program = buildProgram(capture, { writeOut: () => {}, writeErr: () => {} });
          await expect(program.parseAsync(argv, { from: 'user' }), `example: ${example}`).resolves.toBeDefined();
          expect(captured, `example runs no command: ${example}`).toBeDefined();
          // Scene examples must also pass the CLI's own validation (values, coordinates, tags).
          const opts = captured!.options;
          if (opts.lat !== undefined || opts.at !== undefined) {
            expect(() => buildGenerationRequest(sceneInputFrom(opts), resolveSettings({}, {}, {}).sceneDefaults), example).not.toThrow();
          }
        }
      }
    });
  }

  it('groups commands under headings', async () => {
    const { stdout } = await cli(['--help']);
    expect(stdout).toMatch(/^Images:\n {2}generate /m);
    expect(stdout).toMatch(/^Setup:\n {2}init /m);
    expect(stdout).not.toMatch(/^Commands:$/m);
  });

  it('suggests the nearest command and flag for a typo (exit 2)', async () => {
    const command = await cli(['generat', '--lat', '1']);
    expect(command.exitCode).toBe(2);
    expect(command.stderr).toBe("error: unknown command 'generat' (did you mean generate?); see 'aerial --help'\n");
    const option = await cli(['generate', '--zom', 'High']);
    expect(option.exitCode).toBe(2);
    expect(option.stderr).toBe("error: unknown option '--zom' (did you mean --zoom?); see 'aerial generate --help'\n");
    expect(apiRequests()).toEqual([]);
  });
});

describe('coordinates', () => {
  it('accepts --at "LAT,LNG", " LAT , LNG ", "LAT LNG" and geo: URIs with parameters', async () => {
    const forms = ['48.8584,2.2945', ' -33.8568 , 151.2153 ', '35.6586 139.7454', 'geo:40.6892,-74.0445;u=35', 'GEO:27.1751,78.0421,171'];
    const results = await Promise.all(forms.map((at) => cli(['generate', '--at', at, '--resolution', 'HD', '-o', '-', '--no-metadata'])));
    expect(results.map((r) => r.exitCode)).toEqual(forms.map(() => 0));
    const sent = apiRequests().map((r) => (r.body as { coordinates: { lat: number; lng: number } }).coordinates);
    expect(sent.sort((a, b) => a.lat - b.lat)).toEqual([
      { lat: -33.8568, lng: 151.2153 },
      { lat: 27.1751, lng: 78.0421 },
      { lat: 35.6586, lng: 139.7454 },
      { lat: 40.6892, lng: -74.0445 },
      { lat: 48.8584, lng: 2.2945 },
    ]);
  });

  const refusals: Array<[string, string[], string]> = [
    ['swapped --lat/--lng', ['--lat', '151.2153', '--lng', '-33.8568'], 'error: --lat must be between -90 and 90; got 151.2153 (did you swap --lat and --lng?)'],
    ['swapped --at', ['--at', '151.2153,-33.8568'], 'did you swap --at latitude and --at longitude?'],
    ['longitude out of range', ['--lat', '10', '--lng', '200'], 'error: --lng must be between -180 and 180; got 200'],
    ['not a number', ['--at', '48.85'], 'error: --at must be "LAT,LNG" or a geo: URI (geo:48.8584,2.2945)'],
    ['an unknown place', ['--at', 'Qwzxv'], "error: PlaceNotFound — --at 'Qwzxv': no such place among GeoNames' places of 1,000 people or more"],
    ['--at with --lat', ['--at', '1,2', '--lat', '1'], 'error: --at cannot be combined with --lat/--lng'],
  ];
  for (const [what, args, message] of refusals) {
    it(`refuses ${what}: exit 2, a message naming the flag, nothing sent`, async () => {
      const result = await cli(['generate', ...args, '-o', join(fixture.home.path, 'never.jpg')]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(apiRequests()).toEqual([]);
      expect(existsSync(join(fixture.home.path, 'never.jpg'))).toBe(false);
    });
  }
});

describe('metadata in saved images', () => {
  it('a saved file carries GPS and the AI-generated note; --no-metadata keeps the bytes as sent', async () => {
    const args = ['generate', '--lat', '40.6892', '--lng', '-74.0445', '--resolution', 'HD', '--bearing', 'W', '--tag', 'liberty', '--force'];
    const tagged = join(fixture.home.path, 'liberty.jpg');
    const raw = join(fixture.home.path, 'liberty-raw.jpg');
    const saved = await cli([...args, '-o', tagged, '--json']);
    expect(saved.exitCode).toBe(0);
    expect((await cli([...args, '-o', raw, '--no-metadata'])).exitCode).toBe(0);

    const taggedBytes = readFileSync(tagged);
    const rawBytes = readFileSync(raw);
    expect(JSON.parse(saved.stdout).bytes).toBe(taggedBytes.length); // the size on disk, metadata included
    const gps = await exifr.gps(taggedBytes);
    expect(gps.latitude).toBeCloseTo(40.6892, 6);
    expect(gps.longitude).toBeCloseTo(-74.0445, 6);
    const tags = await exifr.parse(taggedBytes, { tiff: true, xmp: true, gps: true } as never);
    expect(tags.ImageDescription).toMatch(/^AI-generated by GenAerial \(not a photograph\): lat=40\.6892 lng=-74\.0445 resolution=HD zoom=Medium bearing=West /);
    expect(tags.Software).toMatch(/^aerial \d+\.\d+\.\d+/);
    expect(tags.GPSImgDirection).toBe(270);
    expect(tags.DigitalSourceType).toBe('http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia');

    expect(await exifr.parse(rawBytes, { tiff: true, xmp: true, gps: true } as never)).toBeUndefined();
    // The sandbox draws the same request identically, so the pixels must match exactly.
    const a = jpeg.decode(taggedBytes, { useTArray: true });
    const b = jpeg.decode(rawBytes, { useTArray: true });
    expect(Buffer.from(a.data).equals(Buffer.from(b.data))).toBe(true);
    expect(taggedBytes.length).toBeGreaterThan(rawBytes.length);
  });
});
