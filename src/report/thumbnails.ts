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

/** What became of one image's thumbnail. */
type Made = { made: true } | { reused: true } | { without: true } | { failed: string };

/**
 * libvips works one image on one thread (sharp.concurrency(1)) and as many
 * images at once as there are cores: a thumbnail is too small a task to split,
 * and most of its time is the JPEG's entropy decoding, which one thread does
 * anyway. The image is decoded at an eighth, a quarter or a half of its size
 * (JPEG shrink-on-load: the DCT scaled down rather than the pixels afterwards).
 */
const THUMBNAIL_WORKERS = Math.max(2, availableParallelism());

type Sharp = (typeof import('sharp'))['default'];
let loaded: Promise<Sharp> | undefined;
/** sharp, set up once: no cache (each image is read once: libvips' cache of recent operations would only fill up and hold it), a thread an image. */
function loadSharp(): Promise<Sharp> {
  return (loaded ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  }));
}

/** Makes or reuses the thumbnail of one image at a time, into `dir`, for a report in `reportDir`. */
class Thumbnailer {
  constructor(
    private readonly sharp: Sharp,
    private readonly reportDir: string,
    private readonly dir: string,
  ) {}

  async make(file: string, name = thumbnailName(this.reportDir, file)): Promise<Made> {
    const target = join(this.dir, name);
    const source = await stat(file).catch(() => undefined);
    if (!source?.isFile()) return { without: true };
    const existing = await stat(target).catch(() => undefined);
    if (existing && existing.size > 0 && existing.mtimeMs >= source.mtimeMs) return { reused: true };
    const temp = join(this.dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      // libvips writes the thumbnail to its file itself. Handed back as a Buffer to be written, each one was native
      // memory V8 does not count, freed only as its collections came round: on Node 26, a 30,000-image export's
      // thumbnails took its peak RSS from 184 MiB to 234. Read once, front to back (sequentialRead); shrunk on load
      // (fastShrinkOnLoad); written without the extra pass optimised Huffman tables take.
      await this.sharp(file, { failOn: 'error', sequentialRead: true })
        .autoOrient()
        .resize(THUMBNAIL_SIZE.width, THUMBNAIL_SIZE.height, { fit: 'inside', withoutEnlargement: true, fastShrinkOnLoad: true })
        .jpeg({ quality: THUMBNAIL_QUALITY, optimiseCoding: false })
        .toFile(temp);
    } catch (error) {
      await unlink(temp).catch(() => {});
      return { failed: (error as Error).message };
    }
    try {
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
    return { made: true };
  }
}

/**
 * Thumbnails made while an export's downloads go on, rather than all after
 * them: each image is handed over as it is saved, and made on a core the
 * downloads leave idle. At most a few at once: push() waits for room, so
 * the downloads never run ahead of the thumbnails by more than that (and no
 * queue grows with the history). What it makes the report finds made
 * (makeThumbnails reuses a thumbnail newer than its image); an image it could
 * not read is left to makeThumbnails, which says why.
 */
export class ThumbnailsAhead {
  private active = 0;
  private readonly room: Array<() => void> = [];
  private readonly idle: Array<() => void> = [];
  private ready: Promise<Thumbnailer> | undefined;
  private stopped = false;

  constructor(
    private readonly reportDir: string,
    private readonly dir: string,
  ) {}

  /** Starts the thumbnail of `file`; resolves once another may be pushed. */
  async push(file: string): Promise<void> {
    if (this.stopped) return;
    while (this.active >= THUMBNAIL_WORKERS) await new Promise<void>((resolve) => this.room.push(resolve));
    this.active++;
    this.ready ??= Promise.all([loadSharp(), makeDirectories(this.dir)]).then(([sharp]) => new Thumbnailer(sharp, this.reportDir, this.dir));
    void this.ready
      .then((thumbnailer) => thumbnailer.make(file))
      // Whatever went wrong here, makeThumbnails meets again and reports.
      .catch(() => undefined)
      .finally(() => {
        this.active--;
        this.room.shift()?.();
        if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
      });
  }

  /** No further thumbnail is started. */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves once none is being made. */
  async drain(): Promise<void> {
    while (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }
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
  const sharp = await loadSharp();
  await makeDirectories(dir);
  const without = new Set<string>();
  const result: ThumbnailResult = { of: (file) => (without.has(file) ? undefined : join(dir, thumbnailName(reportDir, file))), made: 0, reused: 0, failed: [] };
  const wanted = new WantedTags();
  const thumbnailer = new Thumbnailer(sharp, reportDir, dir);
  // A few workers take the files in turn: a promise per thumbnail under way, not one per image of a large export.
  const one = async (file: string): Promise<void> => {
    const name = thumbnailName(reportDir, file);
    wanted.add(name);
    // No report is written once aborted: the files passed over need no record.
    if (signal?.aborted) return;
    const made = await thumbnailer.make(file, name);
    if ('made' in made) result.made++;
    else if ('reused' in made) result.reused++;
    else {
      without.add(file);
      if ('failed' in made) result.failed.push({ file, reason: made.failed });
    }
  };
  // One iterator shared by the workers: an async generator answers their calls to next() in turn.
  const queue = (async function* () {
    yield* files;
  })();
  const worker = async (): Promise<void> => {
    for (let next = await queue.next(); !next.done; next = await queue.next()) await one(next.value);
  };
  await Promise.all(Array.from({ length: THUMBNAIL_WORKERS }, worker));
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
