import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManifestIndex, manifestRecords, ManifestWriter, rowKey, type ManifestRecord } from '../../../src/batch/manifest.js';
import { tempDir } from '../../helpers/cli.js';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});
/** The last record of each key, as the manifest is streamed. */
async function readManifest(path: string): Promise<Map<string, ManifestRecord>> {
  const records = new Map<string, ManifestRecord>();
  for await (const record of manifestRecords(path)) records.set(record.key, record);
  return records;
}

function scratch(): string {
  const dir = tempDir('aerial-manifest-');
  dirs.push(dir);
  return dir.path;
}

describe('rowKey', () => {
  it('changes with the request and with the output file, and nothing else', () => {
    const request = { coordinates: { lat: 1, lng: 2 }, zoom: 'High' };
    expect(rowKey(request, 'a.jpg')).toBe(rowKey({ coordinates: { lat: 1, lng: 2 }, zoom: 'High' }, 'a.jpg'));
    expect(rowKey(request, 'a.jpg')).not.toBe(rowKey(request, 'b.jpg'));
    expect(rowKey(request, 'a.jpg')).not.toBe(rowKey({ ...request, zoom: 'Low' }, 'a.jpg'));
    expect(rowKey(request, 'a.jpg')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('stays what earlier versions wrote, so their manifests resume', () => {
    expect(rowKey({ coordinates: { lat: 48.85, lng: 2.29 }, zoom: 'High', prompt: 'caf\u00e9 \u2615 \ud800' }, 'out/\udc00r1.jpg')).toBe('8dc30cb7f04a6e987eb847a472742b35');
    expect(rowKey({ coordinates: { lat: 48.85, lng: 2.29 }, zoom: 'High', prompt: 'caf\u00e9 \u2615' }, 'out/r1.jpg')).toBe('fa32de30f8c12c6b15e5be4585d5f2d6');
  });
});

describe('manifest', () => {
  it('appends lines with mode 0600, and reading keeps the last record per key', async () => {
    const path = join(scratch(), 'sub', 'm.jsonl');
    const writer = await ManifestWriter.open(path);
    writer.append({ row: 1, key: 'k1', status: 'started', file: 'a.jpg' }, false);
    writer.append({ row: 2, key: 'k2', status: 'started', file: 'b.jpg' }, false);
    writer.append({ row: 1, key: 'k1', status: 'done', file: 'a.jpg', bytes: 10, attempts: 2 }, true);
    await writer.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const records = await readManifest(path);
    expect(records.get('k1')).toMatchObject({ row: 1, status: 'done', bytes: 10, attempts: 2 });
    expect(records.get('k2')).toMatchObject({ status: 'started' });
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('is empty when missing, skips a torn line, and continues on a new line after one', async () => {
    const path = join(scratch(), 'm.jsonl');
    expect((await readManifest(path)).size).toBe(0);
    writeFileSync(path, '{"row":1,"key":"k1","status":"done","file":"a.jpg"}\n{"row":2,"key":"k2","sta');
    expect([...(await readManifest(path)).keys()]).toEqual(['k1']);
    const writer = await ManifestWriter.open(path);
    writer.append({ row: 2, key: 'k2', status: 'done', file: 'b.jpg' }, true);
    await writer.close();
    const records = await readManifest(path);
    expect(records.get('k2')?.status).toBe('done');
    expect(records.get('k1')?.status).toBe('done');
  });

  it('keeps every line whole when many rows append, with syncs still pending', async () => {
    const path = join(scratch(), 'm.jsonl');
    const writer = await ManifestWriter.open(path);
    for (let i = 0; i < 200; i++) writer.append({ row: i + 1, key: `k${i}`, status: 'done', file: `${'x'.repeat(i)}.jpg` }, i % 3 === 0);
    await writer.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(200);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect((await readManifest(path)).size).toBe(200);
  });

  it('indexes the last status and size of each key in a few words per key', async () => {
    const path = join(scratch(), 'm.jsonl');
    const [a, b, c] = ['a', 'b', 'c'].map((name) => rowKey({ name }, `${name}.jpg`));
    writeFileSync(
      path,
      [
        { row: 1, key: a, status: 'started', file: 'a.jpg' },
        { row: 1, key: a, status: 'done', file: 'a.jpg', bytes: 1234, rateLimited: 2 },
        { row: 2, key: b, status: 'started', file: 'b.jpg' },
        { row: 3, key: c, status: 'failed', file: 'c.jpg', error: 'x' },
        { row: 4, key: 'not-a-key', status: 'done', file: 'd.jpg' },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    );
    const index = await ManifestIndex.read(path);
    expect(index.size).toBe(3);
    expect(index.get(a)).toEqual({ status: 'done', bytes: 1234, doneBytes: 1234, sent: true });
    expect(index.get(b)).toEqual({ status: 'started', bytes: undefined, sent: true });
    expect(index.get(c)).toEqual({ status: 'failed', bytes: undefined });
    expect(index.get(rowKey({ name: 'd' }, 'd.jpg'))).toBeUndefined();
    expect((await readManifest(path)).get(a)?.rateLimited).toBe(2);
  });

  it('remembers, after a row was started again or failed, that it was sent and the size its last done record gave', async () => {
    // Two runs that overlapped: one recorded the row done, the other failed it afterwards (or started it again).
    const path = join(scratch(), 'overlap.jsonl');
    const [a, b, c] = ['a', 'b', 'c'].map((name) => rowKey({ name }, `${name}.jpg`));
    writeFileSync(
      path,
      [
        { row: 1, key: a, status: 'started', file: 'a.jpg' },
        { row: 1, key: a, status: 'started', file: 'a.jpg' },
        { row: 1, key: a, status: 'done', file: 'a.jpg', bytes: 900 },
        { row: 1, key: a, status: 'failed', file: 'a.jpg', error: 'ENOENT' },
        { row: 2, key: b, status: 'done', file: 'b.jpg', bytes: 700 },
        { row: 2, key: b, status: 'done', file: 'b.jpg', bytes: 800 },
        { row: 2, key: b, status: 'started', file: 'b.jpg' },
        { row: 3, key: c, status: 'failed', file: 'c.jpg', error: 'not retried: interrupted' },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    );
    const scanned = await ManifestIndex.read(path);
    const parsed = new ManifestIndex();
    for await (const record of manifestRecords(path)) parsed.add(record);
    for (const index of [scanned, parsed]) {
      expect(index.get(a)).toEqual({ status: 'failed', doneBytes: 900, sent: true });
      expect(index.get(b)).toEqual({ status: 'started', doneBytes: 800, sent: true });
      expect(index.get(c)).toEqual({ status: 'failed' });
    }
  });

  it('keeps every key\'s status and size as the index grows far past its first size', () => {
    const index = new ManifestIndex();
    const keys = Array.from({ length: 50_000 }, (_, i) => rowKey({ i }, `${i}.jpg`));
    keys.forEach((key, i) => index.add({ row: i + 1, key, status: i % 3 === 0 ? 'failed' : 'done', file: `${i}.jpg`, bytes: i }));
    expect(index.size).toBe(keys.length);
    expect(keys.every((key, i) => index.get(key)?.status === (i % 3 === 0 ? 'failed' : 'done') && index.get(key)?.bytes === i)).toBe(true);
  });
});
