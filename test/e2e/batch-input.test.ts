// End-to-end: batch files as spreadsheets and scripts write them, given to
// `aerial batch` (bin/aerial.js in a child process) against the sandbox. Each
// is read right (the sandbox's request log holds exactly the rows' requests)
// or refused with exit 2 in one line naming the file and the line, with
// nothing sent. Small files matter most: a reader that waited for parser
// events a small file had already fired once let such a batch exit 0 with
// nothing done (those tiny files are refused in-process:
// test/unit/commands/batch-input.test.ts).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { API_PATH, useSandboxPerTest, type TestSandbox } from '../helpers/sandbox.js';
import { dialectCase, render, withLatin1Byte } from '../helpers/batch-dialects.js';

let home: ReturnType<typeof tempDir>;
let work: string;

beforeAll(() => {
  home = tempDir('aerial-batch-input-');
});
afterAll(() => home.remove());
beforeEach(() => {
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

const sandboxFor = useSandboxPerTest();
const CHEAP = ['--resolution', 'HD', '--aspect-ratio', 'Square'];

function cli(sandbox: TestSandbox, args: string[], input?: string) {
  // One request at a time: the request log is then in row order.
  return runCli(['batch', '--concurrency', '1', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000, input });
}

function file(name: string, content: string | Buffer): string {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
}

function sent(sandbox: TestSandbox): Array<{ coordinates: { lat: number; lng: number }; zoom: string; prompt?: string }> {
  return sandbox
    .requests()
    .filter((entry) => entry.method === 'POST' && entry.path === API_PATH)
    .map((entry) => entry.body as { coordinates: { lat: number; lng: number }; zoom: string; prompt?: string });
}

/** A refusal: exit 2, one line on stderr naming the file (and the line), nothing sent, nothing written. */
function expectRefused(result: { exitCode: number; stdout: string; stderr: string }, sandbox: TestSandbox, pattern: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(sandbox.requests().filter((entry) => entry.path.startsWith(API_PATH))).toEqual([]);
}

describe('batch input as real programs write it', () => {
  it('reads a European export with --delimiter \';\' and an old Mac (CR) file, sending each row once', async () => {
    const sandbox = await sandboxFor();
    const european = file('eu.csv', '\uFEFFLatitude;Longitude;Zoom;;\r\n48,8584;2,2945;High;;\r\n;;;;\r\n51,5;-0,12;low;;\r\n');
    const result = await cli(sandbox, [european, ...CHEAP, '--delimiter', ';', '--output-template', 'eu/{row}.jpg']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(sent(sandbox).map((body) => [body.coordinates, body.zoom])).toEqual([
      [{ lat: 48.8584, lng: 2.2945 }, 'High'],
      [{ lat: 51.5, lng: -0.12 }, 'Low'],
    ]);

    const mac = file('mac.csv', 'lat,lng,prompt\r1,2,one\r3,4,"two\rlines"\r5,6,three\r');
    const dry = await cli(sandbox, [mac, ...CHEAP, '--dry-run', '--json', '--output-template', 'mac/{row}.jpg']);
    expect(JSON.parse(dry.stdout)).toMatchObject({ total: 3, valid: 3 });
    const run = await cli(sandbox, [mac, ...CHEAP, '--output-template', 'mac/{row}.jpg']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(sent(sandbox).slice(2).map((body) => body.prompt)).toEqual(['one', 'two\rlines', 'three']);
  });

  it('reads a pretty-printed JSON array from a .json file and from stdin', async () => {
    const sandbox = await sandboxFor();
    const array = JSON.stringify([{ latitude: 48.85, longitude: 2.29, prompt: 'Eiffel' }, { latitude: 51.5, longitude: -0.12 }], null, 2).replaceAll('\n', '\r\n');
    const fromFile = await cli(sandbox, [file('places.json', `\uFEFF${array}\r\n`), ...CHEAP, '--output-template', 'a/{row}.jpg']);
    expect(fromFile.exitCode, fromFile.stderr).toBe(0);
    const fromStdin = await cli(sandbox, ['-', ...CHEAP, '--output-template', 'b/{row}.jpg'], array);
    expect(fromStdin.exitCode, fromStdin.stderr).toBe(0);
    const expected = [
      { lat: 48.85, lng: 2.29 },
      { lat: 51.5, lng: -0.12 },
    ];
    expect(sent(sandbox).map((body) => body.coordinates)).toEqual([...expected, ...expected]);
    expect(sent(sandbox)[0]!.prompt).toBe('Eiffel');
  });

  it('names columns nothing uses in a warning, and refuses --delimiter where it means nothing', async () => {
    const sandbox = await sandboxFor();
    const path = file('notes.csv', 'id,lat,lng,notes\na,1,2,roof\n');
    const result = await cli(sandbox, [path, ...CHEAP, '--dry-run', '--output-template', 'n/{id}.jpg']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain("notes.csv: column 'notes' sets no scene field and --output-template does not use it: ignored");
    const json = await cli(sandbox, [file('p.jsonl', '{"lat":1,"lng":2}\n'), '--delimiter', ';', '--dry-run']);
    expectRefused(json, sandbox, /^error: --delimiter is for CSV files; .*p\.jsonl reads as JSON Lines$/);
    const bad = await cli(sandbox, [path, '--delimiter', 'x', '--dry-run']);
    expectRefused(bad, sandbox, /^error: --delimiter must be one of ',' ';' '\|' tab \(or comma, semicolon, pipe\); got 'x'$/);
  });

  it('batch status reads the batch file as batch does: --delimiter, and the same refusals', async () => {
    const sandbox = await sandboxFor();
    const path = file('eu.csv', 'lat;lng\n48,85;2,29\n');
    const ran = await cli(sandbox, [path, ...CHEAP, '--delimiter', 'semicolon']);
    expect(ran.exitCode, ran.stderr).toBe(0);
    const status = await runCli(['batch', 'status', path, ...CHEAP, '--delimiter', ';', '--json'], { configDir: home.path, env: sandbox.env(), cwd: work });
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: 1, done: 1 });
    // The manifest records the separator: status needs no --delimiter, and refuses another.
    const recorded = await runCli(['batch', 'status', path, '--json'], { configDir: home.path, env: sandbox.env(), cwd: work });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect(JSON.parse(recorded.stdout)).toMatchObject({ total: 1, done: 1 });
    const other = await runCli(['batch', 'status', path, '--delimiter', 'comma'], { configDir: home.path, env: sandbox.env(), cwd: work });
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toBe("error: --delimiter comma contradicts the manifests, whose shards ran with --delimiter ';'; leave it out: status plans the rows as the manifests record\n");
    // A manifest without the record (written before it existed) is read as the flags say, with batch's refusals.
    const manifest = join(work, 'aerial-batch', 'aerial-batch-manifest.jsonl');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/^\{"plan".*\n/m, ''));
    const refused = await runCli(['batch', 'status', path, ...CHEAP], { configDir: home.path, env: sandbox.env(), cwd: work });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/eu\.csv line 1: looks like a ';'-separated file with decimal commas/);
  });

  it('a generated corpus of dialects: each read right and sent exactly, or (spoilt with a Windows-1252 byte) refused naming the line, nothing sent', async () => {
    await fc.assert(
      fc.asyncProperty(dialectCase(4), fc.boolean(), fc.nat(), async ({ places, dialect }, spoil, pick) => {
        const sandbox = await sandboxFor();
        const rendered = render(places, dialect);
        const dir = `d${Math.random().toString(36).slice(2, 8)}`;
        const template = ['--output-template', `${dir}/{row}.jpg`];
        if (spoil) {
          const { bytes, line } = withLatin1Byte(rendered, pick % places.length);
          const path = file(`${dir}-${rendered.name}`, bytes);
          const result = await cli(sandbox, [path, ...CHEAP, ...rendered.flags, ...template]);
          expectRefused(result, sandbox, new RegExp(`^error: .*${dir}-places\\.jsonl? line ${line}: not UTF-8 |^error: .*${dir}-places\\.csv line ${line}: not UTF-8 `));
          return;
        }
        const path = file(`${dir}-${rendered.name}`, rendered.text);
        const result = await cli(sandbox, [path, ...CHEAP, ...rendered.flags, ...template]);
        expect(result.exitCode, result.stderr).toBe(0);
        expect(sent(sandbox).map((body) => [body.coordinates, body.zoom.toLowerCase(), body.prompt])).toEqual(
          places.map((p) => [{ lat: p.lat, lng: p.lng }, (p.zoom || 'Medium').toLowerCase(), p.prompt]),
        );
      }),
      { numRuns: 12 },
    );
  });
});
