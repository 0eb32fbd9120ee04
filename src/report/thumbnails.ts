// Thumbnails for the report: small JPEGs made by sharp (a UHD image is decoded
// at a fraction of its size), kept in a directory beside the report named
// after it (report.html → report.thumbnails/), each named after its image's
// path relative to the report, so a re-run finds and reuses it. A thumbnail is
// written to a temp file and renamed into place: the report never points at a
// half-written one. One older than its image is made again; one whose image is
// no longer in the report is removed.
import { availableParallelism } from 'node:os';
import { opendir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { TEMP_SUFFIX } from '../files/atomic-file.js';
import { makeDirectories } from '../files/directories.js';
import { fitName, nameTag, safeNamePart } from '../files/file-names.js';

/** The box a thumbnail fits in: twice what a card shows, for high-density screens. */
export const THUMBNAIL_SIZE = { width: 320, height: 180 } as const;
const THUMBNAIL_QUALITY = 70;
const THUMBNAIL_NAME = /~([0-9a-f]{10})\.jpg$/;
/** Room left in a name for the temp file's additions. */
const THUMBNAIL_NAME_BYTES = 120;

/** The thumbnails' directory of a report: beside it, named after it. */
export function thumbnailDirFor(reportPath: string): string {
  const name = basename(reportPath, extname(reportPath)) || basename(reportPath);
  return join(dirname(reportPath), `${name}.thumbnails`);
}

/** The thumbnail's name for an image: readable, and tagged with a hash of its path relative to the report. */
export function thumbnailName(reportDir: string, file: string): string {
  return fitName(safeNamePart(basename(file, extname(file))), '.jpg', nameTag(relative(reportDir, file)), THUMBNAIL_NAME_BYTES);
}

export interface ThumbnailResult {
  /** The thumbnail of one of the image files given (absolute path), or undefined where none could be made. */
  of(file: string): string | undefined;
  made: number;
  reused: number;
  /** Images sharp could not read, with why. */
  failed: Array<{ file: string; reason: string }>;
}

/**
 * The thumbnails a report wants, by the tag in their names (ten hex digits of
 * a hash of the image's path: 40 bits, exact in a double), 8 bytes each,
 * sorted once all are in: what tells a stale thumbnail from a wanted one
 * without a set of every name. A stale thumbnail whose tag a wanted one
 * shares (2^-40 a pair) is only kept.
 */
class WantedTags {
  private tags = new Float64Array(1024);
  private count = 0;
  private sorted?: Float64Array;

  add(name: string): void {
    const tag = tagOf(name);
    if (tag === undefined) return;
    if (this.count === this.tags.length) {
      const grown = new Float64Array(this.tags.length * 2);
      grown.set(this.tags);
      this.tags = grown;
    }
    this.tags[this.count++] = tag;
  }

  has(name: string): boolean {
    const tag = tagOf(name);
    if (tag === undefined) return false;
    this.sorted ??= this.tags.subarray(0, this.count).sort();
    let low = 0;
    let high = this.sorted.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = this.sorted[middle]!;
      if (value === tag) return true;
      if (value < tag) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }
}

function tagOf(name: string): number | undefined {
  const match = THUMBNAIL_NAME.exec(name);
  return match ? parseInt(match[1]!, 16) : undefined;
}

/**
 * Makes (or reuses) a thumbnail for each of `files` in `dir`, taking them as
 * they come (an export's index read from disk: no list of every file is
 * held); removes the ones no image needs any more. Once `signal` is aborted
 * no further one is started (those made are kept: they are good for the next
 * run). What is kept per image is its thumbnail's tag (WantedTags); the files
 * left without a thumbnail are kept by name.
 */
export async function makeThumbnails(files: Iterable<string> | AsyncIterable<string>, reportDir: string, dir: string, signal?: AbortSignal): Promise<ThumbnailResult> {
  const { default: sharp } = await import('sharp');
  // Each image is read once: libvips' cache of recent operations (50 MB by default) would only fill up, more as
  // the report has more images, and hold it.
  sharp.cache(false);
  await makeDirectories(dir);
  const without = new Set<string>();
  const result: ThumbnailResult = { of: (file) => (without.has(file) ? undefined : join(dir, thumbnailName(reportDir, file))), made: 0, reused: 0, failed: [] };
  const wanted = new WantedTags();
  // sharp runs each on libvips' threads; a few at once keep every core busy. A few workers take the files
  // in turn: a promise per thumbnail under way, not one per image of a large export.
  const one = async (file: string): Promise<void> => {
    const name = thumbnailName(reportDir, file);
    const target = join(dir, name);
    wanted.add(name);
    // No report is written once aborted: the files passed over need no record.
    if (signal?.aborted) return;
    const source = await stat(file).catch(() => undefined);
    if (!source?.isFile()) return void without.add(file);
    const existing = await stat(target).catch(() => undefined);
    if (existing && existing.size > 0 && existing.mtimeMs >= source.mtimeMs) {
      result.reused++;
      return;
    }
    const temp = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      // libvips writes the thumbnail to its file itself. Handed back as a Buffer to be written, each one was native
      // memory V8 does not count, freed only as its collections came round: on Node 26, a 30,000-image export's
      // thumbnails took its peak RSS from 184 MiB to 234.
      await sharp(file, { failOn: 'error' })
        .autoOrient()
        .resize(THUMBNAIL_SIZE.width, THUMBNAIL_SIZE.height, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: THUMBNAIL_QUALITY })
        .toFile(temp);
    } catch (error) {
      await unlink(temp).catch(() => {});
      without.add(file);
      result.failed.push({ file, reason: (error as Error).message });
      return;
    }
    try {
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
    result.made++;
  };
  // One iterator shared by the workers: an async generator answers their calls to next() in turn.
  const queue = (async function* () {
    yield* files;
  })();
  const worker = async (): Promise<void> => {
    for (let next = await queue.next(); !next.done; next = await queue.next()) await one(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, worker));
  if (signal?.aborted) return result;
  // Thumbnails of images gone from the report, and temp files a killed run left.
  const entries = await opendir(dir, { bufferSize: 256 }).catch(() => undefined);
  if (entries) {
    for await (const { name: entry } of entries) {
      const stale = entry.endsWith(TEMP_SUFFIX) ? entry.startsWith('.') : THUMBNAIL_NAME.test(entry) && !wanted.has(entry);
      if (stale) await unlink(join(dir, entry)).catch(() => {});
    }
  }
  return result;
}
