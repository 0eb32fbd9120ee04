// Thumbnails for the report: small JPEGs made by sharp (a UHD image is decoded
// at a fraction of its size), kept in a directory beside the report named
// after it (report.html → report.thumbnails/), each named after its image's
// path relative to the report, so a re-run finds and reuses it. A thumbnail is
// written to a temp file and renamed into place: the report never points at a
// half-written one. One older than its image is made again; one whose image is
// no longer in the report is removed.
import { availableParallelism } from 'node:os';
import { mkdir, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { TEMP_SUFFIX } from '../files/atomic-file.js';
import { fitName, nameTag, safeNamePart } from '../files/file-names.js';

/** The box a thumbnail fits in: twice what a card shows, for high-density screens. */
export const THUMBNAIL_SIZE = { width: 320, height: 180 } as const;
const THUMBNAIL_QUALITY = 70;
const THUMBNAIL_NAME = /~[0-9a-f]{10}\.jpg$/;
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
  /** Absolute path of each image's thumbnail, by image file; absent where none could be made. */
  byFile: Map<string, string>;
  made: number;
  reused: number;
  /** Images sharp could not read, with why. */
  failed: Array<{ file: string; reason: string }>;
}

/**
 * Makes (or reuses) a thumbnail for each of `files` in `dir`; removes the ones
 * no image needs any more. Once `signal` is aborted no further one is started
 * (those made are kept: they are good for the next run).
 */
export async function makeThumbnails(files: readonly string[], reportDir: string, dir: string, signal?: AbortSignal): Promise<ThumbnailResult> {
  const { default: sharp } = await import('sharp');
  await mkdir(dir, { recursive: true });
  const result: ThumbnailResult = { byFile: new Map(), made: 0, reused: 0, failed: [] };
  const wanted = new Set<string>();
  // sharp runs each on libvips' threads; a few at once keep every core busy. A few workers take the files
  // in turn: a promise per thumbnail under way, not one per image of a large export.
  const unique = [...new Set(files)];
  let next = 0;
  const one = async (file: string): Promise<void> => {
    const name = thumbnailName(reportDir, file);
    const target = join(dir, name);
    wanted.add(name);
    if (signal?.aborted) return;
    const source = await stat(file).catch(() => undefined);
    if (!source?.isFile()) return;
    const existing = await stat(target).catch(() => undefined);
    if (existing && existing.size > 0 && existing.mtimeMs >= source.mtimeMs) {
      result.byFile.set(file, target);
      result.reused++;
      return;
    }
    let bytes: Buffer;
    try {
      bytes = await sharp(file, { failOn: 'error' })
        .autoOrient()
        .resize(THUMBNAIL_SIZE.width, THUMBNAIL_SIZE.height, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: THUMBNAIL_QUALITY })
        .toBuffer();
    } catch (error) {
      result.failed.push({ file, reason: (error as Error).message });
      return;
    }
    const temp = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      await writeFile(temp, bytes, { flag: 'wx', mode: 0o644 });
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
    result.byFile.set(file, target);
    result.made++;
  };
  const worker = async (): Promise<void> => {
    while (next < unique.length) await one(unique[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(2, availableParallelism()), unique.length) }, worker));
  if (signal?.aborted) return result;
  // Thumbnails of images gone from the report, and temp files a killed run left.
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    const stale = entry.endsWith(TEMP_SUFFIX) ? entry.startsWith('.') : THUMBNAIL_NAME.test(entry) && !wanted.has(entry);
    if (stale) await unlink(join(dir, entry)).catch(() => {});
  }
  return result;
}
