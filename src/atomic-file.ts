// Crash-safe file replacement (the sandbox's state and images, the export
// index): a reader, or the next process, sees either the old file or the new
// one, never a torn write. Temp file, fsync, rename, fsync of the directory;
// writers that rename in one directory at the same time share that last fsync.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Every temp file ends so; a sweep at start removes the ones a crash left behind. */
export const TEMP_SUFFIX = '.tmp';

export async function writeFileAtomic(path: string, data: string | Buffer, mode = 0o600): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
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
