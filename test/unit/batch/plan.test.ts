import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/lifecycle/errors.js';
import { resolveSettings } from '../../../src/config/config.js';
import { isCompleteJpeg, removeStaleParts } from '../../../src/bulk/files.js';
import { isPartFileOf } from '../../../src/files/file-names.js';
import { defaultManifestPath, planBatch, RowPlanner, type PlannedRow } from '../../../src/batch/plan.js';
import { resumeEntry } from '../../../src/batch/resume.js';
import { ManifestIndex, rowKey } from '../../../src/batch/manifest.js';
import { batchExitCode, summarize } from '../../../src/bulk/summary.js';
import { compileTemplate } from '../../../src/batch/template.js';
import { tempDir } from '../../helpers/cli.js';
import { batchFile } from '../../helpers/batch-input.js';

const sceneDefaults = resolveSettings({}, {}, {}).sceneDefaults;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0, 0xff, 0xd9]);
const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});
function scratch(): string {
  const dir = tempDir('aerial-plan-');
  dirs.push(dir);
  return dir.path;
}

async function plan(lines: string, template = 'out/{row}.jpg', extra: Partial<Parameters<typeof planBatch>[0]> = {}) {
  return planBatch({ file: await batchFile(lines), flags: {}, sceneDefaults, template: compileTemplate(template), cwd: '/ci/workspace', ...extra });
}

describe('planBatch', () => {
  it('validates each row, naming the row and the column', async () => {
    const result = await plan('{"lat":1,"lng":2,"zoom":"high"}\n{"lat":95,"lng":2}\n{"lng":2}\n{"lat":1,"lng":2,"aspect-ratio":"wide"}\n');
    expect(result.rows[0]!.request).toMatchObject({ coordinates: { lat: 1, lng: 2 }, zoom: 'High', resolution: 'FHD' });
    expect(result.rows[0]!.error).toBeUndefined();
    expect(result.rows[1]!.error).toBe("line 2 (row 2): column 'lat' must be between -90 and 90; got 95 (did you swap column 'lat' and column 'lng'?)");
    expect(result.rows[2]!.error).toBe("line 3 (row 3): column 'lat' is required (or column 'at' LAT,LNG or a place name)");
    expect(result.rows[3]!.error).toBe("line 4 (row 4): column 'aspect-ratio' must be one of Square, Landscape, Portrait, Standard; got 'wide'");
  });

  it('fills missing columns from the flags, and the flags from config defaults', async () => {
    const result = await plan('{"lat":1,"lng":2}\n{"lat":1,"lng":2,"resolution":"UHD"}\n', 'out/{row}.jpg', { flags: { resolution: 'HD' } });
    expect(result.rows.map((r) => r.request!.resolution)).toEqual(['HD', 'UHD']);
    expect(result.rows.map((r) => r.credits)).toEqual([1, 4]);
    expect(result.rows[0]!.request!.zoom).toBe('Medium');
  });

  it('names files from the template with the request values and columns, relative to the manifest', async () => {
    const result = await plan('{"id":"eiffel tower","lat":48.8584,"lng":2.2945,"zoom":"high"}\n', 'out/{id}-{lat}_{lng}-{zoom}-{row}.jpg');
    const [row] = result.rows;
    expect(row!.target).toBe('/ci/workspace/out/eiffel_tower-48.8584_2.2945-High-1.jpg');
    expect(row!.file).toBe('eiffel_tower-48.8584_2.2945-High-1.jpg');
    expect(result.manifestPath).toBe('/ci/workspace/out/aerial-batch-manifest.jsonl');
    expect(row!.key).toBe(rowKey(row!.request, row!.file!));
  });

  it('refuses a placeholder that is neither built in nor a column', async () => {
    await expect(plan('{"lat":1,"lng":2}\n', 'out/{name}.jpg')).rejects.toThrow('--output-template: unknown placeholder {name}; available: {row}, {lat}, {lng}');
  });

  it('refuses rows alike in every templated value, and tells apart rows whose different values make one name', async () => {
    const lines = [
      { id: 'A', lat: 1, lng: 2 },
      { id: 'b', lat: 1, lng: 3 },
      { id: 'a', lat: 1, lng: 4 },
      { id: 'b', lat: 1, lng: 5 },
      { id: 'c/d', lat: 1, lng: 6 },
      { id: 'c_d', lat: 1, lng: 7 },
    ];
    const result = await plan(lines.map((line) => JSON.stringify(line)).join('\n'), 'out/{id}.jpg');
    expect(result.rows.map((r) => r.error)).toEqual([
      undefined,
      undefined,
      undefined,
      'row 4: writes the same file as row 2 (out/b.jpg); make --output-template unique per row, e.g. with {row}',
      undefined,
      undefined,
    ]);
    const files = result.rows.map((r) => r.file);
    // Case twins (one file on macOS and Windows) both get a hash; so does the value that had to change.
    expect(files[0]).toMatch(/^A~[0-9a-f]{10}\.jpg$/);
    expect(files[2]).toMatch(/^a~[0-9a-f]{10}\.jpg$/);
    expect(files[1]).toBe('b.jpg');
    expect(files[4]).toMatch(/^c_d~[0-9a-f]{10}\.jpg$/);
    expect(files[5]).toBe('c_d.jpg');
    // The same file for the same row on every run.
    expect((await plan(lines.map((line) => JSON.stringify(line)).join('\n'), 'out/{id}.jpg')).rows.map((r) => r.file)).toEqual(files);
  });

  it('keeps only the shard rows but checks every row', async () => {
    const lines = Array.from({ length: 7 }, (_, i) => JSON.stringify({ lat: i, lng: 0 })).join('\n');
    const shard = await plan(lines, 'out/{row}.jpg', { shard: { index: 2, count: 3 } });
    expect(shard.rows.map((r) => r.row)).toEqual([2, 5]);
    expect(shard.allRows).toHaveLength(7);
  });

  it('puts the default manifest in the template directory before its first placeholder', async () => {
    expect(defaultManifestPath(compileTemplate('out/{country}/{id}.jpg'), '/w')).toBe('/w/out/aerial-batch-manifest.jsonl');
    expect(defaultManifestPath(compileTemplate('{id}.jpg'), '/w')).toBe('/w/aerial-batch-manifest.jsonl');
    expect(defaultManifestPath(compileTemplate('/data/img-{id}.jpg'), '/w')).toBe('/data/aerial-batch-manifest.jsonl');
    expect((await plan('{"lat":1,"lng":2}', 'out/{row}.jpg', { manifestPath: 'm/x.jsonl' })).manifestPath).toBe('/ci/workspace/m/x.jsonl');
  });
});

