// End-to-end: `aerial export` (bin/aerial.js in a child process) against
// sandboxes in this process, over real sockets: a whole history mirrored to
// disk, interrupted by SIGKILL and resumed, and expired URLs refreshed.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import { EXPORT_LOCK_NAME } from '../../src/batch/run-lock.js';
import { LEDGER_IDS_NAME, LEDGER_RECORDS_NAME } from '../../src/commands/export/ledger.js';
import { NAMES_NAME } from '../../src/commands/export/names.js';
import { SPOOL_NAME } from '../../src/commands/export/spool.js';
import { runCli, spawnCli, stderrSoFar, tempDir, until } from '../helpers/cli.js';
import { generationRequest, jpegInfo, manualClock, useSandboxPerTest, type TestSandbox } from '../helpers/sandbox.js';

let home: ReturnType<typeof tempDir>;

beforeAll(() => {
  home = tempDir('aerial-export-');
});
afterAll(() => home.remove());

const sandboxFor = useSandboxPerTest();

/** Fills the account's history over the API. One scene for all: the sandbox renders it once. */
async function generateImages(sandbox: TestSandbox, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(sandbox.api(), {
      method: 'POST',
      headers: { 'x-api-key': sandbox.key, 'content-type': 'application/json' },
      body: JSON.stringify(generationRequest({ aspectRatio: 'Square' })),
    });
    expect(response.status).toBe(200);
    ids.push(response.headers.get('x-sandbox-image-id')!);
    await response.arrayBuffer();
  }
  return ids;
}

function imageDownloads(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((e) => e.path.startsWith('/__sandbox/images/'));
}

function listRequests(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((e) => e.method === 'GET' && e.path.startsWith('/api/'));
}

