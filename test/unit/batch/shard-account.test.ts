import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/lifecycle/errors.js';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { rowKey, type ManifestRecord } from '../../../src/batch/manifest.js';
import { ManifestSet, namesTarget, rowRanges, statusExitCode, statusRecord, StatusTally, type StatusRow } from '../../../src/batch/shard-account.js';

const request = (lat: number): GenerationRequest =>
  ({ coordinates: { lat, lng: 2 }, resolution: 'HD', zoom: 'Medium', bearing: 'North', angle: 'High', weather: 'Sunny', daytime: 'Day', aspectRatio: 'Landscape', epoch: 'Nowadays' }) as GenerationRequest;

/** Rows 1..n of a batch whose manifest sat in /ci/out and whose images are /ci/out/{row}.jpg. */
function rows(n: number, dir = '/ci/out'): StatusRow[] {
  return Array.from({ length: n }, (_, index) => {
    const row = index + 1;
    return { row, request: request(row), target: `${dir}/${row}.jpg`, key: rowKey(request(row), `${row}.jpg`) };
  });
}

/** A manifest line as the batch writes it, for `row` with its file as recorded (relative to the manifest). */
function line(row: number, status: 'started' | 'done' | 'failed', extra: Record<string, unknown> = {}, file = `${row}.jpg`): ManifestRecord {
  return { row, key: rowKey(request(row), file), status, file, time: new Date(Date.UTC(2026, 0, 1, 0, 0, row)).toISOString(), ...extra };
}

async function tally(manifests: Array<[string, ManifestRecord[]]>, planned: StatusRow[]) {
  const set = new ManifestSet();
  for (const [path, lines] of manifests) await set.add(path, lines);
  const status = new StatusTally(set);
  for (const row of planned) status.add(row);
  return status.finish();
}