describe('manifest files', () => {
  it('are the output paths relative to the manifest, as relative() makes them', () => {
    for (const manifestPath of ['/ci/workspace/out/m.jsonl', '/m.jsonl', '/ci/workspace/out/sub/m.jsonl']) {
      const planner = new RowPlanner({ header: ['lat', 'lng'], flags: {}, sceneDefaults, template: compileTemplate('out/{row}.jpg'), cwd: '/ci/workspace', manifestPath });
      for (const target of ['/ci/workspace/out/1.jpg', '/ci/workspace/out/a/b/2.jpg', '/ci/workspace/outer/3.jpg', '/elsewhere/4.jpg', '/ci/workspace/out/..jpg', '/ci/workspace/out/.x/5.jpg', '/ci/workspace/out//6.jpg', '/ci/workspace/out/a/../7.jpg', '/ci/workspace/out']) {
        expect(planner.manifestFile(target), `${manifestPath} ${target}`).toBe(relative(planner.manifestDir, target));
      }
    }
  });
});

describe('resumeEntry', () => {
  it('skips done rows whose file exists, adopts files of rows killed in flight, and refuses foreign files', async () => {
    const cwd = scratch();
    mkdirSync(join(cwd, 'out'));
    const result = await plan(
      Array.from({ length: 6 }, (_, i) => JSON.stringify({ lat: i, lng: 0 })).join('\n'),
      'out/{row}.jpg',
      { cwd },
    );
    const [done, doneMissing, started, startedNoFile, foreign, fresh] = result.rows;
    writeFileSync(done!.target!, JPEG);
    writeFileSync(started!.target!, JPEG);
    writeFileSync(foreign!.target!, 'not a jpeg');
    const manifest = new ManifestIndex();
    manifest.add({ row: 1, key: done!.key!, status: 'done', file: done!.file! });
    manifest.add({ row: 2, key: doneMissing!.key!, status: 'done', file: doneMissing!.file! });
    manifest.add({ row: 3, key: started!.key!, status: 'started', file: started!.file! });
    manifest.add({ row: 4, key: startedNoFile!.key!, status: 'started', file: startedNoFile!.file! });
    const state = (row: PlannedRow, force = false) => resumeEntry(row.target!, manifest.get(row.key), force);
    expect(state(done!)).toMatchObject({ action: 'done', bytes: JPEG.length });
    expect(state(doneMissing!)).toMatchObject({ action: 'pending', fileMissing: true });
    expect(state(started!)).toMatchObject({ action: 'adopt' });
    expect(state(startedNoFile!)).toMatchObject({ action: 'pending', wasInFlight: true });
    expect(state(foreign!)).toMatchObject({ action: 'conflict' });
    expect(state(fresh!)).toMatchObject({ action: 'pending', wasInFlight: false });
    expect(state(foreign!, true).action).toBe('pending');
  });

  it('takes a whole image at the path of a row some run sent, whatever its last record says, --force or not; a row never sent is refused', async () => {
    const cwd = scratch();
    mkdirSync(join(cwd, 'out'));
    const result = await plan(
      Array.from({ length: 4 }, (_, i) => JSON.stringify({ lat: i, lng: 1 })).join('\n'),
      'out/{row}.jpg',
      { cwd },
    );
    const [doneThenFailed, startedTwiceFailed, failedUnsent, doneThenFailedNoFile] = result.rows;
    for (const row of [doneThenFailed, startedTwiceFailed, failedUnsent]) writeFileSync(row!.target!, JPEG);
    const manifest = new ManifestIndex();
    // Two runs overlapped: one recorded the row done, the other failed it after (its temp file swept by the first).
    manifest.add({ row: 1, key: doneThenFailed!.key!, status: 'started', file: doneThenFailed!.file! });
    manifest.add({ row: 1, key: doneThenFailed!.key!, status: 'done', file: doneThenFailed!.file!, bytes: JPEG.length });
    manifest.add({ row: 1, key: doneThenFailed!.key!, status: 'failed', file: doneThenFailed!.file!, error: 'ENOENT' });
    manifest.add({ row: 2, key: startedTwiceFailed!.key!, status: 'started', file: startedTwiceFailed!.file! });
    manifest.add({ row: 2, key: startedTwiceFailed!.key!, status: 'failed', file: startedTwiceFailed!.file!, error: 'ENOENT' });
    // A failure recorded without a "started" line: the row was never sent.
    manifest.add({ row: 3, key: failedUnsent!.key!, status: 'failed', file: failedUnsent!.file!, error: 'not started' });
    manifest.add({ row: 4, key: doneThenFailedNoFile!.key!, status: 'done', file: doneThenFailedNoFile!.file!, bytes: 10 });
    manifest.add({ row: 4, key: doneThenFailedNoFile!.key!, status: 'failed', file: doneThenFailedNoFile!.file!, error: 'x' });
    const state = (row: PlannedRow, force = false) => resumeEntry(row.target!, manifest.get(row.key), force);
    for (const force of [false, true]) {
      expect(state(doneThenFailed!, force)).toMatchObject({ action: 'adopt', bytes: JPEG.length });
      expect(state(startedTwiceFailed!, force)).toMatchObject({ action: 'adopt', bytes: JPEG.length });
      expect(state(doneThenFailedNoFile!, force)).toMatchObject({ action: 'pending' });
    }
    expect(state(failedUnsent!)).toMatchObject({ action: 'conflict' });
    expect(state(failedUnsent!, true)).toMatchObject({ action: 'pending' });
  });
});

