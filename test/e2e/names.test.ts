// File names made from hostile data, end to end: batch cells and export ids
// that are long in bytes, spell paths, carry escape codes or bidi overrides,
// or make one name from different values. Every job goes on, each input gets
// its own file (the same one on every run), and what can be known before
// paying (a name or path the system cannot take) is refused before sending.
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { utf8Length } from '../../src/files/file-names.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { answerJson, startHostileServer, tinyJpeg, type HostileServer } from '../helpers/hostile-server.js';
import { API_PATH, jpegInfo, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let work: string;
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
}, { homePrefix: 'aerial-names-' });
beforeEach(() => {
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

function batch(args: string[]) {
  return runCli(['batch', ...args, '--resolution', 'HD', '--aspect-ratio', 'Square'], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
}

function generations(): number {
  return sandbox.requests().filter((e) => e.method === 'POST' && e.path === API_PATH).length;
}

/** Cell values that break names: long in bytes, paths, controls, overrides, case twins, values that sanitise alike. */
const HOSTILE_NAMES = [
  'é'.repeat(200),
  `${'é'.repeat(200)}-other-ending`,
  '😀'.repeat(100),
  'a/b',
  'a_b',
  '..',
  '../../escape',
  '\u001b]0;pwned\u0007\u001b[2J',
  '\u202egpj.exe',
  'Paris',
  'paris',
  'line\nbreak',
];

describe('batch names from hostile cells', () => {
  it('gives every row its own safe file within 255 bytes, and a re-run finds them all', async () => {
    const lines = HOSTILE_NAMES.map((name, i) => JSON.stringify({ name, lat: 10 + i, lng: 20 }));
    const file = join(work, 'names.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const template = ['--output-template', 'out/{name}.jpg'];

    const first = await batch([file, ...template, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout) as { rows: Array<{ row: number; status: string; file: string }> };
    expect(summary.rows.map((r) => r.status)).toEqual(HOSTILE_NAMES.map(() => 'done'));
    const names = readdirSync(join(work, 'out')).filter((n) => n.endsWith('.jpg'));
    expect(names).toHaveLength(HOSTILE_NAMES.length);
    for (const name of names) {
      expect(utf8Length(name)).toBeLessThanOrEqual(255);
      expect(name).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
      expect(name.startsWith('.')).toBe(false);
      expect(jpegInfo(readFileSync(join(work, 'out', name)))).toMatchObject({ width: 720 });
    }
    // Nothing escaped out/: only the batch file and out/ are in the working directory.
    expect(readdirSync(work).sort()).toEqual(['names.jsonl', 'out']);
    // The value that needed no change keeps its name; the ones that made the same name carry a hash.
    expect(names).toContain('a_b.jpg');
    expect(names.filter((n) => /^paris~[0-9a-f]{10}\.jpg$/i.test(n))).toHaveLength(2);
    expect(readdirSync(join(work, 'out')).filter((n) => n.endsWith('.part'))).toEqual([]);

    const sent = generations();
    const again = await batch([file, ...template, '--json']);
    expect(again.exitCode).toBe(0);
    expect(generations()).toBe(sent);
    expect(JSON.parse(again.stdout).rows.map((r: { file: string }) => r.file)).toEqual(summary.rows.map((r) => r.file));
  });

  it('refuses, before sending anything, names and paths the system would refuse after paying', async () => {
    const file = join(work, 'one.jsonl');
    writeFileSync(file, `${JSON.stringify({ name: 'x'.repeat(250), lat: 1, lng: 2 })}\n`);
    const literal = await batch([file, '--output-template', `${'d'.repeat(256)}/{name}.jpg`]);
    expect(literal.exitCode).toBe(2);
    expect(literal.stderr).toMatch(/^error: --output-template: 'd+…' is longer than a file name may be \(255 bytes\)\n$/);

    // Seventeen directories of 250 bytes: each name fits, the whole path does not.
    const deep = await batch([file, '--output-template', `${'{name}/'.repeat(17)}{name}.jpg`]);
    expect(deep.exitCode).toBe(2);
    expect(deep.stderr).toMatch(/line 1 \(row 1\): its output path is longer than the system allows \(4095 bytes\).*nothing was sent/);
    expect(generations()).toBe(0);
  });

  it('refuses an output directory it cannot write into before sending (run as an unprivileged user)', async () => {
    const { execa } = await import('execa');
    const { AS_UNPRIVILEGED_USER, BIN, cliEnv } = await import('../helpers/cli.js');
    const locked = join(work, 'locked');
    mkdirSync(locked);
    chmodSync(work, 0o777);
    chmodSync(home.path, 0o777);
    chmodSync(locked, 0o555);
    const file = join(work, 'one.csv');
    writeFileSync(file, 'lat,lng\n1,2\n');
    const result = await execa('setpriv', [...AS_UNPRIVILEGED_USER, process.execPath, BIN, 'batch', file, '--output-template', 'locked/{row}.jpg'], {
      env: cliEnv(home.path, sandbox.env()),
      extendEnv: false,
      cwd: work,
      reject: false,
      timeout: 30_000,
    });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^error: --output-template: cannot create files in .*locked: permission denied$/);
    expect(generations()).toBe(0);
  });
});

describe('generate with a name of the full 255 bytes', () => {
  it('writes it: the temp file beside it gets a name that fits', async () => {
    const name = `${'é'.repeat(125)}.jpg`;
    expect(utf8Length(name)).toBe(254);
    const result = await runCli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', name], { configDir: home.path, env: sandbox.env(), cwd: work });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readdirSync(work)).toEqual([name]);
  });
});

describe('export names from hostile ids', () => {
  const KEY = 'sk_test_hostile_names_3b9e0f';
  registerSecret(KEY);
  let server: HostileServer;
  beforeAll(async () => {
    server = await startHostileServer();
  });
  afterAll(() => server.close());

  const IDS = ['a/b', 'a_b', '..', '.', 'ABC', 'abc', '日'.repeat(100), `${'日'.repeat(100)}2`, '\u202etxt.exe', 'plain-id'];

  it('exports every image to its own file, never stops on two ids making one name, and a re-run downloads nothing', async () => {
    const record = (id: string, i: number) => ({ id, url: `${server.url}/images/${i}.jpg`, coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2025-01-01T00:00:00Z' });
    server.respond((res, received) => {
      if (received.url.startsWith('/images/')) {
        const body = tinyJpeg();
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
        return;
      }
      answerJson(200, { content: IDS.map(record), totalElements: IDS.length, totalPages: 1, page: 0, size: 50 })(res, received, undefined as never);
    });
    const dir = join(work, 'backup');
    const env = { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url };
    const first = await runCli(['export', dir, '--json'], { configDir: home.path, env });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ total: IDS.length, succeeded: IDS.length, downloaded: IDS.length });
    const files = readdirSync(dir).filter((n) => n.endsWith('.jpg'));
    expect(files).toHaveLength(IDS.length);
    for (const name of files) {
      expect(utf8Length(name)).toBeLessThanOrEqual(255);
      expect(name).not.toMatch(/[/\\\u202a-\u202e]/);
    }
    expect(files).toContain('plain-id.jpg');
    expect(files).toContain('a_b.jpg');
    const index = readFileSync(join(dir, 'index.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; file: string });
    expect(index.map((r) => r.id).sort()).toEqual([...IDS].sort());
    expect(new Set(index.map((r) => r.file))).toEqual(new Set(files));

    server.reset();
    const again = await runCli(['export', dir, '--json'], { configDir: home.path, env });
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ existing: IDS.length, downloaded: 0 });
    expect(server.requests.filter((r) => r.url.startsWith('/images/'))).toEqual([]);
  });
});