describe('batch status: combining manifests', () => {
  it('counts each row done exactly once across shards, and sums their 429s', async () => {
    const report = await tally(
      [
        ['shard-1/m.jsonl', [line(1, 'started'), line(1, 'done', { rateLimited: 2 }), line(3, 'started'), line(3, 'done')]],
        ['shard-2/m.jsonl', [line(2, 'started'), line(2, 'done', { rateLimited: 1 }), line(4, 'started'), line(4, 'done', { rateLimited: 0 })]],
      ],
      rows(4),
    );
    expect(report).toMatchObject({ total: 4, done: 4, failed: 0, missing: 0, duplicated: 0, rateLimited: 3, complete: true, unmatchedRecords: 0 });
    expect(report.manifests.map((m) => [m.path, m.done, m.rateLimited])).toEqual([
      ['shard-1/m.jsonl', 2, 2],
      ['shard-2/m.jsonl', 2, 1],
    ]);
    expect(statusExitCode(report)).toBe(ExitCode.Ok);
  });

  it('reports rows no shard finished as missing, telling those that were in flight', async () => {
    const report = await tally([['m.jsonl', [line(1, 'done'), line(2, 'started')]]], rows(5));
    expect(report).toMatchObject({ done: 1, missing: 4, missingRows: [2, 3, 4, 5], inFlightRows: [2], complete: false });
    expect(statusExitCode(report)).toBe(ExitCode.Server);
  });

  it('lets the later record of a key win within a manifest, and a done in any manifest win across them', async () => {
    const report = await tally(
      [
        ['a.jsonl', [line(1, 'failed', { error: 'ErrorGeneratingImage: boom', exitCode: 6 }), line(1, 'done'), line(2, 'done'), line(2, 'failed', { error: 'gone', exitCode: 7 })]],
        ['b.jsonl', [line(3, 'failed', { error: 'RateLimited: slow down (after 6 attempts)', exitCode: 8 })]],
        ['c.jsonl', [line(3, 'done')]],
      ],
      rows(3),
    );
    expect(report).toMatchObject({ done: 2, failed: 1, missing: 0, duplicated: 0 });
    expect(report.failedRows).toEqual([{ row: 2, error: 'gone', exitCode: 7, manifest: 'a.jsonl' }]);
    expect(statusExitCode(report)).toBe(ExitCode.Network);
  });

  it('counts in each manifest only the last record of a row: done then failed is failed, failed then started in flight', async () => {
    const report = await tally(
      [
        [
          'm.jsonl',
          [
            line(1, 'done'),
            line(1, 'started'),
            line(1, 'failed', { error: 'ErrorGeneratingImage: again', exitCode: 6 }),
            line(2, 'failed', { error: 'x', exitCode: 7 }),
            line(2, 'started'),
            line(3, 'done'),
            line(3, 'done'),
          ],
        ],
      ],
      rows(3),
    );
    expect(report).toMatchObject({ done: 1, failed: 1, missing: 1, duplicated: 0, inFlightRows: [2] });
    expect(report.failedRows).toEqual([{ row: 1, error: 'ErrorGeneratingImage: again', exitCode: 6, manifest: 'm.jsonl' }]);
    expect(report.manifests[0]).toMatchObject({ records: 7, done: 1, failed: 1, inFlight: 1 });
  });

  it('counts a row done in two manifests as done more than once, and not twice as done', async () => {
    const report = await tally(
      [
        ['shard-1/m.jsonl', [line(1, 'done'), line(2, 'done')]],
        ['shard-2/m.jsonl', [line(2, 'done'), line(3, 'done')]],
      ],
      rows(3),
    );
    expect(report).toMatchObject({ done: 3, duplicated: 1, complete: true });
    expect(report.duplicatedRows).toEqual([{ row: 2, manifests: ['shard-1/m.jsonl', 'shard-2/m.jsonl'] }]);
  });

  it('does not count a row redone in one manifest (a resumed shard) as done twice', async () => {
    const report = await tally([['m.jsonl', [line(1, 'done'), line(1, 'started'), line(1, 'done', { rateLimited: 1 })]]], rows(1));
    expect(report).toMatchObject({ done: 1, duplicated: 0, rateLimited: 1 });
  });

  it('matches records written beside a manifest kept elsewhere (--manifest manifests/shard-1.jsonl)', async () => {
    const report = await tally([['shard-1.jsonl', [line(1, 'done', {}, '../out/1.jpg'), line(2, 'done', {}, '../out/2.jpg')]]], rows(2));
    expect(report).toMatchObject({ done: 2, missing: 0, unmatchedRecords: 0 });
  });

  it('matches a record whose row number moved (rows inserted above it) by its file', async () => {
    const planned: StatusRow[] = [
      { row: 1, request: request(9), target: '/ci/out/new.jpg', key: rowKey(request(9), 'new.jpg') },
      { row: 2, request: request(1), target: '/ci/out/first.jpg', key: rowKey(request(1), 'first.jpg') },
    ];
    const report = await tally([['m.jsonl', [{ row: 1, key: rowKey(request(1), 'sub/../first.jpg'), status: 'done', file: 'sub/../first.jpg' }, line(1, 'done', {}, '../out/first.jpg')]]], planned);
    // The first record names a path that leaves its directory half way: taken for no row.
    expect(report).toMatchObject({ done: 1, missing: 1, missingRows: [1], unmatchedRecords: 1 });
  });

  it('takes no record of another request or another output file for a row', async () => {
    const otherRequest: ManifestRecord = { row: 1, key: rowKey(request(5), '1.jpg'), status: 'done', file: '1.jpg' };
    const otherFile: ManifestRecord = { row: 2, key: rowKey(request(2), 'elsewhere/2-b.jpg'), status: 'done', file: 'elsewhere/2-b.jpg' };
    const report = await tally([['m.jsonl', [otherRequest, otherFile]]], rows(2));
    expect(report).toMatchObject({ done: 0, missing: 2, unmatchedRecords: 2 });
  });

  it('reports invalid rows as failed with code 2, and the code most failed rows share', async () => {
    const planned: StatusRow[] = [...rows(3), { row: 4, error: 'row 4: column lat must be a number' }];
    const report = await tally(
      [['m.jsonl', [line(1, 'failed', { error: 'x', exitCode: 8 }), line(2, 'failed', { error: 'y', exitCode: 8 }), line(3, 'failed', { error: 'z' })]]],
      planned,
    );
    expect(report.failedRows.map((row) => [row.row, row.exitCode])).toEqual([
      [1, 8],
      [2, 8],
      [3, 6],
      [4, 2],
    ]);
    expect(statusExitCode(report)).toBe(ExitCode.RateLimited);
  });

  it('skips records without a row number or a file', async () => {
    const set = new ManifestSet();
    const broken = [{ row: 1, key: 'k', status: 'done' }, { row: 0, key: 'k', status: 'done', file: 'a' }, { row: 1.5, key: 'k', status: 'done', file: 'a' }] as ManifestRecord[];
    const summary = await set.add('m.jsonl', [line(1, 'done'), ...broken]);
    expect(summary).toMatchObject({ records: 1, done: 1 });
  });
});

describe('batch status: pieces', () => {
  it('namesTarget compares a recorded path with the end of an output path', () => {
    expect(namesTarget('1.jpg', '/ci/out/1.jpg')).toBe(true);
    expect(namesTarget('../out/1.jpg', '/ci/out/1.jpg')).toBe(true);
    expect(namesTarget('./out/1.jpg', '/x/out/1.jpg')).toBe(true);
    expect(namesTarget('../other/1.jpg', '/ci/out/1.jpg')).toBe(false);
    expect(namesTarget('a/../1.jpg', '/ci/out/1.jpg')).toBe(false);
    expect(namesTarget('..', '/ci/out/1.jpg')).toBe(false);
    expect(namesTarget('deep/er/out/1.jpg', '/out/1.jpg')).toBe(false);
  });

  it('statusRecord keeps only well-formed counts', () => {
    const record = (extra: object) => ({ row: 3, key: 'k', status: 'done', file: 'f', ...extra }) as ManifestRecord;
    expect(statusRecord(record({ rateLimited: 2, exitCode: 6 }))).toMatchObject({ rateLimited: 2, exitCode: 6 });
    expect(statusRecord(record({ rateLimited: -1, exitCode: '6' }))).toMatchObject({ rateLimited: undefined, exitCode: undefined });
    expect(statusRecord(record({ status: 'queued' }))).toBeUndefined();
  });

  it('rowRanges writes runs of rows as ranges, cut at a limit', () => {
    expect(rowRanges([1, 2, 3, 5, 7, 8])).toBe('1–3, 5, 7–8');
    expect(rowRanges([1, 3, 5, 7], 2)).toBe('1, 3, …');
    expect(rowRanges([])).toBe('');
  });
});