describe('files', () => {
  it('tells a whole JPEG from a truncated or foreign file', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'ok.jpg'), JPEG);
    writeFileSync(join(dir, 'cut.jpg'), JPEG.subarray(0, 8));
    writeFileSync(join(dir, 'text.jpg'), 'hello world');
    expect(await isCompleteJpeg(join(dir, 'ok.jpg'))).toEqual({ ok: true, bytes: 10 });
    expect((await isCompleteJpeg(join(dir, 'cut.jpg'))).ok).toBe(false);
    expect((await isCompleteJpeg(join(dir, 'text.jpg'))).ok).toBe(false);
    expect(await isCompleteJpeg(join(dir, 'missing.jpg'))).toEqual({ ok: false, bytes: 0 });
  });

  it('recognises the temp file an image is really written through', async () => {
    const dir = scratch();
    const { readdirSync } = await import('node:fs');
    const { TempJpegFile } = await import('../../../src/files/jpeg-file.js');
    const file = new TempJpegFile(join(dir, 'x.jpg'), { force: false });
    // Once the first bytes are written, the temp file is open on disk under its name.
    await new Promise<void>((resolve, reject) => file.sink.write(JPEG.subarray(0, 4), (error) => (error ? reject(error) : resolve())));
    const temps = readdirSync(dir);
    expect(temps).toHaveLength(1);
    expect(isPartFileOf(temps[0]!, 'x.jpg')).toBe(true);
    file.sink.write(JPEG.subarray(4));
    await file.commit();
    expect(readdirSync(dir)).toEqual(['x.jpg']);
  });

  it('removes only the temp files of the given targets', async () => {
    const dir = scratch();
    const { readdirSync } = await import('node:fs');
    for (const name of ['.a.jpg.0123456789ab.part', '.b.jpg.0123456789ab.part', '.a.jpg.notours.part', 'a.jpg']) writeFileSync(join(dir, name), '');
    expect(await removeStaleParts([join(dir, 'a.jpg')])).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(['.a.jpg.notours.part', '.b.jpg.0123456789ab.part', 'a.jpg']);
  });

  it('keeps the temp names of long targets no longer than the target name, distinct, and still recognised', async () => {
    const dir = scratch();
    const { readdirSync } = await import('node:fs');
    const { tempPathFor } = await import('../../../src/files/jpeg-file.js');
    const { basename } = await import('node:path');
    // 250 bytes, of one-, two- and three-byte characters: no character is cut in two.
    const longNames = [`${'a'.repeat(246)}.jpg`, `${'é'.repeat(123)}.jpg`, `${'見'.repeat(82)}.jpg`, `${'a'.repeat(245)}b.jpg`];
    for (const name of longNames) {
      const temp = basename(tempPathFor(join(dir, name)));
      expect(Buffer.byteLength(temp)).toBeLessThanOrEqual(Buffer.byteLength(name));
      expect(temp).not.toContain('\ufffd');
      expect(isPartFileOf(temp, name)).toBe(true);
      for (const other of longNames.filter((n) => n !== name)) expect(isPartFileOf(temp, other)).toBe(false);
      writeFileSync(join(dir, temp), '');
    }
    // Short names keep the plain form.
    expect(basename(tempPathFor(join(dir, 'x.jpg')))).toMatch(/^\.x\.jpg\.[0-9a-f]{12}\.part$/);
    expect(await removeStaleParts([join(dir, longNames[0]!), join(dir, longNames[2]!)])).toBe(2);
    expect(readdirSync(dir)).toHaveLength(2);
  });
});

describe('batchExitCode', () => {
  const done = { row: 1, status: 'done' as const, attempts: 1 };
  it('is 0 only when every row succeeded', () => {
    expect(batchExitCode([done, { ...done, row: 2, previously: true }])).toBe(ExitCode.Ok);
  });

  it('is the stop cause, or 130, over the rows', () => {
    const failed = { row: 2, status: 'failed' as const, attempts: 1, exitCode: ExitCode.Server };
    expect(batchExitCode([done, failed], { stoppedWith: ExitCode.Credits })).toBe(ExitCode.Credits);
    expect(batchExitCode([done, failed], { interrupted: true })).toBe(ExitCode.Interrupted);
  });

  it('is the code most failed rows share, ties going to the lower code', () => {
    const f = (row: number, exitCode: number) => ({ row, status: 'failed' as const, attempts: 1, exitCode });
    expect(batchExitCode([f(1, 6), f(2, 7), f(3, 7)])).toBe(7);
    expect(batchExitCode([f(1, 7), f(2, 6)])).toBe(6);
    expect(summarize([f(2, 6), done]).rows.map((r) => r.row)).toEqual([1, 2]);
  });
});
