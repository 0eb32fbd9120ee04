// `mkdir -p`, one level at a time, that says why it failed. Node's own
// recursive mkdir is not used: on Node 20 to 24 it loops for ever where the
// system answers ENOENT for a directory whose parent exists (`/proc/nope`),
// and on every line it reports ENOENT for a directory it could not make under
// a read-only mount. Here each level is looked at once and made once, so the
// work is bounded by the depth of the path, and a failure is the system's own
// answer for the level it concerns.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Makes `dir` and any missing parents (each new one with `mode`), and returns
 * the first directory it made, in the form `dir` was given in, as `mkdir -p`
 * does (undefined when none was missing). A level the system will not make
 * fails with its own error (EROFS, EACCES…); one it refuses with ENOENT
 * although its parent is there (a directory under /proc) fails with ENOENT
 * naming that level; a file in the way fails with ENOTDIR naming the file.
 */
export async function makeDirectories(dir: string, mode?: number): Promise<string | undefined> {
  const missing = await missingLevels(dir);
  for (const level of missing) {
    try {
      await mkdir(level, { mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Made by someone else in the meantime: as good as made here, if it is a directory.
      if (code === 'EEXIST' && (await isDirectory(level))) continue;
      if (code === 'EEXIST') throw errnoError('ENOTDIR', 'not a directory', level);
      throw error;
    }
  }
  return missing[0];
}

/** The levels of `dir` that do not exist yet, outermost first: one stat for each, up to the first that exists. */
async function missingLevels(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let level = dir; ; level = dirname(level)) {
    let info;
    try {
      info = await stat(level);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOTDIR: a file further up is in the way; the walk up finds it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    if (info) {
      if (!info.isDirectory()) throw errnoError('ENOTDIR', 'not a directory', level);
      return missing.reverse();
    }
    missing.push(level);
    // The root itself missing (a path of a chroot being taken apart): nothing above to make it in.
    if (dirname(level) === level) return missing.reverse();
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

function errnoError(code: string, description: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${description}, mkdir '${path}'`), { code, syscall: 'mkdir', path });
}
