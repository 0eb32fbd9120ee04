// Small file-system facts the batch and export need when resuming: is a file
// on disk a whole JPEG, and which temp files did a killed run leave behind.
import { open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JPEG_CHECK_TAIL_BYTES, JpegCheck } from '../api/jpeg-verifier.js';
import { partFilePrefix, partFilePrefixOf } from '../file-names.js';

/**
 * True when `path` is a regular file that starts with the JPEG signature and
 * ends with the end-of-image marker, by the image path's own check. Only
 * complete, verified files are ever moved into place, so this is enough to
 * tell our own output from an empty or truncated file someone else left there.
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
    // The check looks at the first bytes and the last ones: the start and the end are all it needs.
    const head = Buffer.alloc(Math.min(info.size, JPEG_CHECK_TAIL_BYTES));
    await handle.read(head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(info.size, JPEG_CHECK_TAIL_BYTES));
    await handle.read(tail, 0, tail.length, info.size - tail.length);
    const check = new JpegCheck();
    const ok = !check.add(head) && !check.add(tail) && !check.finish();
    return { ok, bytes: info.size };
  } finally {
    await handle.close();
  }
}

/**
 * Removes temp files a killed run left beside the given targets. Only names
 * of the exact temp pattern for these targets are touched (file-names.ts).
 */
export async function removeStaleParts(targets: Iterable<string>): Promise<number> {
  // Per directory, the prefixes of its targets' temp names.
  const byDir = new Map<string, Set<string>>();
  for (const target of targets) {
    const prefixes = byDir.get(dirname(target)) ?? new Set<string>();
    prefixes.add(partFilePrefix(basename(target)));
    byDir.set(dirname(target), prefixes);
  }
  let removed = 0;
  for (const [dir, prefixes] of byDir) {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const prefix = partFilePrefixOf(entry);
      if (prefix !== undefined && prefixes.has(prefix)) {
        await unlink(join(dir, entry)).catch(() => {});
        removed++;
      }
    }
  }
  return removed;
}

/** An error saying `path` is not a regular file (a directory, a device, a FIFO), in the shape fs errors have. */
function notRegular(path: string, isDirectory: boolean): NodeJS.ErrnoException {
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
