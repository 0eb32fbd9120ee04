// Small file-system facts the batch and export need when resuming: is a file
// on disk a whole JPEG, and which temp files did a killed run leave behind.
import { open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileSystemProblem } from '../api/errors.js';
import { isTempNameOf, tempStem } from '../jpeg-file.js';

/** Why a path the user chose cannot hold files, in their terms; undefined for errors that are not theirs to fix. */
export function pathProblem(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EEXIST' || code === 'ENOTDIR') return 'a file is in the way, where a directory must be';
  return fileSystemProblem(error);
}

/**
 * True when `path` is a regular file that starts with the JPEG signature and
 * ends with the end-of-image marker. writeJpegAtomically only ever renames
 * complete, verified files into place, so this is enough to tell our own
 * output from an empty or truncated file someone else left there.
 */
export async function isCompleteJpeg(path: string): Promise<{ ok: boolean; bytes: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return { ok: false, bytes: 0 };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size < 4) return { ok: false, bytes: info.size };
    const head = Buffer.alloc(3);
    await handle.read(head, 0, 3, 0);
    const tailLength = Math.min(64, info.size);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, info.size - tailLength);
    const signature = head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
    let end = false;
    for (let i = tail.length - 2; i >= 0 && !end; i--) end = tail[i] === 0xff && tail[i + 1] === 0xd9;
    return { ok: signature && end, bytes: info.size };
  } finally {
    await handle.close();
  }
}

/** The temp name writeJpegAtomically uses beside a target (see tempPathFor). */
export function isPartFileOf(candidate: string, targetName: string): boolean {
  return isTempNameOf(candidate, targetName);
}

/**
 * Removes temp files a killed run left beside the given targets. Only names
 * of the exact temp pattern for these targets are touched.
 */
export async function removeStaleParts(targets: Iterable<string>): Promise<number> {
  // Per directory, each target's name by the stem of its temp names.
  const byDir = new Map<string, Map<string, string>>();
  for (const target of targets) {
    const dir = dirname(target);
    const stems = byDir.get(dir) ?? new Map<string, string>();
    stems.set(tempStem(basename(target)), basename(target));
    byDir.set(dir, stems);
  }
  let removed = 0;
  for (const [dir, stems] of byDir) {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.startsWith('.') || !entry.endsWith('.part')) continue;
      const name = stems.get(entry.slice(0, -'.xxxxxxxxxxxx.part'.length));
      if (name !== undefined && isPartFileOf(entry, name)) {
        await unlink(join(dir, entry)).catch(() => {});
        removed++;
      }
    }
  }
  return removed;
}
