// Small file-system facts the batch and export need when resuming: is a file
// on disk a whole JPEG, and which temp files did a killed run leave behind.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JPEG_CHECK_TAIL_BYTES, JpegCheck } from '../api/jpeg-verifier.js';
import { partFilePrefix, partFilePrefixOf } from '../files/file-names.js';
import { textKey, WordTable } from './compact.js';

/**
 * True when `path` is a regular file that starts with the JPEG signature and
 * ends with the end-of-image marker, by the image path's own check. Only
 * complete, verified files are ever moved into place, so this is enough to
 * tell our own output from an empty or truncated file someone else left there.
 * Synchronous: a resumed batch checks many thousands before its first request,
 * and a few small reads each are quicker done in a row than queued.
 */
export function isCompleteJpegSync(path: string): { ok: boolean; bytes: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { ok: false, bytes: 0 };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size < 4) return { ok: false, bytes: info.size };
    // The check looks at the first bytes and the last ones: the start and the end are all it needs.
    const head = Buffer.alloc(Math.min(info.size, JPEG_CHECK_TAIL_BYTES));
    readSync(fd, head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(info.size, JPEG_CHECK_TAIL_BYTES));
    readSync(fd, tail, 0, tail.length, info.size - tail.length);
    const check = new JpegCheck();
    const ok = !check.add(head) && !check.add(tail) && !check.finish();
    return { ok, bytes: info.size };
  } catch {
    return { ok: false, bytes: 0 };
  } finally {
    closeSync(fd);
  }
}

export async function isCompleteJpeg(path: string): Promise<{ ok: boolean; bytes: number }> {
  return isCompleteJpegSync(path);
}

/**
 * Temp files a killed run left beside the given targets, to remove. Only
 * names of the exact temp pattern for these targets are touched
 * (file-names.ts); the targets are kept as a hash of their temp prefix per
 * directory, so a batch of any size can be swept.
 */
export class StaleParts {
  private readonly byDir = new Map<string, WordTable>();

  add(target: string): void {
    const dir = dirname(target);
    let prefixes = this.byDir.get(dir);
    if (!prefixes) this.byDir.set(dir, (prefixes = new WordTable(2, 0, 16)));
    prefixes.slotFor(textKey(partFilePrefix(basename(target))));
  }

  /** Removes them; says how many there were. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (const [dir, prefixes] of this.byDir) {
      let entries: string[];
      try {
        entries = await readdir(dir);
      } catch {
        continue;
      }
      for (const entry of entries) {
        const prefix = partFilePrefixOf(entry);
        if (prefix !== undefined && prefixes.find(textKey(prefix)) !== -1) {
          await unlink(join(dir, entry)).catch(() => {});
          removed++;
        }
      }
    }
    return removed;
  }
}

/** Removes temp files a killed run left beside the given targets (see StaleParts). */
export async function removeStaleParts(targets: Iterable<string>): Promise<number> {
  const stale = new StaleParts();
  for (const target of targets) stale.add(target);
  return stale.sweep();
}

/** An error saying `path` is not a regular file (a directory, a device, a FIFO), in the shape fs errors have. */
export function notRegular(path: string, isDirectory: boolean): NodeJS.ErrnoException {
  return Object.assign(new Error(`not a regular file: ${path}`), { code: isDirectory ? 'EISDIR' : 'ENOTREGULAR', syscall: 'read', path });
}

/**
 * Reads a file the CLI keeps (a manifest, an index): only a regular file, so a
 * device or directory put in its place is an error, not an endless read.
 * ENOENT passes through for the caller to treat as "none yet".
 */
export async function readRegularFile(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notRegular(path, info.isDirectory());
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
