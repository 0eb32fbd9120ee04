// The pure parts of the interactive flow: when to prompt, what is preselected,
// how a typed location is checked, and the flags that repeat the answers.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../../src/config/config.js';
import type { Context } from '../../../../src/cli/context.js';
import { equivalentFlags, mustPrompt, preselectedScene, shellWord, validateLocation } from '../../../../src/commands/shared/prompts.js';
import { TestTerminal } from '../../../helpers/terminal.js';

const builtIn = resolveSettings({}, {}, {}).sceneDefaults;
const withHighZoom = resolveSettings({}, {}, { profiles: { default: { defaults: { zoom: 'High' } } } }).sceneDefaults;

function context(tty: { stdin: boolean; stderr: boolean }, json = false): Promise<Context> {
  return new TestTerminal({ tty: { ...tty, stdout: false }, columns: 80 }).context({ json });
}

const person = await context({ stdin: true, stderr: true });

describe('mustPrompt', () => {
  it('prompts a person at a terminal when the location is missing or half given', () => {
    expect(mustPrompt(person, {}, false)).toBe(true);
    expect(mustPrompt(person, { lat: '1' }, false)).toBe(true);
    expect(mustPrompt(person, { lat: '1', lng: '' }, false)).toBe(true);
  });
  it('does not prompt when the location is given', () => {
    expect(mustPrompt(person, { lat: '1', lng: '2' }, false)).toBe(false);
    expect(mustPrompt(person, { at: '1,2' }, false)).toBe(false);
  });
  it('never prompts scripts: stdin or stderr not a terminal, or --json', async () => {
    expect(mustPrompt(await context({ stdin: false, stderr: true }), {}, false)).toBe(false);
    expect(mustPrompt(await context({ stdin: true, stderr: false }), {}, false)).toBe(false);
    expect(mustPrompt(await context({ stdin: true, stderr: true }, true), {}, false)).toBe(false);
  });
  it('--interactive always prompts, and refuses (exit 2) where nobody can answer', async () => {
    expect(mustPrompt(person, { lat: '1', lng: '2' }, true)).toBe(true);
    const script = await context({ stdin: false, stderr: true });
    const json = await context({ stdin: true, stderr: true }, true);
    expect(() => mustPrompt(script, {}, true)).toThrow(/--interactive needs a terminal .*not a terminal/);
    expect(() => mustPrompt(json, {}, true)).toThrow(/--json output is for scripts/);
  });
});

describe('preselectedScene', () => {
  it('takes flags (normalised) over configured defaults over built-ins', () => {
    const chosen = preselectedScene({ bearing: 'ne', weather: 'golden-hour' }, withHighZoom);
    expect(chosen).toMatchObject({ bearing: 'NorthEast', weather: 'GoldenHour', zoom: 'High', resolution: 'FHD' });
  });
  it('refuses a bad flag before any question is asked', () => {
    expect(() => preselectedScene({ zoom: 'Hihg' }, builtIn)).toThrow("--zoom must be one of ExtraLow, Low, Medium, High, ExtraHigh; got 'Hihg' (did you mean High?)");
  });
});

describe('validateLocation', () => {
  it('accepts the forms --at accepts', () => {
    for (const text of ['48.8584,2.2945', '48.8584, 2.2945', '-33.8568 151.2153', 'geo:40.6892,-74.0445;u=35']) expect(validateLocation(text)).toBe(true);
  });
  it('explains what is wrong, including a likely swap', () => {
    expect(validateLocation('151.2153,-33.8568')).toBe('latitude must be between -90 and 90; got 151.2153 (did you swap latitude and longitude?)');
    expect(validateLocation('10,190')).toBe('longitude must be between -180 and 180; got 190');
    expect(validateLocation('48.85')).toMatch(/^location must be "LAT,LNG" or a geo: URI/);
    // A name is looked up in the gazetteer: a known one passes, an ambiguous one lists its candidates.
    expect(validateLocation('paris')).toBe(true);
    expect(validateLocation('Springfield')).toMatch(/^location 'Springfield' names \d+ places: Springfield, Missouri, US/);
  });
});

describe('equivalentFlags', () => {
  it('repeats only what differs from the defaults in force, quoting what a shell would split', () => {
    const input = { at: '48.8584, 2.2945', zoom: 'High', bearing: 'North', resolution: 'HD' };
    expect(equivalentFlags(input, builtIn, 'my photos/eiffel.jpg')).toBe('--at "48.8584, 2.2945" --resolution HD --zoom High -o "my photos/eiffel.jpg"');
    expect(equivalentFlags(input, withHighZoom, 'eiffel.jpg')).toBe('--at "48.8584, 2.2945" --resolution HD -o eiffel.jpg');
  });

  it('repeats the switches, tags and prompt given with the questions too', () => {
    const input = { at: '1,2', includeContext: true, saveImage: false, tag: ['roofs', 'old town'], prompt: 'crisp' };
    expect(equivalentFlags(input, builtIn)).toBe('--at 1,2 --include-context --no-save-image --tag roofs --tag "old town" --prompt crisp');
  });

  it('leaves out a switch that only says what the config already says', () => {
    const configured = resolveSettings({}, {}, { profiles: { default: { defaults: { includeContext: true } } } }).sceneDefaults;
    expect(equivalentFlags({ at: '1,2', includeContext: true }, configured)).toBe('--at 1,2');
    expect(equivalentFlags({ at: '1,2', includeContext: false }, configured)).toBe('--at 1,2 --no-include-context');
  });

  it('quotes every word so that a real shell reads back exactly what was given', () => {
    const awkward = ['plain', 'two words', "it's", 'cost $HOME `id` "q" \\ !x', 'tab\there', '', '-o', 'ünïcödé ✓'];
    const input = { at: '48.8584, 2.2945', tag: awkward, prompt: awkward.join(' ') };
    const line = equivalentFlags(input, builtIn, "dir/it's $x.jpg");
    const words = execFileSync('sh', ['-c', `set -- ${line}; for word; do printf '%s\\0' "$word"; done`], { encoding: 'utf8' }).split('\0').slice(0, -1);
    expect(words).toEqual(['--at', '48.8584, 2.2945', ...awkward.flatMap((tag) => ['--tag', tag]), '--prompt', awkward.join(' '), '-o', "dir/it's $x.jpg"]);
    for (const word of awkward) expect(execFileSync('sh', ['-c', `printf '%s' ${shellWord(word)}`], { encoding: 'utf8' })).toBe(word);
  });
});
