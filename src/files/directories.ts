// `mkdir -p` that says why it failed. Node's recursive mkdir reports ENOENT for
// a directory it could not make under a read-only mount (Node 20 to 26), which
// reads as a bug rather than as the read-only disk it is.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Makes `dir` and any missing parents (each new one with `mode`), and returns
 * the first directory it made, as `mkdir -p` does (undefined when none was
 * missing). On a failure Node reports as ENOENT, the first missing directory
 * is made on its own, so the error thrown is the one the system gives for it
 * (EROFS, EACCES…).
 */
export async function makeDirectories(dir: string, mode?: number): Promise<string | undefined> {
  try {
    return await mkdir(dir, { recursive: true, mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const first = await firstMissing(dir);
    await mkdir(first, { mode });
    // That worked after all (a race): the whole path, once more.
    await mkdir(dir, { recursive: true, mode });
    return first;
  }
}

/** The outermost directory of `dir`'s path that does not exist. */
async function firstMissing(dir: string): Promise<string> {
  let missing = dir;
  for (let parent = dirname(dir); parent !== missing; parent = dirname(parent)) {
    const exists = await stat(parent).then(
      () => true,
      () => false,
    );
    if (exists) return missing;
    missing = parent;
  }
  return missing;
}
