// index.jsonl of `aerial export`: one JSON line per image file in the
// directory, rewritten whole and atomically at the end of every export.
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageRecord } from '../../api/schema.js';
import { TEMP_SUFFIX, writeFileAtomic } from '../../files/atomic-file.js';
import { safeNamePart } from '../../files/file-names.js';
import { redactValue, type Redact } from '../../text/secrets.js';
import { isCompleteJpeg, readRegularFile } from '../../batch/files.js';

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
 * service's data, and may repeat the key. Returns the records written, in the
 * index's order.
 */
export async function writeIndex(
  path: string,
  dir: string,
  listing: Map<string, { record: ImageRecord }>,
  done: (id: string) => boolean,
  fileName: (id: string) => string,
  redact: Redact,
): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const records: Array<Record<string, unknown>> = [];
  const seen = new Set<string>();
  const files = new Set<string>();
  for (const [id, { record }] of listing) {
    if (!done(id)) continue;
    seen.add(id);
    files.add(fileName(id));
    const indexed = redactValue({ ...record, file: fileName(id) } as Record<string, unknown>, redact);
    records.push(indexed);
    lines.push(JSON.stringify(indexed));
  }
  let previous = '';
  try {
    previous = await readRegularFile(path);
  } catch {
    // No earlier index (export refuses anything but a file in its place before it starts).
  }
  for (const line of previous.split('\n')) {
    if (!line.trim()) continue;
    let record: { id?: unknown; file?: unknown } & Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof record.id !== 'string' || seen.has(record.id) || listing.has(record.id)) continue;
    // The file an earlier export named (names can depend on the other ids); only a plain name in this directory.
    const file = record.file;
    if (typeof file !== 'string' || safeNamePart(file) !== file || files.has(file)) continue;
    if (!(await isCompleteJpeg(join(dir, file))).ok) continue;
    seen.add(record.id);
    files.add(file);
    // An index written before redaction was, too, is made safe as it is carried over.
    const kept = redactValue(record, redact);
    records.push(kept);
    lines.push(JSON.stringify(kept));
  }
  await writeFileAtomic(path, lines.length ? `${lines.join('\n')}\n` : '', 0o644);
  return records;
}

/** An export killed while rewriting the index or the report leaves writeFileAtomic's temp file (.index.jsonl.…tmp); the next one removes it. */
export async function removeStaleIndexTemps(dir: string): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    if ([INDEX_NAME, REPORT_NAME, GEOJSON_NAME].some((name) => entry.startsWith(`.${name}.`)) && entry.endsWith(TEMP_SUFFIX)) {
      await unlink(join(dir, entry)).catch(() => {});
    }
  }
}
