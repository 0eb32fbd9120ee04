// index.jsonl of `aerial export`: one JSON line per image file in the
// directory, rewritten whole and atomically at the end of every export, a line
// at a time (the index of a large history is not held as one string).
import { open, readdir, unlink } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { ImageRecord } from '../../api/schema.js';
import { TEMP_SUFFIX, writeFileAtomicStream } from '../../files/atomic-file.js';
import { safeNamePart } from '../../files/file-names.js';
import { redactValue, type Redact } from '../../text/secrets.js';
import { isCompleteJpeg } from '../../batch/files.js';

export const INDEX_NAME = 'index.jsonl';
/** The report of the export (its thumbnails in index.thumbnails/) and its GeoJSON, rewritten with the index. */
export const REPORT_NAME = 'index.html';
export const GEOJSON_NAME = 'index.geojson';

/**
 * Writes index.jsonl beside the images: one record per image file present,
 * the listing's record (with its file name) or, for an image no longer in the
 * account, the record an earlier export wrote. Temp file then rename: a reader
 * never sees half an index, and a killed export leaves the previous one.
 * Every record goes through `redact` (secrets.ts) first: a listing is the
 * service's data, and may repeat the key. Lines are written as they are made
 * and the earlier index is read back a line at a time: nothing here holds the
 * whole index. Returns how many records were written.
 */
export async function writeIndex(
  path: string,
  dir: string,
  listing: Map<string, { record: ImageRecord }>,
  done: (id: string) => boolean,
  fileName: (id: string) => string,
  redact: Redact,
): Promise<number> {
  let count = 0;
  const files = new Set<string>();
  await writeFileAtomicStream(
    path,
    async (append) => {
      for (const [id, { record }] of listing) {
        if (!done(id)) continue;
        files.add(fileName(id));
        await append(`${JSON.stringify(redactValue({ ...record, file: fileName(id) } as Record<string, unknown>, redact))}\n`);
        count++;
      }
      const carried = new Set<string>();
      for await (const record of readIndexRecords(path)) {
        if (typeof record.id !== 'string' || carried.has(record.id) || listing.has(record.id)) continue;
        // The file an earlier export named (names can depend on the other ids); only a plain name in this directory.
        const file = record.file;
        if (typeof file !== 'string' || safeNamePart(file) !== file || files.has(file)) continue;
        if (!(await isCompleteJpeg(join(dir, file))).ok) continue;
        carried.add(record.id);
        files.add(file);
        // An index written before redaction was, too, is made safe as it is carried over.
        await append(`${JSON.stringify(redactValue(record, redact))}\n`);
        count++;
      }
    },
    0o644,
  );
  return count;
}

/**
 * The records of an index on disk, a line at a time; lines that are not a
 * JSON object are passed over. No index (or anything but a regular file in
 * its place: export refuses one before it starts) is no records.
 */
export async function* readIndexRecords(path: string): AsyncGenerator<{ id?: unknown; file?: unknown } & Record<string, unknown>> {
  let handle;
  try {
    handle = await open(path, 'r');
    if (!(await handle.stat()).isFile()) return;
  } catch {
    await handle?.close().catch(() => {});
    return;
  }
  try {
    const lines = createInterface({ input: handle.createReadStream({ encoding: 'utf8', autoClose: false }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.trim()) continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (record && typeof record === 'object' && !Array.isArray(record)) yield record as Record<string, unknown>;
    }
  } finally {
    await handle.close().catch(() => {});
  }
}

/** An export killed while rewriting the index or the report leaves writeFileAtomic's temp file (.index.jsonl.…tmp); the next one removes it. */
export async function removeStaleIndexTemps(dir: string): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    if ([INDEX_NAME, REPORT_NAME, GEOJSON_NAME].some((name) => entry.startsWith(`.${name}.`)) && entry.endsWith(TEMP_SUFFIX)) {
      await unlink(join(dir, entry)).catch(() => {});
    }
  }
}
