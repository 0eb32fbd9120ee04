// Batch files that once exited 0 having done nothing, each tiny, given to
// `aerial batch` in-process against the sandbox: each is refused with exit 2
// in one line naming the file and the line, with nothing sent, with and
// without --dry-run, --json or --verbose. Files read right, stdin and
// `batch status` are test/e2e/batch-input.test.ts's (they write beside the
// working directory of a process of their own).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import { API_PATH, useSandboxPerTest, type TestSandbox } from '../../helpers/sandbox.js';
import { runCommand } from '../../helpers/terminal.js';

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

function cli(sandbox: TestSandbox, args: string[]) {
  return runCommand(['batch', '--concurrency', '1', ...args], { configDir: home.path, env: sandbox.env() });
}

function file(name: string, content: string | Buffer): string {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
}

function sent(sandbox: TestSandbox): unknown[] {
  return sandbox
    .requests()
    .filter((entry) => entry.method === 'POST' && entry.path === API_PATH)
    .map((entry) => entry.body);
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

describe('tiny batch files refused', () => {
  // The three files that once exited 0 having done nothing, each tiny.
  const tiny: Array<[string, string, RegExp]> = [
    [
      'places.csv',
      '\uFEFFlat;lng;zoom\r\n48,8584;2,2945;High\r\n51,5;-0,12;Low\r\n',
      /^error: .*places\.csv line 1: looks like a ';'-separated file with decimal commas: save it as CSV \(comma-delimited\) or pass --delimiter ';'$/,
    ],
    ['extra.csv', 'lat,lng\n48.85,2.29,High\n', /^error: .*extra\.csv line 2: 3 cells where the header row names 2 columns \(a value 'High' in column 3\)/],
    ['quote.csv', 'lat,lng,prompt\n48.85,2.29,5 "tall"\n', /^error: .*quote\.csv line 2: a quote inside a cell that is not quoted/],
    ['latin1.csv', 'lat,lng,prompt\n48.85,2.29,caf\u00e9\n', /^error: .*latin1\.csv line 2: not UTF-8 \(Windows-1252 or Latin-1\?\): re-save the file as UTF-8/],
    ['empty.csv', '', /^error: .*empty\.csv is empty: nothing to generate/],
    ['header.csv', 'lat,lng\r\n,\r\n', /^error: .*header\.csv has no rows under its header row: nothing to generate$/],
    ['zooom.csv', 'lat,lng,zooom\n48.85,2.29,High\n', /^error: .*zooom\.csv line 1: column 'zooom' sets no scene field; did you mean 'zoom'\?/],
    ['typo.jsonl', '{"lat":48.85,"lng":2.29}\n\n{"lat":48.85,"lng":2.3,"wheather":"Snow"}\n', /^error: .*typo\.jsonl line 3: key 'wheather' sets no scene field; did you mean 'weather'\?/],
  ];
  for (const [name, content, pattern] of tiny) {
    it(`refuses ${name} with exit 2 and nothing sent, with and without --dry-run, --json or --verbose`, async () => {
      const sandbox = await sandboxFor();
      const path = file(name, name === 'latin1.csv' ? Buffer.from(content, 'latin1') : content);
      for (const flags of [[], ['--dry-run'], ['--json'], ['--verbose', '--dry-run']]) {
        const result = await cli(sandbox, [path, ...CHEAP, ...flags]);
        // --json reports the error as JSON on stderr; the message is the same.
        if (flags.includes('--json')) {
          expect(result.exitCode, result.stderr).toBe(2);
          expect(JSON.parse(result.stderr.trim()).message).toMatch(new RegExp(pattern.source.replace('^error: ', '^')));
        } else if (flags.includes('--verbose')) {
          expect(result.exitCode).toBe(2);
          expect(result.stderr.trim().split('\n').pop()).toMatch(pattern);
        } else expectRefused(result, sandbox, pattern);
      }
      expect(sent(sandbox)).toEqual([]);
    });
  }
});

describe('lines named past a quoted cell that holds a line break', () => {
  // A Windows editor saves every line break as CRLF, those inside quoted cells too: each is one line, as between rows.
  for (const [end, name] of [
    ['\r\n', 'windows.csv'],
    ['\n', 'unix.csv'],
  ] as const) {
    it(`names the invalid row's own line (${JSON.stringify(end)}), and sends nothing`, async () => {
      const sandbox = await sandboxFor();
      const content = ['lat,lng,prompt', '48.85,2.29,"first', 'second"', '48.85,2.29,ok', '999,2.29,bad', ''].join(end);
      const result = await cli(sandbox, [file(name, content), ...CHEAP, '--dry-run']);
      expect(result.exitCode, result.stderr).toBe(2);
      expect(result.stdout).toContain("invalid  line 5 (row 3): column 'lat' must be between -90 and 90; got 999");
      expect(sent(sandbox)).toEqual([]);
    });
  }
});
