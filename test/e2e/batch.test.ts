// End-to-end: `aerial batch` (bin/aerial.js in a child process) against
// sandboxes in this process, over real sockets, with the fault knobs on.
// Rows are told apart by their coordinates: the request log shows what the
// service generated for which row, and each saved file's GPS EXIF (written by
// the CLI from its row's request) shows which row it belongs to.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import { registerSecret, runCli, spawnCli, stderrSoFar, tempDir, until } from '../helpers/cli.js';
import { API_PATH, jpegInfo, useSandboxPerTest, type TestSandbox } from '../helpers/sandbox.js';

interface Row {
  id: string;
  lat: number;
  lng: number;
}

let home: ReturnType<typeof tempDir>;
let work: string;

beforeAll(() => {
  home = tempDir('aerial-batch-');
});
afterAll(() => home.remove());
beforeEach(() => {
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

const sandboxFor = useSandboxPerTest();

function rows(count: number, from = 0): Row[] {
  return Array.from({ length: count }, (_, i) => ({ id: `p${from + i + 1}`, lat: 10 + (from + i) * 0.5, lng: 20 + from + i }));
}

function writeCsv(name: string, list: Row[], header = 'id,lat,lng'): string {
  const path = join(work, name);
  writeFileSync(path, `${header}\n${list.map((r) => `${r.id},${r.lat},${r.lng}`).join('\n')}\n`);
  return path;
}

// HD Square: the cheapest image the sandbox renders.
const CHEAP = ['--resolution', 'HD', '--aspect-ratio', 'Square'];
const TEMPLATE = ['--output-template', 'out/{id}-{lat}_{lng}.jpg'];

function cli(sandbox: TestSandbox, args: string[], env: Record<string, string> = sandbox.env()) {
  return runCli(['batch', ...args], { configDir: home.path, env, cwd: work, timeout: 60_000 });
}

function generations(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((e) => e.method === 'POST' && e.path === API_PATH);
}

function coordinatesKey(body: unknown): string {
  const { lat, lng } = (body as { coordinates: { lat: number; lng: number } }).coordinates;
  return `${lat},${lng}`;
}

/**
 * Images the service generated per row (by coordinates): the account's history,
 * read through the list endpoint. Every sync generation whose answer was sent
 * is saved there and charged, including one whose client died before reading it.
 */
async function generatedPerRow(sandbox: TestSandbox, key = sandbox.key): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let page = 0; ; page++) {
    const response = await fetch(`${sandbox.api()}?page=${page}&size=100`, { headers: { 'x-api-key': key } });
    const body = (await response.json()) as { content: Array<{ coordinates: { latitude: number; longitude: number } }>; totalPages: number };
    for (const image of body.content) {
      const row = `${image.coordinates.latitude},${image.coordinates.longitude}`;
      counts.set(row, (counts.get(row) ?? 0) + 1);
    }
    if (page + 1 >= body.totalPages) return counts;
  }
}

function outFiles(): string[] {
  const dir = join(work, 'out');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function partFiles(): string[] {
  return outFiles().filter((name) => name.endsWith('.part'));
}

/** The manifest's row records (its plan record, which has no key, aside). */
function manifestLines(path = join(work, 'out', 'aerial-batch-manifest.jsonl')): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => 'key' in line);
}

function lastStatusByKey(lines: Array<Record<string, unknown>>): Map<string, Record<string, unknown>> {
  const last = new Map<string, Record<string, unknown>>();
  for (const line of lines) last.set(line.key as string, line);
  return last;
}

/** Every row has exactly one file, a whole 720×720 JPEG whose GPS EXIF is that row's location. */
async function expectOneCorrectFilePerRow(list: Row[]): Promise<void> {
  const expected = list.map((r) => `${r.id}-${r.lat}_${r.lng}.jpg`).sort();
  expect(outFiles().filter((n) => n.endsWith('.jpg'))).toEqual(expected);
  expect(partFiles()).toEqual([]);
  for (const row of list) {
    const bytes = readFileSync(join(work, 'out', `${row.id}-${row.lat}_${row.lng}.jpg`));
    expect(jpegInfo(bytes)).toMatchObject({ width: 720, height: 720 });
    const gps = await exifr.gps(bytes);
    expect(gps.latitude).toBeCloseTo(row.lat, 5);
    expect(gps.longitude).toBeCloseTo(row.lng, 5);
  }
}

