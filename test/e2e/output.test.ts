// End-to-end: output reaches its reader whole, however large and however slow
// the reader, and a reader that goes away (`| head`) ends the command quietly
// with 141. Real pipes, read as a slow reader reads them, against the sandbox.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, registerSecret, runPiped, tempDir, type PipeReader } from '../helpers/cli.js';
import { generationRequest, manualClock, startTestSandbox, tempDataDir, type TestSandbox } from '../helpers/sandbox.js';

const BROKEN_PIPE = 141;

let home: ReturnType<typeof tempDir>;
let sandbox: TestSandbox;
let dataDir: string;

/** A sandbox whose account holds `count` images: one generated, the rest copies of its record (listing reads records only). */
async function sandboxWithHistory(count: number): Promise<TestSandbox> {
  dataDir = tempDataDir();
  const seeding = await startTestSandbox({ dataDir, keepDataDir: true });
  const response = await fetch(seeding.api(), {
    method: 'POST',
    headers: { 'x-api-key': seeding.key, 'content-type': 'application/json' },
    body: JSON.stringify(generationRequest()),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  await seeding.close();
  const statePath = join(dataDir, 'state.json');
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as { images: Array<Record<string, unknown>>; nextSeq: number };
  const [image] = state.images;
  const start = Date.parse(image!.createdAt as string);
  state.images = Array.from({ length: count }, (_, i) => ({
    ...image,
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    seq: i + 1,
    createdAt: new Date(start + i * 1000).toISOString(),
  }));
  state.nextSeq = count + 1;
  writeFileSync(statePath, JSON.stringify(state));
  // A clock that stands still: the signed URLs of two listings are then the same bytes.
  const clock = manualClock(start + count * 1000);
  return startTestSandbox({ dataDir, keepDataDir: true, now: clock.now });
}

/** The same command with stdout into a file: what a reader must receive through a pipe too. */
async function intoFile(args: string[], name: string): Promise<Buffer> {
  const path = join(home.path, name);
  const result = await execa('node', [BIN, ...args], {
    env: cliEnv(home.path, sandbox.env()),
    extendEnv: false,
    cwd: home.path,
    stdin: 'ignore',
    stdout: { file: path },
    reject: false,
  });
  expect(result.exitCode, String(result.stderr)).toBe(0);
  return readFileSync(path);
}

beforeAll(async () => {
  home = tempDir('aerial-output-');
  sandbox = await sandboxWithHistory(2_500);
  registerSecret(sandbox.key);
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  home?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function piped(args: string[], reader: PipeReader = {}) {
  return runPiped(args, { configDir: home.path, env: sandbox.env(), cwd: home.path, ...reader });
}

describe('every byte reaches a slow reader', () => {
  it('list --all --json of 2,500 images (1 MB+) through a pipe read late and slowly equals the same output into a file', async () => {
    const args = ['list', '--all', '--json'];
    const expected = await intoFile(args, 'list.json');
    expect(expected.length).toBeGreaterThan(1_000_000);
    expect(JSON.parse(expected.toString()).content).toHaveLength(2_500);
    const result = await piped(args, { startAfterMs: 1_000, pauseMs: 2 });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(expected.length);
    expect(result.stdout.equals(expected)).toBe(true);
  });

  it('batch --dry-run --json of 4,000 rows (1 MB+) through a slow pipe equals the same output into a file', async () => {
    const rows = join(home.path, 'rows.csv');
    writeFileSync(rows, `lat,lng\n${Array.from({ length: 4_000 }, (_, i) => `${(i % 80) + 0.5},${(i % 170) + 0.25}`).join('\n')}\n`);
    const args = ['batch', rows, '--dry-run', '--json', '--output-template', join(home.path, 'o', '{row}.jpg')];
    const expected = await intoFile(args, 'dry-run.json');
    expect(expected.length).toBeGreaterThan(1_000_000);
    const result = await piped(args, { startAfterMs: 1_000, pauseMs: 2 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.equals(expected)).toBe(true);
    expect(sandbox.requests().filter((entry) => entry.method === 'POST')).toEqual([]);
  });
});

describe('a reader that goes away ends the command quietly with 141', () => {
  it('list --all --json | head: no error line', async () => {
    const result = await piped(['list', '--all', '--json'], { closeStdout: true });
    expect(result.stderr).toBe('');
    expect([result.exitCode, result.signal]).toEqual([BROKEN_PIPE, null]);
  });

  it('generate -o - | head -c 100: no error line, no temp file left', async () => {
    const dir = tempDir();
    // The shell's own `| head -c 100`: it reads its 100 bytes of the JPEG, then leaves. A city (Paris)
    // makes an image far larger than a pipe's buffer, so the writer is still writing when the reader goes.
    const result = await execa('bash', ['-c', `node "$BIN" generate --lat 48.8566 --lng 2.3522 --resolution HD -o - | head -c 100 | wc -c; exit "\${PIPESTATUS[0]}"`], {
      env: { ...cliEnv(home.path, sandbox.env()), BIN },
      extendEnv: false,
      cwd: dir.path,
      reject: false,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('100');
    expect(result.exitCode).toBe(BROKEN_PIPE);
    expect(readdirSync(dir.path)).toEqual([]);
    dir.remove();
  });

  it('the same when stderr\'s reader goes away (list --verbose traces every page there)', async () => {
    const result = await piped(['list', '--all', '--json', '--verbose'], { closeStderr: true, startAfterMs: 200 });
    expect([result.exitCode, result.signal]).toEqual([BROKEN_PIPE, null]);
  });

  it('--version and --help, answered without the CLI bundle, end the same way', async () => {
    for (const args of [['--version'], ['--help'], ['list', '--help']]) {
      const result = await piped(args, { closeStdout: true });
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.exitCode, args.join(' ')).toBe(BROKEN_PIPE);
    }
  });
});