function indexRecords(dir: string): Array<{ id: string; file: string; url: string }> {
  return readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/** What export writes beside the images: the index, the report with its thumbnails, the GeoJSON. */
const INDEX_FILES = ['index.jsonl', 'index.html', 'index.thumbnails', 'index.geojson'];

function expectWholeJpegs(dir: string, ids: string[]): void {
  const files = readdirSync(dir).filter((n) => !INDEX_FILES.includes(n));
  expect(files.sort()).toEqual(ids.map((id) => `${id}.jpg`).sort());
  for (const id of ids) {
    const bytes = readFileSync(join(dir, `${id}.jpg`));
    expect(jpegInfo(bytes)).toMatchObject({ width: 720, height: 720 });
    expect(bytes.subarray(-2)).toEqual(Buffer.from([0xff, 0xd9]));
  }
}

describe('export', () => {
  it('mirrors 45 images, survives SIGKILL halfway, and the resumed run ends with 45 files and 45 index records', async () => {
    let onEntry: (entry: RequestLogEntry) => void = () => {};
    const sandbox = await sandboxFor({ onRequest: (entry) => onEntry(entry) });
    const ids = await generateImages(sandbox, 45);
    const dir = join(home.path, 'backup');
    const args = ['export', dir, '--concurrency', '2', '--page-size', '10'];

    const child = spawnCli(args, { configDir: home.path, env: sandbox.env() });
    let served = 0;
    onEntry = (entry) => {
      if (entry.path.startsWith('/__sandbox/images/') && entry.status === 200 && ++served === 15) child.kill('SIGKILL');
    };
    const first = await child;
    onEntry = () => {};
    expect(first.signal).toBe('SIGKILL');
    const whole = readdirSync(dir).filter((n) => n.endsWith('.jpg'));
    expect(whole.length).toBeGreaterThanOrEqual(10);
    expect(whole.length).toBeLessThan(45);
    // Killed before the end: no index yet (it is written whole, at the end).
    expect(existsSync(join(dir, 'index.jsonl'))).toBe(false);
    // What the export keeps of each image listed is on disk beside them: the listing spool, the ledger's ids and
    // states (16 bytes an image listed), the names' hashes; a killed export leaves them for the next to replace.
    const scratch = [SPOOL_NAME, LEDGER_IDS_NAME, LEDGER_RECORDS_NAME, NAMES_NAME];
    expect(readdirSync(dir).filter((n) => n.startsWith('.aerial-export.') && n !== EXPORT_LOCK_NAME).sort()).toEqual([...scratch].sort());
    expect(statSync(join(dir, LEDGER_RECORDS_NAME)).size % 16).toBe(0);
    expect(statSync(join(dir, LEDGER_RECORDS_NAME)).size / 16).toBeGreaterThanOrEqual(whole.length);
    // What a kill in the middle of a download leaves (writeJpegAtomically's temp name).
    const missing = ids.find((id) => !whole.includes(`${id}.jpg`))!;
    writeFileSync(join(dir, `.${missing}.jpg.0123456789ab.part`), Buffer.alloc(10));

    sandbox.clearRequests();
    const second = await runCli([...args, '--json'], { configDir: home.path, env: sandbox.env() });
    expect(second.exitCode).toBe(0);
    const summary = JSON.parse(second.stdout);
    expect(summary).toMatchObject({ total: 45, succeeded: 45, failed: 0, downloaded: 45 - whole.length, existing: whole.length, indexed: 45 });
    expectWholeJpegs(dir, ids);
    // Only the images missing after the kill were downloaded again.
    expect(imageDownloads(sandbox)).toHaveLength(45 - whole.length);
    expect(new Set(imageDownloads(sandbox).map((e) => e.imageId)).size).toBe(45 - whole.length);
    // Every page was walked, then walked again by the check at the end.
    expect(listRequests(sandbox).map((e) => e.query.page)).toEqual(['0', '1', '2', '3', '4', '0', '1', '2', '3', '4']);
    expect(summary.check).toEqual({ listings: 1, missed: 0, confirmed: true });
    for (const name of scratch) expect(existsSync(join(dir, name))).toBe(false);
    const index = indexRecords(dir);
    expect(index).toHaveLength(45);
    expect(new Set(index.map((r) => r.id))).toEqual(new Set(ids));
    for (const record of index) expect(record.file).toBe(`${record.id}.jpg`);

    // A third run finds everything in place and downloads nothing; the index stays at 45.
    sandbox.clearRequests();
    const third = await runCli(args, { configDir: home.path, env: sandbox.env() });
    expect(third.exitCode).toBe(0);
    expect(imageDownloads(sandbox)).toEqual([]);
    expect(indexRecords(dir)).toHaveLength(45);
  });

  it('refuses a directory that runs through a file before asking the service for anything', async () => {
    const sandbox = await sandboxFor();
    const blocker = join(home.path, 'export-blocker');
    writeFileSync(blocker, 'a file');
    const result = await runCli(['export', join(blocker, 'backup')], { configDir: home.path, env: sandbox.env() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^error: export: cannot create directory .*export-blocker\/backup: a file is in the way, where a directory must be\n$/);
    expect(sandbox.requests()).toEqual([]);
  });

  it('refreshes expired URLs by listing again', async () => {
    const clock = manualClock();
    let expireOnce = true;
    const sandbox = await sandboxFor({
      now: clock.now,
      // Right after the first listing, three hours pass on the sandbox's clock: its URLs are dead.
      onRequest: (entry) => {
        if (expireOnce && entry.method === 'GET' && entry.path.startsWith('/api/')) {
          expireOnce = false;
          clock.advance(3 * 60 * 60 * 1000);
        }
      },
    });
    const ids = await generateImages(sandbox, 5);
    sandbox.clearRequests();
    const dir = join(home.path, 'refresh');
    const result = await runCli(['export', dir, '--concurrency', '2'], { configDir: home.path, env: sandbox.env() });
    expect(result.exitCode).toBe(0);
    expectWholeJpegs(dir, ids);
    expect(imageDownloads(sandbox).some((e) => e.status === 403)).toBe(true);
    expect(imageDownloads(sandbox).filter((e) => e.status === 200)).toHaveLength(5);
    // One listing at the start, one shared re-listing for all the expired URLs, and the check's at the end.
    expect(listRequests(sandbox)).toHaveLength(3);
  });

  it('replaces a damaged file, and keeps the records of images since deleted from the account', async () => {
    const sandbox = await sandboxFor();
    const ids = await generateImages(sandbox, 3);
    const dir = join(home.path, 'keep');
    expect((await runCli(['export', dir], { configDir: home.path, env: sandbox.env() })).exitCode).toBe(0);

    const [deleted, damaged] = ids;
    const removed = await fetch(`${sandbox.api()}/${deleted}`, { method: 'DELETE', headers: { 'x-api-key': sandbox.key } });
    expect(removed.status).toBe(200);
    writeFileSync(join(dir, `${damaged}.jpg`), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]));

    sandbox.clearRequests();
    const again = await runCli(['export', dir, '--json'], { configDir: home.path, env: sandbox.env() });
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ total: 2, downloaded: 1, existing: 1, indexed: 3 });
    expect(imageDownloads(sandbox).map((e) => e.imageId)).toEqual([damaged]);
    expectWholeJpegs(dir, ids);
    expect(new Set(indexRecords(dir).map((r) => r.id))).toEqual(new Set(ids));
  });
});

