// Crash-safe file replacement (the sandbox's state, the export index): a reader,
// or the next process, sees either the old file or the new one, never a torn
// write. Temp file, fsync, rename, fsync of the directory.
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
  await fsyncDirectory(dirname(path));
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
