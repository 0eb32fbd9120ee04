// End-to-end: batches far past a demo's size, and batches that share an
// account's rate limit. `aerial batch` (bin/aerial.js) runs in a child
// process against a server that answers at once (bench/instant-server.mjs)
// or against a sandbox with its rate limit on (four shards against the
// limiters of docs/scale-out.md: test/e2e/rate-limits.test.ts).
import { appendFileSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallJpeg, startInstantServer, type InstantServer } from '../../bench/instant-server.mjs';
import { rowKey } from '../../src/batch/manifest.js';
import { runCli, runPiped, spawnCli, tempDir } from '../helpers/cli.js';
import { API_PATH, useSandboxPerTest, type TestSandbox } from '../helpers/sandbox.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-batch-scale-');
});
afterAll(() => { if (!process.env.KEEP) home.remove(); }, 120_000);

function workDir(name: string): string {
  const dir = join(home.path, name);
  mkdirSync(dir);
  return dir;
}

function writeCsv(dir: string, count: number): string {
  const path = join(dir, 'rows.csv');
  const lines = ['id,lat,lng'];
  for (let i = 0; i < count; i++) lines.push(`r${i + 1},${((i % 17_000) / 100 - 85).toFixed(2)},${(Math.floor(i / 17_000) / 100).toFixed(2)}`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

interface DryRow {
  row: number;
  valid: boolean;
  file: string;
  request: unknown;
}

describe('a batch far past 200,000 rows', () => {
  let server: InstantServer;
  beforeAll(async () => {
    server = await startInstantServer();
  });
  afterAll(() => server.close());

  it('plans every row, resumes over a long manifest and ends with exit 0 and a whole summary through a slow reader', async () => {
    const ROWS = Number(process.env.SCALE_ROWS ?? 250_000);
    const DONE_BEFORE = ROWS - 2_000;
    const dir = workDir('big');
    const csv = writeCsv(dir, ROWS);
    const env = { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'instant-key' };
    const args = ['batch', csv, '--output-template', 'out/{id}.jpg', '--json'];

    // The plan of every row: checked, named and priced, none sent.
    const dry = await runPiped([...args, '--dry-run'], { configDir: home.path, env, cwd: dir, timeout: 120_000 });
    expect(dry.stderr).toBe('');
    expect(dry.exitCode).toBe(0);
    const plan = JSON.parse(dry.stdout.toString()) as { total: number; valid: number; manifest: string; rows: DryRow[] };
    expect(plan).toMatchObject({ total: ROWS, valid: ROWS });
    expect(plan.rows).toHaveLength(ROWS);
    expect(plan.rows.every((row, i) => row.row === i + 1 && row.valid)).toBe(true);
    expect(server.answered()).toBe(0);

    // An earlier run did most rows: their files are there and the manifest says so. The files are
    // hard links to a few images: creating a quarter of a million inodes takes this disk minutes.
    const manifestDir = join(dir, 'out');
    mkdirSync(manifestDir);
    const image = smallJpeg();
    const sources = Array.from({ length: 5 }, (_, i) => join(dir, `image-${i}.jpg`));
    for (const source of sources) writeFileSync(source, image);
    let lines = '';
    for (const row of plan.rows.slice(0, DONE_BEFORE)) {
      linkSync(sources[row.row % sources.length]!, row.file);
      const file = relative(manifestDir, row.file);
      lines += `${JSON.stringify({ row: row.row, key: rowKey(row.request, file), status: 'done', file, bytes: image.length })}\n`;
      if (lines.length > 1 << 20) {
        appendFileSync(plan.manifest, lines);
        lines = '';
      }
    }
    appendFileSync(plan.manifest, lines);

    const run = await runPiped([...args, '--concurrency', '64'], { configDir: home.path, env, cwd: dir, timeout: 120_000, startAfterMs: 200, pauseMs: 1 });
    expect(run.stderr).toMatch(`${DONE_BEFORE} rows already done by an earlier run`);
    expect(run.exitCode).toBe(0);
    expect(server.answered()).toBe(ROWS - DONE_BEFORE);
    const summary = JSON.parse(run.stdout.toString()) as { total: number; succeeded: number; failed: number; skipped: number; requests: number; rateLimited: number; rows: Array<{ row: number; status: string; previously?: boolean }> };
    expect(summary).toMatchObject({ total: ROWS, succeeded: ROWS, failed: 0, skipped: 0, requests: ROWS - DONE_BEFORE, rateLimited: 0 });
    expect(summary.rows).toHaveLength(ROWS);
    expect(summary.rows.every((row, i) => row.row === i + 1 && row.status === 'done' && Boolean(row.previously) === i < DONE_BEFORE)).toBe(true);
    const recorded = readFileSync(plan.manifest, 'utf8').trimEnd().split('\n');
    expect(recorded.filter((line) => line.includes('"status":"done"'))).toHaveLength(ROWS);
  }, 240_000);

  it("takes the rows an earlier run finished from the manifest's record of their inputs, and plans any other row in full", async () => {
    const ROWS = 6_000;
    const dir = workDir('recall');
    const csv = writeCsv(dir, ROWS);
    const env = { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'instant-key' };
    const args = ['batch', csv, '--output-template', 'out/{id}.jpg', '--json', '--concurrency', '32'];
    server.reset();
    const first = await runCli(args, { configDir: home.path, env, cwd: dir, timeout: 120_000 });
    expect(first.exitCode).toBe(0);
    expect(server.answered()).toBe(ROWS);
    const manifest = join(dir, 'out', 'aerial-batch-manifest.jsonl');
    const done = readFileSync(manifest, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { status: string; input?: string }).filter((record) => record.status === 'done');
    expect(done).toHaveLength(ROWS);
    expect(done.every((record) => /^[0-9a-f]{32}$/.test(record.input ?? ''))).toBe(true);

    // Row 10's image is gone and row 3000's was replaced by another whole JPEG; one row is added.
    rmSync(join(dir, 'out', 'r10.jpg'));
    writeFileSync(join(dir, 'out', 'r3000.jpg'), Buffer.concat([smallJpeg().subarray(0, -2), Buffer.alloc(100), Buffer.from([0xff, 0xd9])]));
    appendFileSync(csv, 'r6001,10.00,10.00\n');
    server.reset();
    const resumed = await runCli([...args, '--verbose'], { configDir: home.path, env, cwd: dir, timeout: 120_000 });
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stderr).toMatch(`${ROWS - 1} rows taken as done from the manifest's record of their inputs`);
    expect(resumed.stderr).toMatch(`${ROWS - 1} rows already done by an earlier run`);
    expect(server.answered()).toBe(2);
    const summary = JSON.parse(resumed.stdout) as { succeeded: number; requests: number; rows: Array<{ row: number; status: string; previously?: boolean; bytes?: number }> };
    expect(summary).toMatchObject({ succeeded: ROWS + 1, requests: 2 });
    expect(summary.rows.filter((row) => !row.previously).map((row) => row.row)).toEqual([10, ROWS + 1]);
    expect(summary.rows[2999]).toMatchObject({ status: 'done', previously: true, bytes: smallJpeg().length + 100 });

    // Another flag (even one that leaves every request as it was) is another planning: every row is
    // planned in full, and found done by its key.
    server.reset();
    const replanned = await runCli([...args, '--verbose', '--zoom', 'Medium'], { configDir: home.path, env, cwd: dir, timeout: 120_000 });
    expect(replanned.exitCode).toBe(0);
    expect(replanned.stderr).not.toMatch('taken as done from the manifest');
    expect(replanned.stderr).toMatch(`${ROWS + 1} rows already done by an earlier run`);
    expect(server.answered()).toBe(0);
  }, 240_000);
});

const sandboxFor = useSandboxPerTest();

describe('batches sharing a rate limit', () => {
  function generationsOf(sandbox: TestSandbox) {
    return sandbox.requests().filter((entry) => entry.method === 'POST' && entry.path === API_PATH);
  }
  const batchArgs = (csv: string) => ['batch', csv, '--resolution', 'HD', '--aspect-ratio', 'Square', '--output-template', 'out/{id}.jpg'];

  it('counts the 429s met, in the summary and per row in the manifest, with the effective rate', async () => {
    const sandbox = await sandboxFor({ rateLimit: 4 });
    const dir = workDir('limited');
    const csv = writeCsv(dir, 16);
    const result = await runCli([...batchArgs(csv), '--concurrency', '8', '--retry-delay', '100ms', '--json'], { configDir: home.path, env: sandbox.env(), cwd: dir, timeout: 60_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const refused = generationsOf(sandbox).filter((entry) => entry.status === 429).length;
    expect(refused).toBeGreaterThan(0);
    const summary = JSON.parse(result.stdout) as { succeeded: number; requests: number; rateLimited: number; seconds: number; requestsPerSecond: number };
    expect(summary).toMatchObject({ succeeded: 16, rateLimited: refused, requests: generationsOf(sandbox).length });
    expect(summary.requestsPerSecond).toBeCloseTo(summary.requests / summary.seconds, 0);
    // Each row's "done" record counts the 429s its requests met: across the rows, all of them.
    const records = readFileSync(join(dir, 'out', 'aerial-batch-manifest.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { status: string; rateLimited?: number });
    const perRow = records.filter((record) => record.status === 'done').reduce((sum, record) => sum + (record.rateLimited ?? 0), 0);
    expect(perRow).toBe(refused);
    // The in-flight limit was cut: the human summary and the progress lines say so.
    const human = await runCli([...batchArgs(writeCsv(workDir('limited-human'), 12)), '--concurrency', '8', '--retry-delay', '100ms'], { configDir: home.path, env: sandbox.env(), cwd: join(home.path, 'limited-human'), timeout: 60_000 });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stderr).toMatch(/rate limited \(429\): pausing all requests for [\d.]+m?s; at most \d+ in flight from now on/);
    // A pause names the limit only when it changed since the last one named.
    const told = [...human.stderr.matchAll(/at most (\d+) in flight from now on/g)].map((match) => Number(match[1]));
    expect(told.every((limit, i) => i === 0 || limit !== told[i - 1])).toBe(true);
    expect(told[0]).toBeLessThan(8);
    // And the sending rate it was cut to, found from the rate it was sending at.
    expect(human.stderr).toMatch(/rate limited \(429\): pausing all requests for [\d.]+m?s;[^\n]*; sending at most [\d.]+\/[sm]\n/);
    expect(human.stderr).toMatch(/12 of 12 rows done \(12 generated\) in [\d.]+m?s; \d+ requests at [\d.]+\/s, \d+ rate limited \(429\)/);
  }, 90_000);

  it('--rate keeps two shards on one account under its limit: no 429, every row once', async () => {
    const sandbox = await sandboxFor({ rateLimit: 6 });
    const dir = workDir('paced');
    const csv = writeCsv(dir, 16);
    const started = Date.now();
    const shards = [1, 2].map((index) =>
      spawnCli([...batchArgs(csv), '--shard', `${index}/2`, '--rate', '2.5/s', '--concurrency', '8', '--json'], { configDir: home.path, env: sandbox.env(), cwd: dir, timeout: 60_000 }),
    );
    const results = await Promise.all(shards);
    const seconds = (Date.now() - started) / 1000;
    for (const result of results) expect(result.exitCode, String(result.stderr)).toBe(0);
    const generations = generationsOf(sandbox);
    expect(generations.filter((entry) => entry.status === 429)).toHaveLength(0);
    expect(generations).toHaveLength(16);
    for (const result of results) {
      const summary = JSON.parse(String(result.stdout)) as { succeeded: number; rateLimited: number; requestsPerSecond: number };
      expect(summary).toMatchObject({ succeeded: 8, rateLimited: 0 });
      // 8 requests at 2.5/s: the first at once, the others 0.4 s apart.
      expect(summary.requestsPerSecond).toBeLessThanOrEqual(2.8);
    }
    expect(seconds).toBeGreaterThanOrEqual(2.8);
  }, 90_000);

  it('refuses a --rate that is not <n>/s or <n>/m, naming the flag, before anything is sent', async () => {
    const sandbox = await sandboxFor();
    const dir = workDir('bad-rate');
    const csv = writeCsv(dir, 2);
    for (const rate of ['10', 'fast', '0/s', '-1/s', '5/h', '1e3/s', '']) {
      const result = await runCli([...batchArgs(csv), '--rate', rate], { configDir: home.path, env: sandbox.env(), cwd: dir });
      expect(result.exitCode, rate).toBe(2);
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines, rate).toHaveLength(1);
      expect(lines[0]).toMatch(/--rate must be requests per second or per minute, such as 10\/s or 600\/m/);
    }
    const bare = await runCli([...batchArgs(csv), '--rate', '10'], { configDir: home.path, env: sandbox.env(), cwd: dir });
    expect(bare.stderr).toMatch(/\(write 10\/s or 10\/m\)/);
    expect(generationsOf(sandbox)).toHaveLength(0);
  }, 60_000);
});
