// A path a writer may use only inside one directory, its root: the MCP
// server's --output-dir, whose file names come from a model that may have read
// hostile text. The name must be relative and plain (no `..`, no absolute
// path, nothing a line or a reader could be fooled by), and no link on the way
// may lead out of the root. The root itself is the caller's own choice: it is
// made if missing and taken as its real path.
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { FileError } from '../api/errors.js';
import { makeDirectories } from './directories.js';

// Control characters, line and paragraph separators, bidirectional marks and overrides (a name that
// reads as another), lone surrogates, and the backslash (a separator elsewhere, a trap here).
const NOT_PLAIN = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cs}\\]/u;

/** Whether `path` is `root` or lies under it (both real, absolute paths). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Where `name` lies inside `root`, for a writer that must never leave it: the
 * root made if missing and taken as its real path, then each directory of the
 * name that exists checked (a link among them must lead to a directory inside
 * the root), and the name itself, if it is a link, too. Directories of the
 * name that do not exist yet are left for the writer to make: they are inside
 * what was checked. Anything else is a FileError naming the name after
 * `label`, before anything is sent: an absolute path, `..`, an empty or
 * unprintable name (OutsideRoot, NotAPlainName), a link out (OutsideRoot) or
 * to nothing on the way (DanglingLink), a file where a directory must be
 * (NotADirectory).
 */
export async function confinedPath(root: string, name: string, label: string): Promise<string> {
  const what = `${label} ${JSON.stringify(name)}`;
  if (name.trim() === '' || NOT_PLAIN.test(name)) {
    throw new FileError(`${what} must be a plain file name: no control, line-separator or direction-override characters, no backslash`, 'NotAPlainName', name);
  }
  if (isAbsolute(name)) throw new FileError(`${what} is an absolute path; name a file inside the output directory`, 'OutsideRoot', name);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new FileError(`${what} climbs out with '..'; name a file inside the output directory`, 'OutsideRoot', name);
  if (parts.length === 0 || name.endsWith('/')) throw new FileError(`${what} must name a file, not a directory`, 'NotAFile', name);

  await makeDirectories(root).catch(() => {
    // Said by the realpath below, with the reason the system gives.
  });
  const top = await realpath(root).catch((error: unknown) => {
    throw new FileError(`the output directory ${root} cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Unusable', root, { cause: error });
  });
  const leadsOut = () => new FileError(`${what} leads out of the output directory through a symbolic link; name a file inside it`, 'OutsideRoot', name);

  let at = top;
  for (const [index, part] of parts.entries()) {
    const next = join(at, part);
    const last = index === parts.length - 1;
    let info;
    try {
      info = await lstat(next);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return join(next, ...parts.slice(index + 1));
      throw new FileError(`${what} cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Unusable', name, { cause: error });
    }
    if (info.isSymbolicLink()) {
      // Where it leads: a dangling link is left to the output checks, which say so; one out of the root is refused.
      const real = await realpath(next).catch(() => undefined);
      if (real === undefined) {
        if (last) return next;
        throw new FileError(`${what} goes through a symbolic link that leads nowhere; name a file inside the output directory`, 'DanglingLink', name);
      }
      if (!isInside(top, real)) throw leadsOut();
      at = last ? next : real;
      continue;
    }
    if (!last && !info.isDirectory()) throw new FileError(`${what}: part of that path is a file, not a directory`, 'NotADirectory', name);
    at = next;
  }
  return at;
}
