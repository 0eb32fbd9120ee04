// index.jsonl of `aerial export`: one JSON line per image file in the
// directory, rewritten whole and atomically at the end of every export, a line
// at a time (the index of a large history is not held as one string).
import { open, opendir, unlink } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { TEMP_SUFFIX, writeFileAtomicStream } from '../../files/atomic-file.js';
import { partFilePrefix, partFilePrefixOf, safeNamePart } from '../../files/file-names.js';
import { redactValue, type Redact } from '../../text/secrets.js';
import { isCompleteJpeg } from '../../bulk/files.js';
import { textKey, WordTable } from '../../bulk/compact.js';

export const INDEX_NAME = 'index.jsonl';
/** The report of the export (its thumbnails in index.thumbnails/) and its GeoJSON, rewritten with the index. */
export const REPORT_NAME = 'index.html';
export const GEOJSON_NAME = 'index.geojson';

/**
 * Writes index.jsonl beside the images: first `lines`, the index lines of the
 * images this export listed and has on disk (their records, redacted, with
 * their file names: the listing spool's lines, spool.ts), then the records an
 * earlier export wrote of images no longer listed (`listed` says which ids
 * this export listed, `taken` which file names it gave). Temp file then
 * rename: a reader never sees half an index, and a killed export leaves the
 * previous one. Lines are written as they come and the earlier index is read
 * back a line at a time: nothing here holds the whole index. The records
 * carried over are told apart by 64-bit hashes of their ids and files, a
 * slot each (see ledger.ts for what a shared hash costs: a record not
 * carried). Returns how many records were written.
 */
export async function writeIndex(
  path: string,
  dir: string,
  lines: AsyncIterable<string>,
  listed: (id: string) => boolean,
  taken: (file: string) => boolean,
  redact: Redact,
): Promise<number> {
  let count = 0;
  await writeFileAtomicStream(
    path,
    async (append) => {
      for await (const line of lines) {
        await append(`${line}\n`);
        count++;
      }
      const carried = new WordTable(2, 0);
      for await (const record of readIndexRecords(path)) {
        if (typeof record.id !== 'string' || carried.find(textKey(`id:${record.id}`)) !== -1 || listed(record.id)) continue;
        // The file an earlier export named (names can depend on the other ids); only a plain name in this directory.
        const file = record.file;
        if (typeof file !== 'string' || safeNamePart(file) !== file || taken(file) || carried.find(textKey(`file:${file}`)) !== -1) continue;
        if (!(await isCompleteJpeg(join(dir, file))).ok) continue;
        carried.slotFor(textKey(`id:${record.id}`));
        carried.slotFor(textKey(`file:${file}`));
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

/** The names in `dir`, read as the directory is walked rather than as one array (a directory of 100,000 images). */
async function* entriesOf(dir: string): AsyncGenerator<string> {
  let handle;
  try {
    handle = await opendir(dir, { bufferSize: 256 });
  } catch {
    return;
  }
  for await (const entry of handle) yield entry.name;
}

/** An export killed while rewriting the index or the report leaves writeFileAtomic's temp file (.index.jsonl.…tmp); the next one removes it. */
export async function removeStaleIndexTemps(dir: string): Promise<void> {
  for await (const entry of entriesOf(dir)) {
    if ([INDEX_NAME, REPORT_NAME, GEOJSON_NAME].some((name) => entry.startsWith(`.${name}.`)) && entry.endsWith(TEMP_SUFFIX)) {
      await unlink(join(dir, entry)).catch(() => {});
    }
  }
}

/**
 * The temp files of image downloads a killed export left in `dir`, found in
 * one pass over the directory before anything is listed and removed as the
 * image each belongs to is about to be downloaded: only names of the exact
 * temp pattern of that image's file (file-names.ts) are touched. Safe under
 * the run lock: no other export is writing into the directory. What is held
 * is the temp files themselves (a killed export leaves one per download it
 * had under way), not the directory's listing.
 */
export class StalePartFiles {
  private constructor(
    private readonly dir: string,
    private readonly byPrefix: Map<string, string[]>,
  ) {}

  static async find(dir: string): Promise<StalePartFiles> {
    const byPrefix = new Map<string, string[]>();
    for await (const entry of entriesOf(dir)) {
      const prefix = partFilePrefixOf(entry);
      if (prefix !== undefined) byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), entry]);
    }
    return new StalePartFiles(dir, byPrefix);
  }

  /** Removes those of the image file `name`. */
  async removeFor(name: string): Promise<void> {
    if (this.byPrefix.size === 0) return;
    const prefix = partFilePrefix(name);
    const entries = this.byPrefix.get(prefix);
    if (!entries) return;
    this.byPrefix.delete(prefix);
    for (const entry of entries) await unlink(join(this.dir, entry)).catch(() => {});
  }
}
