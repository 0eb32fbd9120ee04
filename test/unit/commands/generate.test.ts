// `aerial generate` in-process against the sandbox fixture: what it prints
// (--json, --quiet), the files it will not replace, and every bad flag refused
// with exit 2, one line naming it, and nothing sent. The spawned smoke test
// and the JPEG on a pipe are in test/e2e/core.test.ts.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';

const fixture = useCommandsAgainstSandbox({ seed: 7 });
const { cli, apiRequests } = fixture;

describe('aerial generate', () => {
  it('prints {file, bytes, request} with --json', async () => {
    const out = join(fixture.home.path, 'json.jpg');
    const result = await cli(['generate', '--at', 'geo:40.6892,-74.0445', '--resolution', 'HD', '--tag', 'harbor', '-o', out, '--json']);
    expect(result.exitCode).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed.file).toBe(out);
    expect(printed.bytes).toBe(statSync(out).size);
    expect(printed.request.coordinates).toEqual({ lat: 40.6892, lng: -74.0445 });
    expect(printed.request.tags).toEqual(['harbor']);
  });

  it('refuses to overwrite without --force, before sending anything', async () => {
    const out = join(fixture.home.path, 'taken.jpg');
    writeFileSync(out, 'keep me');
    const refused = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/already exists; pass --force/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
    expect(apiRequests()).toHaveLength(0);

    const forced = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out, '--force']);
    expect(forced.exitCode).toBe(0);
    expect(readFileSync(out).subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
  });

  it('--quiet leaves only data', async () => {
    const out = join(fixture.home.path, 'quiet.jpg');
    const result = await cli(['generate', '--lat', '5', '--lng', '5', '--resolution', 'HD', '-o', out, '--quiet']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    expect(result.stderr).toBe('');
  });

  describe('bad input exits 2, names the flag and sends nothing', () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['missing lat', ['--lng', '2'], /--lat is required/],
      ['missing lng', ['--lat', '2'], /--lng is required/],
      ['lat out of range', ['--lat', '90.5', '--lng', '2'], /--lat must be between -90 and 90/],
      ['lng out of range', ['--lat', '1', '--lng', '-180.01'], /--lng must be between -180 and 180/],
      ['lat not a number', ['--lat', 'north', '--lng', '2'], /--lat must be a decimal number/],
      ['swapped coordinates', ['--lat', '-122.42', '--lng', '37.77'], /did you swap --lat and --lng/],
      ['resolution', ['--lat', '1', '--lng', '2', '--resolution', '4K'], /--resolution must be one of HD, FHD, UHD/],
      ['zoom', ['--lat', '1', '--lng', '2', '--zoom', 'Closer'], /--zoom must be one of ExtraLow, Low, Medium, High, ExtraHigh/],
      ['bearing typo', ['--lat', '1', '--lng', '2', '--bearing', 'NorthEats'], /--bearing must be one of .*did you mean NorthEast\?/],
      ['angle', ['--lat', '1', '--lng', '2', '--angle', 'Side'], /--angle must be one of Low, Medium, High, Top/],
      ['weather', ['--lat', '1', '--lng', '2', '--weather', 'Foggy'], /--weather must be one of/],
      ['daytime', ['--lat', '1', '--lng', '2', '--daytime', 'Noon'], /--daytime must be one of Dusk, Day, Dawn, Night/],
      ['aspect ratio', ['--lat', '1', '--lng', '2', '--aspect-ratio', 'Wide'], /--aspect-ratio must be one of Square, Landscape, Portrait, Standard/],
      ['epoch', ['--lat', '1', '--lng', '2', '--epoch', 'Future'], /--epoch must be one of Nowadays, Historical, Ancient/],
      ['eleven tags', ['--lat', '1', '--lng', '2', ...Array.from({ length: 11 }, (_, i) => ['--tag', `t${i}`]).flat()], /--tag may be given at most 10 times; got 11/],
      ['empty prompt', ['--lat', '1', '--lng', '2', '--prompt', ' '], /--prompt must not be empty/],
      ['bad --at', ['--at', '48.85'], /--at must be "LAT,LNG"/],
      ['ambiguous place', ['--at', 'Springfield'], /^error: AmbiguousPlace — --at 'Springfield' names \d+ places: Springfield, Missouri, US \(/],
      ['unknown flag', ['--lat', '1', '--lng', '2', '--zooom', 'High'], /unknown option '--zooom'/],
    ];
    it.each(cases)('%s', async (_name, args, message) => {
      const out = join(fixture.home.path, 'never.jpg');
      const result = await cli(['generate', ...args, '-o', out]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')[0]).toMatch(/^error: /);
      expect(result.stdout).toBe('');
      expect(existsSync(out)).toBe(false);
      expect(apiRequests()).toHaveLength(0);
    });

    it('reports the failure as one JSON line with --json', async () => {
      const result = await cli(['generate', '--lat', '1', '--lng', '2', '--zoom', 'Hihg', '--json']);
      expect(result.exitCode).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ status: null, error: 'UsageError', exitCode: 2 });
      expect(apiRequests()).toHaveLength(0);
    });
  });
});
