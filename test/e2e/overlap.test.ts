// End-to-end: runs that overlap. Two `aerial batch` of one batch started
// together, or one started while the other's images are arriving; a lock left
// by a killed run, or by a run on another host; shards side by side; two
// exports into one directory; and an export while the history changes under
// it. Real processes (bin/aerial.js), real sockets, the sandbox's request log
// counting what was generated and downloaded.
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import { runCli, spawnCli, stderrSoFar, tempDir, until } from '../helpers/cli.js';
import { startHostileServer } from '../helpers/hostile-server.js';
import { API_PATH, generationRequest, jpegInfo, useSandboxPerTest, type TestSandbox } from '../helpers/sandbox.js';

let home: ReturnType<typeof tempDir>;
let work: string;

beforeAll(() => {
  home = tempDir('aerial-overlap-');
});
afterAll(() => home.remove());
beforeEach(() => {
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

const sandboxFor = useSandboxPerTest();

interface Row {
  id: string;
  lat: number;
  lng: number;
}

function rows(count: number): Row[] {
  return Array.from({ length: count }, (_, i) => ({ id: `p${i + 1}`, lat: 10 + i * 0.5, lng: 20 + i }));
}

function writeCsv(name: string, list: Row[]): string {
  const path = join(work, name);
  writeFileSync(path, `id,lat,lng\n${list.map((r) => `${r.id},${r.lat},${r.lng}`).join('\n')}\n`);
  return path;
}

const CHEAP = ['--resolution', 'HD', '--aspect-ratio', 'Square'];
const TEMPLATE = ['--output-template', 'out/{id}-{lat}_{lng}.jpg'];
const OUT = () => join(work, 'out');
const MANIFEST = () => join(OUT(), 'aerial-batch-manifest.jsonl');
const LOCK = () => `${MANIFEST()}.lock`;

function batch(sandbox: TestSandbox, args: string[]) {
  return runCli(['batch', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
}

function spawnBatch(sandbox: TestSandbox, args: string[]) {
  return spawnCli(['batch', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
}

function generations(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((e) => e.method === 'POST' && e.path === API_PATH);
}

/** Generation requests per row (by coordinates), whatever their answer. */
function generationsPerRow(sandbox: TestSandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of generations(sandbox)) {
    const { lat, lng } = (entry.body as { coordinates: { lat: number; lng: number } }).coordinates;
    counts.set(`${lat},${lng}`, (counts.get(`${lat},${lng}`) ?? 0) + 1);
  }
  return counts;
}

/** Each row generated exactly once, whatever ran. */
function expectEachRowSentOnce(sandbox: TestSandbox, list: Row[]): void {
  const perRow = generationsPerRow(sandbox);
  expect(perRow.size).toBe(list.length);
  expect([...perRow.values()].every((n) => n === 1)).toBe(true);
}

/** Every row has its whole 720×720 JPEG with its own location in its EXIF, and nothing else is in out/ but the manifest. */
async function expectEveryRowSaved(list: Row[]): Promise<void> {
  const expected = list.map((r) => `${r.id}-${r.lat}_${r.lng}.jpg`).sort();
  expect(readdirSync(OUT()).sort()).toEqual([...expected, 'aerial-batch-manifest.jsonl'].sort());
  for (const row of list) {
    const bytes = readFileSync(join(OUT(), `${row.id}-${row.lat}_${row.lng}.jpg`));
    expect(jpegInfo(bytes)).toMatchObject({ width: 720, height: 720 });
    const gps = await exifr.gps(bytes);
    expect(gps.latitude).toBeCloseTo(row.lat, 5);
  }
  const last = new Map<string, string>();
  for (const line of readFileSync(MANIFEST(), 'utf8').trim().split('\n')) {
    const record = JSON.parse(line) as { key?: string; status: string };
    // The plan record has no key.
    if (record.key !== undefined) last.set(record.key, record.status);
  }
  expect([...last.values()]).toEqual(Array(list.length).fill('done'));
}

/** The one line a refused run prints, and the pid it names. */
function refusal(stderr: string): { line: string; pid: number } {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  const match = /^error: AlreadyRunning — another (?:run of this batch|export into this directory) is under way: pid (\d+) /.exec(lines[0]!);
  expect(match, lines[0]).not.toBeNull();
  return { line: lines[0]!, pid: Number(match![1]) };
}

describe('batch runs that overlap', () => {
  it('two identical runs started together: one refuses before sending, naming the other; every row paid once; a re-run sends nothing', async () => {
    // Three rounds of a second: the run that lost is long refused before the other could end.
    const sandbox = await sandboxFor({ latencyMs: 1_000 });
    const list = rows(12);
    const args = [writeCsv('together.csv', list), ...CHEAP, ...TEMPLATE, '--concurrency', '4'];
    const children = [spawnBatch(sandbox, args), spawnBatch(sandbox, args)];
    const results = await Promise.all(children);
    const refused = results.findIndex((r) => r.exitCode === 2);
    expect(results.map((r) => r.exitCode).sort()).toEqual([0, 2]);
    expect(refusal(String(results[refused]!.stderr)).pid).toBe(children[1 - refused]!.pid);
    expect(String(results[refused]!.stderr)).toContain('out/aerial-batch-manifest.jsonl.lock. Pass --wait-for-lock to wait for it');
    expectEachRowSentOnce(sandbox, list);
    await expectEveryRowSaved(list);
    expect(existsSync(LOCK())).toBe(false);

    sandbox.clearRequests();
    const again = await batch(sandbox, args);
    expect(again.exitCode).toBe(0);
    expect(sandbox.requests()).toEqual([]);
  });

  it('two identical runs started together with --wait-for-lock: the second waits, then finds every row done', async () => {
    const sandbox = await sandboxFor({ latencyMs: 1_000 });
    const list = rows(12);
    const args = [writeCsv('waiting.csv', list), ...CHEAP, ...TEMPLATE, '--concurrency', '4', '--wait-for-lock'];
    const children = [spawnBatch(sandbox, args), spawnBatch(sandbox, args)];
    const results = await Promise.all(children);
    expect(results.map((r) => r.exitCode)).toEqual([0, 0]);
    const waited = results.findIndex((r) => String(r.stderr).includes('waiting: another run of this batch is under way'));
    expect(waited).not.toBe(-1);
    expect(String(results[waited]!.stderr)).toContain(`pid ${children[1 - waited]!.pid} (aerial batch waiting.csv)`);
    expect(String(results[waited]!.stderr)).toContain('12 rows already done by an earlier run');
    expectEachRowSentOnce(sandbox, list);
    await expectEveryRowSaved(list);
  });

  it('a second run started while the first has images arriving refuses at once, a third waits; the first loses nothing', async () => {
    const sandbox = await sandboxFor({ latencyMs: 1_500 });
    const list = rows(12);
    const args = [writeCsv('arriving.csv', list), ...CHEAP, ...TEMPLATE, '--concurrency', '4'];
    const first = spawnBatch(sandbox, args);
    await until(() => generations(sandbox).filter((e) => e.status === 200).length >= 4, 'the first images to arrive');

    const second = await batch(sandbox, args);
    expect(second.exitCode).toBe(2);
    expect(refusal(second.stderr).pid).toBe(first.pid);
    const third = spawnBatch(sandbox, [...args, '--wait-for-lock']);
    const thirdSaid = stderrSoFar(third);
    await until(() => thirdSaid().includes('waiting: another run of this batch'), 'the third run to wait');

    const done = await first;
    expect(done.exitCode).toBe(0);
    expect(String(done.stderr)).toContain('12 of 12 rows done (12 generated)');
    const waited = await third;
    expect(waited.exitCode).toBe(0);
    expect(String(waited.stderr)).toContain('12 rows already done by an earlier run');
    // Neither later run sent a row: every generation is the first run's, one per row.
    expectEachRowSentOnce(sandbox, list);
    await expectEveryRowSaved(list);
  });

  it('a lock left by a killed run is taken over at once; the re-run completes', async () => {
    const sandbox = await sandboxFor({ latencyMs: 400 });
    const list = rows(8);
    const args = [writeCsv('killed.csv', list), ...CHEAP, ...TEMPLATE, '--concurrency', '2'];
    const child = spawnBatch(sandbox, args);
    await until(() => generations(sandbox).filter((e) => e.status === 200).length >= 2, 'two images');
    child.kill('SIGKILL');
    await child;
    expect(JSON.parse(readFileSync(LOCK(), 'utf8'))).toMatchObject({ pid: child.pid, command: 'aerial batch killed.csv' });
    // Requests still waiting in the sandbox's latency when the client died finish now.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const started = Date.now();
    const again = await batch(sandbox, args);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain('AlreadyRunning');
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectEveryRowSaved(list);
    expect(existsSync(LOCK())).toBe(false);
  });

  it('a fresh lock of a run on another host is respected, with the host named; one not renewed for 2 minutes is taken over', async () => {
    const sandbox = await sandboxFor();
    const list = rows(3);
    const args = [writeCsv('shared.csv', list), ...CHEAP, ...TEMPLATE];
    mkdirSync(OUT());
    // What a run on another machine writes into a shared directory (a pid this machine cannot look at).
    writeFileSync(LOCK(), JSON.stringify({ pid: 4242, host: 'runner-7.example', token: 'theirs', since: new Date().toISOString(), command: 'aerial batch shared.csv' }));
    const refused = await batch(sandbox, args);
    expect(refused.exitCode).toBe(2);
    expect(refusal(refused.stderr).line).toMatch(/pid 4242 on runner-7\.example \(aerial batch shared\.csv\), since \d\d:\d\d:\d\d, last renewed \d+s ago \(taken over once not renewed for 2 minutes\)/);
    expect(sandbox.requests()).toEqual([]);

    const longAgo = new Date(Date.now() - 3 * 60_000);
    utimesSync(LOCK(), longAgo, longAgo);
    const taken = await batch(sandbox, args);
    expect(taken.exitCode).toBe(0);
    expectEachRowSentOnce(sandbox, list);
    expect(existsSync(LOCK())).toBe(false);
  });

  it('shards run side by side over one output directory, with their own manifests or one shared; a run whose rows meet a running shard\'s refuses', async () => {
    const sandbox = await sandboxFor({ latencyMs: 300 });
    const list = rows(12);
    const csv = writeCsv('shards.csv', list);
    // Shards 1/2 and 2/2 with their own manifests, and 1/3..3/3 on the shared default one: all at once.
    const own = [1, 2].map((k) => spawnBatch(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--shard', `${k}/2`, '--manifest', join(work, `shard-${k}.jsonl`)]));
    const results = await Promise.all(own);
    expect(results.map((r) => r.exitCode)).toEqual([0, 0]);
    expectEachRowSentOnce(sandbox, list);

    sandbox.clearRequests();
    const more = rows(12).map((r) => ({ ...r, id: `q${r.id}` }));
    const csv2 = writeCsv('shared-manifest.csv', more);
    sandbox.setFaults({ latencyMs: 1_000 });
    const shards = [1, 2, 3].map((k) => spawnBatch(sandbox, [csv2, ...CHEAP, ...TEMPLATE, '--shard', `${k}/3`, '--concurrency', '1']));
    await until(() => generations(sandbox).length >= 3, 'the three shards to send');
    // Shard 1/6 shares rows with shard 1/3 (rows 1, 7): refused while it runs. The whole batch too.
    const meets = await batch(sandbox, [csv2, ...CHEAP, ...TEMPLATE, '--shard', '1/6']);
    expect(meets.exitCode).toBe(2);
    expect(refusal(meets.stderr).line).toContain('(aerial batch shared-manifest.csv --shard 1/3)');
    const whole = await batch(sandbox, [csv2, ...CHEAP, ...TEMPLATE]);
    expect(whole.exitCode).toBe(2);
    expect((await Promise.all(shards)).map((r) => r.exitCode)).toEqual([0, 0, 0]);
    expectEachRowSentOnce(sandbox, more);
  });

  it('after runs that overlapped anyway (a lock misjudged abandoned on a shared directory), the same command finishes the batch without paying for any row again', async () => {
    const sandbox = await sandboxFor({ latencyMs: 600 });
    const list = rows(12);
    const args = [writeCsv('overlapped.csv', list), ...CHEAP, ...TEMPLATE, '--concurrency', '4'];
    const first = spawnBatch(sandbox, args);
    await until(() => existsSync(LOCK()) && generations(sandbox).length >= 4, 'the first run to send');
    // As if its host's clock or its shared volume made the lock look abandoned: a second run takes it over and overlaps.
    const lock = JSON.parse(readFileSync(LOCK(), 'utf8'));
    writeFileSync(LOCK(), JSON.stringify({ ...lock, host: 'elsewhere.example' }));
    const longAgo = new Date(Date.now() - 3 * 60_000);
    utimesSync(LOCK(), longAgo, longAgo);
    const second = spawnBatch(sandbox, args);
    const [, secondRun] = await Promise.all([first, second]);
    // It did run alongside: it took the lock over rather than refuse.
    expect(String(secondRun.stderr)).not.toContain('AlreadyRunning');
    expect(String(secondRun.stderr)).toMatch(/Generating \d+ images?/);
    const sentByBoth = generations(sandbox).length;

    sandbox.clearRequests();
    const rerun = await batch(sandbox, args);
    expect(rerun.exitCode).toBe(0);
    // Whatever the overlap cost, the re-run pays for nothing more: every row's image is on disk from one run or the other.
    expect(generations(sandbox)).toEqual([]);
    expect(sentByBoth).toBeGreaterThanOrEqual(12);
    await expectEveryRowSaved(list);
    // And --force does not pay again either: the images are this batch's own.
    const forced = await batch(sandbox, [...args, '--force']);
    expect(forced.exitCode).toBe(0);
    expect(generations(sandbox)).toEqual([]);
  });
});

/** Fills the account's history over the API (one scene: the sandbox renders it once); ids oldest first. */
async function generateImages(sandbox: TestSandbox, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await generateImage(sandbox));
  return ids;
}

async function generateImage(sandbox: TestSandbox): Promise<string> {
  const response = await fetch(sandbox.api(), {
    method: 'POST',
    headers: { 'x-api-key': sandbox.key, 'content-type': 'application/json' },
    body: JSON.stringify(generationRequest({ aspectRatio: 'Square' })),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response.headers.get('x-sandbox-image-id')!;
}

async function deleteImage(sandbox: TestSandbox, id: string): Promise<void> {
  const response = await fetch(`${sandbox.api()}/${id}`, { method: 'DELETE', headers: { 'x-api-key': sandbox.key } });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

/** The ids in the account now, read straight from the sandbox. */
async function idsInAccount(sandbox: TestSandbox): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 0; ; page++) {
    const response = await fetch(`${sandbox.api()}?page=${page}&size=100`, { headers: { 'x-api-key': sandbox.key } });
    const body = (await response.json()) as { content: Array<{ id: string }>; totalPages: number };
    ids.push(...body.content.map((image) => image.id));
    if (page + 1 >= body.totalPages) return ids;
  }
}

function imageDownloads(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((e) => e.path.startsWith('/__sandbox/images/') && e.status === 200);
}

function savedIds(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jpg'))
    .map((name) => name.slice(0, -4))
    .sort();
}

function indexedIds(dir: string): string[] {
  return readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { id: string }).id)
    .sort();
}

describe('exports that overlap', () => {
  it('two exports into one directory started together: one refuses, naming the other; every image downloaded once; with --wait-for-lock the second downloads nothing', async () => {
    const sandbox = await sandboxFor();
    const ids = await generateImages(sandbox, 30);
    sandbox.clearRequests();
    // Each listing takes over a second: the export that lost is long refused before the other could end.
    sandbox.setFaults({ latencyMs: 400 });
    const dir = join(work, 'backup');
    const args = ['export', dir, '--page-size', '10', '--concurrency', '2'];
    const children = [0, 1].map(() => spawnCli(args, { configDir: home.path, env: sandbox.env() }));
    const results = await Promise.all(children);
    const refused = results.findIndex((r) => r.exitCode === 2);
    expect(results.map((r) => r.exitCode).sort()).toEqual([0, 2]);
    expect(refusal(String(results[refused]!.stderr)).pid).toBe(children[1 - refused]!.pid);
    expect(savedIds(dir)).toEqual([...ids].sort());
    expect(indexedIds(dir)).toEqual([...ids].sort());
    expect(imageDownloads(sandbox)).toHaveLength(30);
    expect(readdirSync(dir).filter((name) => name.startsWith('.'))).toEqual([]);

    sandbox.clearRequests();
    const dir2 = join(work, 'backup2');
    const waiting = [0, 1].map(() => spawnCli(['export', dir2, '--page-size', '10', '--concurrency', '2', '--wait-for-lock'], { configDir: home.path, env: sandbox.env() }));
    const both = await Promise.all(waiting);
    expect(both.map((r) => r.exitCode)).toEqual([0, 0]);
    expect(both.some((r) => String(r.stderr).includes('waiting: another export into this directory is under way'))).toBe(true);
    expect(imageDownloads(sandbox)).toHaveLength(30);
    expect(new Set(imageDownloads(sandbox).map((e) => e.imageId)).size).toBe(30);
    expect(savedIds(dir2)).toEqual([...ids].sort());
  });

  /**
   * A sandbox behind a forwarder that, before passing on a list request,
   * lets `beforePage` change the history: a deletion made between two pages
   * of one walk shifts the later pages under it, for certain.
   */
  async function changingHistory(sandbox: TestSandbox, beforePage: (walk: number, page: number) => Promise<void>) {
    const forwarder = await startHostileServer();
    let walk = 0;
    forwarder.respond(async (res, received) => {
      const url = new URL(received.url, forwarder.url);
      if (received.method === 'GET' && url.pathname === API_PATH) {
        const page = Number(url.searchParams.get('page') ?? 0);
        if (page === 0) walk++;
        await beforePage(walk, page);
      }
      const upstream = await fetch(`${sandbox.url}${received.url}`, { method: received.method, headers: { 'x-api-key': String(received.headers['x-api-key']) } });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await upstream.arrayBuffer()));
    });
    return { forwarder, walks: () => walk };
  }

  it('an export while images are deleted and added between its pages fetches what the shifting listing passed over, and ends complete', async () => {
    const sandbox = await sandboxFor();
    const ids = await generateImages(sandbox, 60);
    const alive = [...ids];
    const added: string[] = [];
    // During the first walk, before each of pages 1 to 4: the oldest image is deleted (a page already
    // walked shifts, so one image slides past the walk unseen) and a new one is made.
    const changed = new Set<number>();
    const { forwarder, walks } = await changingHistory(sandbox, async (_walk, page) => {
      // The first request for each of these pages is the first walk's (or that of a re-listing it caused, made while it walks).
      if (page < 1 || page > 4 || changed.has(page)) return;
      changed.add(page);
      await deleteImage(sandbox, alive.shift()!);
      added.push(await generateImage(sandbox));
    });
    try {
      sandbox.clearRequests();
      const dir = join(work, 'changing');
      const result = await runCli(['export', dir, '--page-size', '10', '--json'], { configDir: home.path, env: { ...sandbox.env(), AERIAL_BASE_URL: forwarder.url } });
      expect(result.exitCode).toBe(0);
      const summary = JSON.parse(result.stdout);
      // The first walk passed over images; the check found and fetched them, and a second check confirmed the first.
      expect(summary.check.missed).toBeGreaterThanOrEqual(4);
      expect(summary.check.confirmed).toBe(true);
      expect(summary.check.listings).toBe(2);
      // The first walk and the two checks; and a re-listing if a deleted image's download was refused (downloads
      // run while the walk goes on, so an image may be saved before it is deleted).
      expect([3, 4]).toContain(walks());
      // Every image in the account at the end is saved and indexed; so are the ones deleted after being saved.
      const inAccount = await idsInAccount(sandbox);
      expect(inAccount.sort()).toEqual([...alive, ...added].sort());
      const saved = savedIds(dir);
      for (const id of inAccount) expect(saved).toContain(id);
      expect(indexedIds(dir)).toEqual(saved);
      // Each image downloaded once.
      expect(new Set(imageDownloads(sandbox).map((e) => e.imageId)).size).toBe(imageDownloads(sandbox).length);
    } finally {
      await forwarder.close();
    }
  });

  it('an export whose every listing meets a deletion says it cannot confirm the export whole, in one line, and exits 6', async () => {
    const sandbox = await sandboxFor();
    const ids = await generateImages(sandbox, 40);
    const alive = [...ids];
    const { forwarder, walks } = await changingHistory(sandbox, async (_walk, page) => {
      if (page === 1) await deleteImage(sandbox, alive.shift()!);
    });
    try {
      const dir = join(work, 'churning');
      const result = await runCli(['export', dir, '--page-size', '10'], { configDir: home.path, env: { ...sandbox.env(), AERIAL_BASE_URL: forwarder.url } });
      expect(result.exitCode).toBe(6);
      const last = result.stderr.trim().split('\n').pop()!;
      expect(last).toMatch(/^error: ExportUnconfirmed — images were deleted while each of 4 listings was walked, so one passed over by a shifting page cannot be ruled out \(every image the last listing showed is saved\); run the same command again once the history is quieter$/);
      // The first walk and three checks; and re-listings when a deleted image's download was refused (downloads run
      // while the walk goes on, so an image may be saved before it is deleted).
      expect(walks()).toBeGreaterThanOrEqual(4);
      // What it could do, it did: every image still in the account is saved and indexed.
      const saved = savedIds(dir);
      for (const id of await idsInAccount(sandbox)) expect(saved).toContain(id);
      expect(indexedIds(dir)).toEqual(saved);
    } finally {
      await forwarder.close();
    }
  });
});
