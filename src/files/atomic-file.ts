// Crash-safe file replacement (the sandbox's state and images, the export
// index): a reader, or the next process, sees either the old file or the new
// one, never a torn write. Temp file, fsync, rename, fsync of the directory;
// writers that rename in one directory at the same time share that last fsync.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { namingFile } from '../lifecycle/errors.js';

/** Every temp file ends so; a sweep at start removes the ones a crash left behind. */
export const TEMP_SUFFIX = '.tmp';

/**
 * Characters of small pieces gathered into one write. Kept well under V8's
 * large-object size (128 KiB; a character may take two bytes): a larger
 * joined string is made in the large-object space, where it stays, garbage,
 * until a full collection. Gathered at 256 KiB, the pieces of a 100,000-image
 * export's report piled up 10 MB there as the page was written.
 */
export const GATHERED_CHARS = 32 * 1024;

/**
 * A new directory in the OS temp directory (shared by every user on a login
 * node) for files aerial keeps while it runs: made by mkdtemp, so its name
 * ends in random characters, it is created exclusively (never one another
 * user made first, nor a link), and its mode is 0700, so no other user can
 * create, replace or link anything in it. Files in it are opened exclusively
 * too ('wx', mode 0600). The caller removes it.
 */
export function makePrivateTempDirectory(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function writeFileAtomic(path: string, data: string | Buffer, mode = 0o600): Promise<void> {
  await replaceAtomically(path, mode, (handle) => handle.writeFile(data));
}

/**
 * writeFileAtomic for a file too large to hold in memory as one string (an
 * export's index of 100,000 images): `write` hands its chunks to `append` as it
 * makes them; the temp file is renamed into place only once `write` has ended
 * and the data is synced. A `write` that throws leaves the old file.
 */
export async function writeFileAtomicStream(path: string, write: (append: (chunk: string) => Promise<void>) => Promise<void>, mode = 0o600): Promise<void> {
  await replaceAtomically(path, mode, async (handle) => {
    // Small chunks are gathered so that a line per image is not a write call per image.
    let pending: string[] = [];
    let pendingLength = 0;
    const flush = async (): Promise<void> => {
      if (pendingLength === 0) return;
      const data = pending.join('');
      pending = [];
      pendingLength = 0;
      await handle.write(data);
    };
    await write(async (chunk) => {
      pending.push(chunk);
      pendingLength += chunk.length;
      if (pendingLength >= GATHERED_CHARS) await flush();
    });
    await flush();
  });
}

/** Temp file filled by `fill`, fsync, rename over `path`, fsync of the directory; on any failure the temp file goes and the old file stays. */
async function replaceAtomically(path: string, mode: number, fill: (handle: FileHandle) => Promise<unknown>): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await open(temp, 'wx', mode);
  try {
    await fill(handle);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    // A write to the open temp file names no file: the file being written is `path`.
    throw namingFile(error, path);
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(path));
}

/**
 * Why a file that exists cannot be replaced, though it may still be written:
 * it is a mount point of its own (`docker run -v …/config.json:…`: the rename
 * over it fails with EBUSY), or it lives in a directory that takes no new file
 * (a read-only container root with the one file mounted writable: the temp
 * file fails with EROFS, EACCES or EPERM).
 */
const CANNOT_REPLACE = new Set(['EBUSY', 'EXDEV', 'EROFS', 'EACCES', 'EPERM']);

/**
 * writeFileAtomic, or, for an existing file that cannot be replaced (see
 * CANNOT_REPLACE), its bytes overwritten in place: written from the start,
 * cut to the new length and fsynced, and the old bytes put back if that fails
 * part way (a full disk), so an error never leaves a half-written file. The
 * caller holds a lock: nobody else writes it meanwhile. An in-place write
 * keeps the file's mode and owner, which belong to whoever mounted it.
 */
export async function writeFileAtomicOrInPlace(path: string, data: string | Buffer, mode = 0o600): Promise<'replaced' | 'in place'> {
  try {
    await writeFileAtomic(path, data, mode);
    return 'replaced';
  } catch (error) {
    if (!CANNOT_REPLACE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    let handle;
    try {
      handle = await open(path, 'r+');
    } catch (openError) {
      // Not there: the replacement's error says why. Not writable either (a read-only mount): its own does.
      throw (openError as NodeJS.ErrnoException).code === 'ENOENT' ? error : openError;
    }
    try {
      await overwrite(handle, Buffer.from(data));
    } finally {
      await handle.close();
    }
    return 'in place';
  }
}

async function overwrite(handle: FileHandle, data: Buffer): Promise<void> {
  const info = await handle.stat();
  if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREGULAR', syscall: 'open' });
  const old = await readFully(handle, Buffer.alloc(info.size));
  try {
    await writeFully(handle, data);
    await handle.truncate(data.length);
    await handle.sync();
  } catch (error) {
    // The old bytes fit where they were: put them back, then report what failed.
    await writeFully(handle, old)
      .then(() => handle.truncate(old.length))
      .then(() => handle.sync())
      .catch(() => {});
    throw error;
  }
}

/** The file's bytes from the start, as many as `into` holds (fewer if it ends first). */
async function readFully(handle: FileHandle, into: Buffer): Promise<Buffer> {
  let at = 0;
  while (at < into.length) {
    const { bytesRead } = await handle.read(into, at, into.length - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return into.subarray(0, at);
}

async function writeFully(handle: FileHandle, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length; ) {
    const { bytesWritten } = await handle.write(data, at, data.length - at, at);
    at += bytesWritten;
  }
}

/** Per directory: the fsync running now, and the one that will start when it ends. */
interface DirectorySyncs {
  running?: Promise<void>;
  next?: Promise<void>;
}
const directorySyncs = new Map<string, DirectorySyncs>();

/**
 * fsyncDirectory(dir), shared: a caller needs an fsync that starts after its
 * rename, so it starts one, or (when one is running, which may have started
 * too early) joins the next, which starts when the running one ends. Sixteen
 * images renamed at once into one directory cost two fsyncs, not sixteen.
 */
export function syncDirectory(dir: string): Promise<void> {
  let syncs = directorySyncs.get(dir);
  if (!syncs) directorySyncs.set(dir, (syncs = {}));
  if (syncs.next) return syncs.next;
  if (!syncs.running) return startDirectorySync(dir, syncs);
  const pending = syncs;
  const next = pending.running!.then(() => {
    pending.next = undefined;
    return startDirectorySync(dir, pending);
  });
  pending.next = next;
  return next;
}

function startDirectorySync(dir: string, syncs: DirectorySyncs): Promise<void> {
  const running = fsyncDirectory(dir).finally(() => {
    if (syncs.running === running) syncs.running = undefined;
    if (!syncs.running && !syncs.next) directorySyncs.delete(dir);
  });
  syncs.running = running;
  return running;
}

/** Makes a rename durable across power loss. Some platforms cannot open a directory; the rename is still atomic there. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Best effort by design (see above).
  } finally {
    await handle?.close().catch(() => {});
  }
}