describe('export and signals', () => {
  /**
   * A proxy in front of the sandbox that holds each image download for
   * `delayMs` before passing it on, so downloads stay in flight long enough to
   * be interrupted. The sandbox signs URLs for the host it was asked through,
   * so the downloads come through here too.
   */
  async function slowDownloads(sandbox: TestSandbox, delayMs: number) {
    let held = 0;
    const server = createServer((req, res) => {
      const isImage = (req.url ?? '').startsWith('/__sandbox/images/');
      if (isImage) held++;
      setTimeout(
        () => {
          if (isImage) held--;
          if (res.destroyed) return; // the client left while it was held: the sandbox never hears of it
          const upstream = httpRequest(`${sandbox.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          });
          upstream.on('error', () => res.destroy());
          req.pipe(upstream);
        },
        isImage ? delayMs : 0,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      held: () => held,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} lets the downloads under way finish and be indexed; the re-run downloads only the rest, each image once`, async () => {
      const sandbox = await sandboxFor();
      const ids = await generateImages(sandbox, 8);
      const proxy = await slowDownloads(sandbox, 1_500);
      sandbox.clearRequests();
      const dir = join(home.path, `signal-${signal}`);
      const args = ['export', dir, '--concurrency', '2'];
      const env = { AERIAL_BASE_URL: proxy.url, AERIAL_API_KEY: sandbox.key };
      try {
        const child = spawnCli(args, { configDir: home.path, env });
        await until(() => proxy.held() === 2, 'two downloads under way');
        child.kill(signal);
        const first = await child;
        expect(first.exitCode).toBe(130);
        expect(first.stderr).toContain('finishing 2 downloads in flight (at most 30s)');
        expect(String(first.stderr).trim().split('\n').pop()).toBe('error: interrupted');
        // The two under way arrived whole and are indexed; nothing else was started.
        const kept = readdirSync(dir).filter((n) => n.endsWith('.jpg'));
        expect(kept).toHaveLength(2);
        expect(readdirSync(dir).filter((n) => n.endsWith('.part'))).toEqual([]);
        expect(indexRecords(dir).map((r) => r.file).sort()).toEqual(kept.sort());
        expect(imageDownloads(sandbox).map((e) => e.status)).toEqual([200, 200]);

        const second = await runCli(args, { configDir: home.path, env: sandbox.env() });
        expect(second.exitCode).toBe(0);
        expectWholeJpegs(dir, ids);
        // Across both runs, each image was downloaded exactly once.
        expect(imageDownloads(sandbox).map((e) => e.imageId).sort()).toEqual([...ids].sort());
      } finally {
        await proxy.close();
      }
    });
  }

  it('a second signal aborts the downloads at once, leaving no temp file', async () => {
    const sandbox = await sandboxFor();
    await generateImages(sandbox, 4);
    const proxy = await slowDownloads(sandbox, 5_000);
    const dir = join(home.path, 'signal-twice');
    try {
      const child = spawnCli(['export', dir, '--concurrency', '2'], { configDir: home.path, env: { AERIAL_BASE_URL: proxy.url, AERIAL_API_KEY: sandbox.key } });
      const stderr = stderrSoFar(child);
      await until(() => proxy.held() === 2, 'two downloads under way');
      child.kill('SIGTERM');
      await until(() => stderr().includes('finishing 2 downloads'), 'the notice');
      const abortedAt = Date.now();
      child.kill('SIGTERM');
      const first = await child;
      expect(first.exitCode).toBe(130);
      expect(Date.now() - abortedAt).toBeLessThan(2_000);
      // Interrupted: the index says what is there; no report was begun (it is written by an export that ends).
      expect(readdirSync(dir)).toEqual(['index.jsonl']);
    } finally {
      await proxy.close();
    }
  });
});