describe('batch', () => {
  it('generates one image per row into the template, records a manifest, and a re-run sends nothing', async () => {
    const sandbox = await sandboxFor();
    const list = rows(4);
    const csv = writeCsv('places.csv', list);
    const first = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--json']);
    expect(first.stderr).not.toMatch(/warning|error/);
    expect(first.exitCode).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({ total: 4, succeeded: 4, failed: 0, skipped: 0 });
    expect(summary.rows.map((r: { row: number; status: string; attempts: number }) => [r.row, r.status, r.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [3, 'done', 1],
      [4, 'done', 1],
    ]);
    await expectOneCorrectFilePerRow(list);
    expect([...(await generatedPerRow(sandbox)).values()]).toEqual([1, 1, 1, 1]);
    // Column defaults came from the flags: every request is HD Square.
    for (const entry of generations(sandbox)) expect(entry.body).toMatchObject({ resolution: 'HD', aspectRatio: 'Square', zoom: 'Medium' });

    const manifest = join(work, 'out', 'aerial-batch-manifest.jsonl');
    expect(statSync(manifest).mode & 0o777).toBe(0o600);
    const done = manifestLines().filter((l) => l.status === 'done');
    expect(done.map((l) => l.row).sort()).toEqual([1, 2, 3, 4]);
    for (const line of done) expect(line.bytes).toBe(statSync(join(work, 'out', line.file as string)).size);

    sandbox.clearRequests();
    const again = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--json']);
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout).rows.every((r: { previously?: boolean; attempts: number }) => r.previously && r.attempts === 0)).toBe(true);
    expect(sandbox.requests()).toEqual([]);
  });

  it('sends rows whose names were told apart after the first pass under their final names, each once, and resumes them', async () => {
    const sandbox = await sandboxFor();
    // 'Tower' and 'tower' are one file on macOS and Windows: one keeps its name, the other gets a tag.
    const list = [{ id: 'Tower', lat: 1, lng: 2 }, { id: 'tower', lat: 3, lng: 4 }, ...rows(3)];
    const csv = writeCsv('clash.csv', list);
    const first = await cli(sandbox, [csv, ...CHEAP, '--output-template', 'out/{id}.jpg', '--json']);
    expect(first.exitCode).toBe(0);
    expect([...(await generatedPerRow(sandbox)).values()]).toEqual([1, 1, 1, 1, 1]);
    const images = () => outFiles().filter((name) => name.endsWith('.jpg'));
    const files = images();
    expect(files).toHaveLength(5);
    const done = manifestLines().filter((l) => l.status === 'done');
    expect(done.map((l) => l.file).sort()).toEqual(files);
    expect(new Set(done.map((l) => (l.file as string).toLowerCase())).size).toBe(5);

    sandbox.clearRequests();
    writeFileSync(csv, `${readFileSync(csv, 'utf8')}TOWER,5,6\n`);
    const again = await cli(sandbox, [csv, ...CHEAP, '--output-template', 'out/{id}.jpg', '--json']);
    expect(again.exitCode).toBe(0);
    const summary = JSON.parse(again.stdout) as { total: number; succeeded: number; rows: Array<{ previously?: boolean }> };
    expect(summary).toMatchObject({ total: 6, succeeded: 6 });
    expect(summary.rows.map((r) => Boolean(r.previously))).toEqual([true, true, true, true, true, false]);
    expect(generations(sandbox).map((entry) => coordinatesKey(entry.body))).toEqual(['5,6']);
    expect(images()).toHaveLength(6);
  });

  it('removes the temp file a run killed between placing a row\'s image and removing its temp, and sends nothing for that row', async () => {
    const sandbox = await sandboxFor();
    const [row] = rows(1);
    const csv = writeCsv('one.csv', [row!]);
    expect((await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE])).exitCode).toBe(0);
    // As the kill leaves it: the image in place, its temp still beside it, and no "done" line yet.
    const name = `${row!.id}-${row!.lat}_${row!.lng}.jpg`;
    copyFileSync(join(work, 'out', name), join(work, 'out', `.${name}.0123456789ab.part`));
    const manifest = join(work, 'out', 'aerial-batch-manifest.jsonl');
    writeFileSync(manifest, `${manifestLines().filter((l) => l.status !== 'done').map((l) => JSON.stringify(l)).join('\n')}\n`);
    sandbox.clearRequests();

    const again = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--json']);
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout).rows).toMatchObject([{ row: 1, status: 'done', adopted: true }]);
    await expectOneCorrectFilePerRow([row!]);
    expect(sandbox.requests()).toEqual([]);
  });

  it('reads JSON Lines from stdin, with kebab-case columns, tags and per-row values over the flags', async () => {
    const sandbox = await sandboxFor();
    const input = [
      JSON.stringify({ at: '12.5,22', zoom: 'high', 'aspect-ratio': 'square', tags: 'a;b' }),
      JSON.stringify({ lat: 13, lng: 23, bearing: 'SW', tags: ['x'], 'include-context': true }),
    ].join('\n');
    const result = await runCli(['batch', '-', '--resolution', 'HD', '--aspect-ratio', 'Square', '--output-template', 'out/{row}-{zoom}.jpg', '--json'], {
      configDir: home.path,
      env: sandbox.env(),
      cwd: work,
      input,
    });
    expect(result.exitCode).toBe(0);
    expect(outFiles()).toEqual(['1-High.jpg', '2-Medium.jpg', 'aerial-batch-manifest.jsonl']);
    const bodies = generations(sandbox)
      .map((e) => e.body as Record<string, unknown>)
      .sort((a, b) => coordinatesKey(a).localeCompare(coordinatesKey(b)));
    expect(bodies[0]).toMatchObject({ coordinates: { lat: 12.5, lng: 22 }, zoom: 'High', aspectRatio: 'Square', tags: ['a', 'b'] });
    expect(bodies[1]).toMatchObject({ coordinates: { lat: 13, lng: 23 }, bearing: 'SouthWest', tags: ['x'], includeContext: true });
  });

  it('finishes every row exactly once through failures, 429s and dropped connections', async () => {
    // A bucket of 3 against 4 concurrent rows: a 429 does not depend on how fast this machine renders.
    const sandbox = await sandboxFor({ seed: 42, failRate: 0.3, dropRate: 0.2, rateLimit: 3 });
    const list = rows(10);
    const csv = writeCsv('faults.csv', list);
    const result = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '4', '--retry-delay', '20ms', '--max-retries', '12', '--retry-unsafe', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ total: 10, succeeded: 10, failed: 0 });
    // The knobs really fired: the rows only finished because failed attempts were retried.
    const statuses = generations(sandbox).map((e) => (e.dropped ? 'dropped' : e.status));
    expect(statuses).toContain(500);
    expect(statuses).toContain(429);
    expect(statuses).toContain('dropped');
    // Exactly once: one generated image per row in the account's history, one file per row with
    // that row's location, one "done" record per row.
    sandbox.setFaults({ failRate: 0, dropRate: 0, rateLimit: undefined });
    const successes = await generatedPerRow(sandbox);
    expect(successes.size).toBe(10);
    expect([...successes.values()].every((n) => n === 1)).toBe(true);
    await expectOneCorrectFilePerRow(list);
    const done = manifestLines().filter((l) => l.status === 'done');
    expect(done.map((l) => l.row).sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(result.stderr).toMatch(/rate limited \(429\): pausing all requests/);
  });

  it('does not resend a row whose connection dropped after sending, unless --retry-unsafe', async () => {
    const sandbox = await sandboxFor({ dropRate: 1 });
    const list = rows(3);
    const csv = writeCsv('drops.csv', list);
    const result = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--retry-delay', '10ms', '--json']);
    expect(result.exitCode).toBe(7);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ total: 3, succeeded: 0, failed: 3 });
    for (const row of summary.rows) {
      expect(row.attempts).toBe(1);
      expect(row.error).toMatch(/may already have generated \(and charged for\) this image.*--retry-unsafe/);
    }
    expect(generations(sandbox)).toHaveLength(3);
    expect(JSON.parse(result.stderr.trim().split('\n').pop()!)).toMatchObject({ exitCode: 7 });
    expect(outFiles().filter((n) => n.endsWith('.jpg'))).toEqual([]);
  });

  it('survives SIGKILL halfway: the re-run skips finished rows, and only rows in flight at the kill can be generated twice', async () => {
    const sandbox = await sandboxFor({ latencyMs: 250 });
    const list = rows(12);
    const csv = writeCsv('kill.csv', list);
    const args = [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '4'];
    const creditsBefore = (await sandbox.credits(sandbox.key))!;

    // Its own temp dir, to see what a killed batch leaves there.
    const tmp = tempDir('aerial-kill-tmp-');
    const child = spawnCli(['batch', ...args], { configDir: home.path, env: { ...sandbox.env(), TMPDIR: tmp.path }, cwd: work, timeout: 60_000 });
    // Kill once five images have been served: rows are done, in flight and not started.
    const killed = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (generations(sandbox).filter((e) => e.status === 200).length >= 5) {
          child.kill('SIGKILL');
          clearInterval(timer);
          resolve();
        }
      }, 2);
    });
    await killed;
    const first = await child;
    expect(first.signal).toBe('SIGKILL');
    // The outcome spool has no name from the start: nothing is left behind.
    // Node's own compile cache (bin/aerial.js turns it on, in a directory of the user's own) lives in the temp dir too, and is not aerial's to clear.
    expect(readdirSync(tmp.path).filter((name) => !name.startsWith('aerial-node-compile-cache-'))).toEqual([]);
    tmp.remove();
    // Requests still waiting in the sandbox's latency when the client died finish (or not) now.
    await new Promise((resolve) => setTimeout(resolve, 400));

    const afterKill = lastStatusByKey(manifestLines());
    const inFlightAtKill = new Set(
      [...afterKill.values()].filter((l) => l.status === 'started').map((l) => l.file as string),
    );
    const jpegsAfterKill = outFiles().filter((n) => n.endsWith('.jpg'));
    expect(jpegsAfterKill.length).toBeGreaterThanOrEqual(1);
    expect(jpegsAfterKill.length).toBeLessThan(12);

    // What a kill in the middle of writing leaves beside its target (writeJpegAtomically's temp name).
    const unfinished = list.find((r) => !jpegsAfterKill.includes(`${r.id}-${r.lat}_${r.lng}.jpg`))!;
    writeFileSync(join(work, 'out', `.${unfinished.id}-${unfinished.lat}_${unfinished.lng}.jpg.0123456789ab.part`), Buffer.alloc(100));

    const second = await cli(sandbox, args);
    expect(second.exitCode).toBe(0);
    await expectOneCorrectFilePerRow(list);
    const last = lastStatusByKey(manifestLines());
    expect(last.size).toBe(12);
    expect([...last.values()].every((l) => l.status === 'done')).toBe(true);

    // Exactly once, as strongly as can honestly be claimed: a row finished before the kill is
    // never generated again; a row generated twice must have been in flight when the CLI died.
    const successes = await generatedPerRow(sandbox);
    expect(successes.size).toBe(12);
    const twice = list.filter((r) => (successes.get(`${r.lat},${r.lng}`) ?? 0) > 1);
    for (const row of twice) expect(inFlightAtKill.has(`${row.id}-${row.lat}_${row.lng}.jpg`)).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(4);
    expect([...successes.values()].every((n) => n <= 2)).toBe(true);
    // The credits agree with the log: one HD credit per image the service generated.
    const generated = [...successes.values()].reduce((a, b) => a + b, 0);
    expect(creditsBefore - (await sandbox.credits(sandbox.key))!).toBe(generated);
    if (inFlightAtKill.size > 0) expect(second.stderr).toMatch(/in flight when an earlier run stopped/);
  });

  it('splits rows across shards: their union is every row, with no overlap', async () => {
    const sandbox = await sandboxFor();
    const list = rows(7);
    const csv = writeCsv('shards.csv', list);
    const runs = await Promise.all(
      [1, 2, 3].map((k) => cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--shard', `${k}/3`, '--json'])),
    );
    const shardRows = runs.map((run) => {
      expect(run.exitCode).toBe(0);
      return (JSON.parse(run.stdout).rows as Array<{ row: number }>).map((r) => r.row);
    });
    expect(shardRows).toEqual([
      [1, 4, 7],
      [2, 5],
      [3, 6],
    ]);
    const successes = await generatedPerRow(sandbox);
    expect(successes.size).toBe(7);
    expect([...successes.values()].every((n) => n === 1)).toBe(true);
    await expectOneCorrectFilePerRow(list);
    // Three processes appended to one manifest: every line is whole, every row done once.
    const done = manifestLines().filter((l) => l.status === 'done');
    expect(done.map((l) => l.row).sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('--dry-run validates every row and prices it, sending nothing and writing nothing', async () => {
    const sandbox = await sandboxFor();
    const path = join(work, 'mixed.csv');
    writeFileSync(path, 'id,lat,lng,resolution,zoom\na,1,2,HD,\nb,1,3,fhd,High\nc,1,4,UHD,\n');
    const ok = await cli(sandbox, [path, ...TEMPLATE, '--dry-run', '--json']);
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ total: 3, valid: 3, invalid: 0, credits: 7, priceTable: 'sandbox' });

    writeFileSync(path, 'id,lat,lng,zoom\na,1,2,\nb,95,3,\nc,1,4,closeup\nd,,5,\n');
    const bad = await cli(sandbox, [path, ...TEMPLATE, '--dry-run']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stdout).toContain("invalid  line 3 (row 2): column 'lat' must be between -90 and 90; got 95");
    expect(bad.stdout).toContain("invalid  line 4 (row 3): column 'zoom' must be one of ExtraLow, Low, Medium, High, ExtraHigh; got 'closeup'");
    expect(bad.stdout).toContain("invalid  line 5 (row 4): column 'lat' is required");
    expect(bad.stdout).toMatch(/ok +row 1: FHD 1,2 → out\/a-1_2\.jpg \(2 credits\)/);
    expect(bad.stderr).toMatch(/1 valid, 3 invalid; would cost 2 credits at the sandbox's prices/);
    expect(sandbox.requests()).toEqual([]);
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('--output-template names files by any scene choice, by its field or its flag name, from the cell or the default in force', async () => {
    const sandbox = await sandboxFor();
    const path = join(work, 'choices.csv');
    writeFileSync(path, 'id,lat,lng,weather,aspect-ratio\na,1,2,snow,\nb,1,3,,square\n');
    const template = ['--output-template', 'out/{id}-{weather}-{aspect-ratio}-{aspectRatio}-{zoom}-{epoch}.jpg'];
    const result = await cli(sandbox, [path, ...template, '--zoom', 'high', '--dry-run', '--json']);
    expect(result.exitCode).toBe(0);
    const files = (JSON.parse(result.stdout) as { rows: Array<{ file: string }> }).rows.map((row) => row.file.slice(work.length + 1));
    expect(files).toEqual(['out/a-Snow-Landscape-Landscape-High-Nowadays.jpg', 'out/b-Sunny-Square-Square-High-Nowadays.jpg']);
    expect(sandbox.requests()).toEqual([]);
  });

  it('refuses invalid rows, clashing names, foreign files and bad flags before sending anything', async () => {
    const sandbox = await sandboxFor();
    const invalid = join(work, 'invalid.csv');
    writeFileSync(invalid, 'id,lat,lng,bearing\na,1,2,N\nb,1,3,up\n');
    const refused = await cli(sandbox, [invalid, ...CHEAP, ...TEMPLATE]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/^error: 1 invalid row: line 3 \(row 2\): column 'bearing' must be one of North, .*got 'up'.*nothing was sent/);

    const clash = writeCsv('clash.csv', [
      { id: 'same', lat: 1, lng: 2 },
      { id: 'same', lat: 1, lng: 2 },
    ]);
    const clashed = await cli(sandbox, [clash, ...CHEAP, '--output-template', 'out/{id}.jpg']);
    expect(clashed.exitCode).toBe(2);
    expect(clashed.stderr).toContain('row 2: writes the same file as row 1 (out/same.jpg)');

    mkdirSync(join(work, 'out'));
    writeFileSync(join(work, 'out', 'p1-10_20.jpg'), 'not ours');
    const foreign = await cli(sandbox, [writeCsv('one.csv', rows(1)), ...CHEAP, ...TEMPLATE]);
    expect(foreign.exitCode).toBe(2);
    expect(foreign.stderr).toMatch(/already exists and was not written by this batch \(first: row 1, out\/p1-10_20\.jpg\); pass --force/);
    expect(readFileSync(join(work, 'out', 'p1-10_20.jpg'), 'utf8')).toBe('not ours');

    for (const [flag, value, message] of [
      ['--concurrency', '0', '--concurrency must be a whole number from 1 to 256'],
      ['--shard', '4/3', '--shard must be k/n'],
      ['--output-template', 'out/{id}.png', '--output-template must end in .jpg or .jpeg'],
      ['--zoom', 'closeup', '--zoom must be one of'],
    ] as const) {
      const result = await cli(sandbox, [invalid, flag, value]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(message);
    }
    expect(sandbox.requests()).toEqual([]);

    // --skip-invalid runs the valid rows; the invalid one is reported, and the exit code says so.
    const skipping = await cli(sandbox, [invalid, ...CHEAP, '--output-template', 'skip/{id}.jpg', '--skip-invalid', '--json']);
    expect(skipping.exitCode).toBe(2);
    const summary = JSON.parse(skipping.stdout);
    expect(summary).toMatchObject({ total: 2, succeeded: 1, failed: 1 });
    expect(summary.rows[1].error).toMatch(/^line 3 \(row 2\): column 'bearing' must be one of/);
    expect(readdirSync(join(work, 'skip')).filter((n) => n.endsWith('.jpg'))).toEqual(['a.jpg']);
    expect(generations(sandbox)).toHaveLength(1);
  });

  it('refuses output and manifest paths that run through a file, naming the flag, before sending or writing anything', async () => {
    const sandbox = await sandboxFor();
    const csv = writeCsv('rows.csv', rows(2));
    writeFileSync(join(work, 'blocker'), 'a file where a directory must be');
    const cases = [
      { args: ['--output-template', 'blocker/{id}.jpg'], message: /^error: the manifest's place beside the outputs, blocker\/aerial-batch-manifest\.jsonl, is unusable: a file is in the way, where a directory must be; pass --manifest to put it elsewhere$/m },
      { args: ['--output-template', 'blocker/sub/{id}.jpg', '--manifest', 'm.jsonl'], message: /^error: --output-template: cannot create directory .*blocker\/sub: a file is in the way/m },
      { args: ['--output-template', 'fine/{id}.jpg', '--manifest', 'blocker/m.jsonl'], message: /^error: --manifest blocker\/m\.jsonl: a file is in the way/m },
    ];
    for (const { args, message } of cases) {
      const result = await cli(sandbox, [csv, ...CHEAP, ...args]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(sandbox.requests()).toEqual([]);
    expect(readdirSync(work).sort()).toEqual(['blocker', 'rows.csv']);
  });

  it('stops early on 402: finished rows stay, rows not started are skipped, exit 4', async () => {
    const sandbox = await sandboxFor();
    const poor = await sandbox.createAccount({ credits: 3 });
    registerSecret(poor.key);
    const list = rows(8);
    const csv = writeCsv('poor.csv', list);
    const result = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '1', '--json'], { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: poor.key });
    expect(result.exitCode).toBe(4);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ total: 8, succeeded: 3, failed: 1, skipped: 4 });
    expect(summary.rows.map((r: { status: string }) => r.status)).toEqual(['done', 'done', 'done', 'failed', 'skipped', 'skipped', 'skipped', 'skipped']);
    expect(summary.rows[3].error).toMatch(/^InsufficientCredits/);
    // No point burning through the list: the fourth refusal ended the batch.
    expect(generations(sandbox).map((e) => e.status)).toEqual([200, 200, 200, 402]);
    expect(JSON.parse(result.stderr.trim().split('\n').pop()!)).toMatchObject({ error: 'InsufficientCredits', exitCode: 4 });
  });

  it('--async: one listener catches every row\'s callback by requestId, through failed generations and webhook retries', async () => {
    const sandbox = await sandboxFor({ seed: 3, failRate: 0.3, webhookFail: 2 });
    const list = rows(6);
    const csv = writeCsv('async.csv', list);
    const result = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--async', '--concurrency', '3', '--retry-delay', '10ms', '--max-retries', '10', '--json']);
    expect(result.exitCode).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ total: 6, succeeded: 6, failed: 0 });
    await expectOneCorrectFilePerRow(list);
    const accepted = sandbox.requests().filter((e) => e.path === `${API_PATH}/async` && e.status === 202);
    // Every row's result names the request whose callback delivered it.
    const requestIds = new Set(accepted.map((e) => e.requestId));
    for (const row of summary.rows) expect(requestIds.has(row.requestId)).toBe(true);
    // One listener: every request carried the same callback URL.
    expect(new Set(accepted.map((e) => e.callbackUrl)).size).toBe(1);
    const deliveries = sandbox.webhookAttempts();
    expect(deliveries.some((d) => d.kind === 'error' && d.outcome === 'delivered')).toBe(true);
    expect(deliveries.some((d) => d.outcome === 'skipped')).toBe(true);
    const successes = await generatedPerRow(sandbox);
    expect([...successes.values()].every((n) => n === 1)).toBe(true);
    expect(successes.size).toBe(6);
  });

  it('--async flags are refused without --async', async () => {
    const sandbox = await sandboxFor();
    const result = await cli(sandbox, [writeCsv('x.csv', rows(1)), '--listen-port', '0']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--listen-port only applies with --async');
    expect(sandbox.requests()).toEqual([]);
  });

  it('stops early on 401 with exit 3', async () => {
    const sandbox = await sandboxFor();
    const csv = writeCsv('auth.csv', rows(6));
    const result = await cli(sandbox, [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '2'], { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: 'not-a-real-key-123' });
    expect(result.exitCode).toBe(3);
    expect(generations(sandbox).length).toBeLessThanOrEqual(2);
    expect(result.stderr).toMatch(/stopping the batch/);
  });
});

describe('batch and signals', () => {
  const MANIFEST = () => join(work, 'out', 'aerial-batch-manifest.jsonl');

  /** Rows sent so far: "started" lines (the manifest is read while the batch appends to it). */
  const started = () => (existsSync(MANIFEST()) ? readFileSync(MANIFEST(), 'utf8').split('\n').filter((l) => l.includes('"status":"started"')).length : 0);

  /** Generations the service answered with an image, per row (coordinates), across every run so far. */
  function imagesServedPerRow(sandbox: TestSandbox): Map<string, number> {
    const counts = new Map<string, number>();
    for (const entry of generations(sandbox).filter((e) => e.status === 200)) {
      const row = coordinatesKey(entry.body);
      counts.set(row, (counts.get(row) ?? 0) + 1);
    }
    return counts;
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} lets the requests on the wire finish and be recorded; the re-run generates only the rest, each row once`, async () => {
      const sandbox = await sandboxFor({ latencyMs: 1_500 });
      const list = rows(12);
      const csv = writeCsv(`${signal}.csv`, list);
      const args = [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '4'];

      const child = spawnCli(['batch', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
      await until(() => started() === 4, 'the first four rows to be sent');
      child.kill(signal);
      const first = await child;
      expect(first.exitCode).toBe(130);
      const again = signal === 'SIGINT' ? 'press Ctrl-C again' : `send ${signal} again`;
      expect(first.stderr).toContain(`finishing 4 requests in flight (at most 30s); ${again} to abort`);
      expect(first.stderr).toContain('8 rows not started: interrupted');
      expect(String(first.stderr).trim().split('\n').pop()).toBe('error: interrupted');
      // The four on the wire were answered, and their images kept and recorded.
      expect(generations(sandbox).map((e) => e.status)).toEqual([200, 200, 200, 200]);
      expect([...lastStatusByKey(manifestLines()).values()].map((l) => l.status)).toEqual(['done', 'done', 'done', 'done']);
      expect(outFiles().filter((n) => n.endsWith('.jpg'))).toHaveLength(4);
      expect(partFiles()).toEqual([]);

      sandbox.setFaults({ latencyMs: 0 });
      const second = await cli(sandbox, args);
      expect(second.exitCode).toBe(0);
      expect(second.stderr).toContain('4 rows already done by an earlier run');
      expect(second.stderr).not.toMatch(/in flight when an earlier run stopped/);
      // Across both runs the service generated (and charged for) each row exactly once.
      const served = imagesServedPerRow(sandbox);
      expect(served.size).toBe(12);
      expect([...served.values()].every((n) => n === 1)).toBe(true);
      expect([...(await generatedPerRow(sandbox)).values()]).toEqual(Array(12).fill(1));
      await expectOneCorrectFilePerRow(list);
    });
  }

  it('a row waiting to retry is not sent again after the signal, and the re-run does not take it for one in flight', async () => {
    const sandbox = await sandboxFor({ failRate: 1 });
    const list = rows(2);
    const csv = writeCsv('retrying.csv', list);
    const args = [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '2', '--retry-delay', '20s'];
    const child = spawnCli(['batch', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
    await until(() => generations(sandbox).length === 2, 'both rows to fail once');
    child.kill('SIGTERM');
    const first = await child;
    expect(first.exitCode).toBe(130);
    expect(first.stderr).toContain('2 rows not retried: interrupted');
    expect(generations(sandbox)).toHaveLength(2);
    expect([...lastStatusByKey(manifestLines()).values()].map((l) => [l.status, l.error])).toEqual([
      ['failed', 'not retried: interrupted'],
      ['failed', 'not retried: interrupted'],
    ]);

    sandbox.setFaults({ failRate: 0 });
    const second = await cli(sandbox, args);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).not.toMatch(/in flight when an earlier run stopped/);
    await expectOneCorrectFilePerRow(list);
  });

  it('a second signal aborts at once: nothing half-written, the rows on the wire stay "started", and the re-run sends them again', async () => {
    const sandbox = await sandboxFor({ latencyMs: 4_000 });
    const list = rows(6);
    const csv = writeCsv('twice.csv', list);
    const args = [csv, ...CHEAP, ...TEMPLATE, '--concurrency', '3'];

    const child = spawnCli(['batch', ...args], { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 60_000 });
    const stderr = stderrSoFar(child);
    await until(() => started() === 3, 'the first three rows to be sent');
    // As CI cancels: SIGINT, then SIGTERM a little later.
    child.kill('SIGINT');
    await until(() => stderr().includes('finishing 3 requests in flight'), 'the notice');
    const abortedAt = Date.now();
    child.kill('SIGTERM');
    const first = await child;
    expect(first.exitCode).toBe(130);
    expect(Date.now() - abortedAt).toBeLessThan(2_000); // long before the answers were due
    expect(outFiles().filter((n) => n.endsWith('.jpg') || n.endsWith('.part'))).toEqual([]);
    expect([...lastStatusByKey(manifestLines()).values()].map((l) => l.status)).toEqual(['started', 'started', 'started']);
    // The sandbox saw each client go before it answered, and took back the charge.
    await until(() => generations(sandbox).length === 3, 'the abandoned requests to be logged');
    expect(generations(sandbox).map((e) => e.status)).toEqual([null, null, null]);

    sandbox.setFaults({ latencyMs: 0 });
    const second = await cli(sandbox, args);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toContain('3 rows were in flight when an earlier run stopped');
    expect([...(await generatedPerRow(sandbox)).values()]).toEqual(Array(6).fill(1));
    await expectOneCorrectFilePerRow(list);
  });
});
