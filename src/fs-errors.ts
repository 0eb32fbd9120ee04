// What a file-system error means to the person who chose the path: the
// conditions the CLI can name (permissions, space, a read-only disk, a file
// in the way, a directory or device where a file must be) become one clear
// line with exit 2, never "unexpected".
import { open } from 'node:fs/promises';
import { CliError, UsageError } from './api/errors.js';

const PROBLEMS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file is too large for the file system',
  ENAMETOOLONG: 'the name is too long',
  ENOTDIR: 'a file is in the way, where a directory must be',
  EISDIR: 'it is a directory',
  ELOOP: 'too many levels of symbolic links',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EIO: 'the device reported an input/output error',
  ENXIO: 'no such device',
  ENODEV: 'no such device',
  ENOTREGULAR: 'it is not a regular file',
};

/** The person's words for a file-system error, or undefined when it is not one the CLI can name. */
export function fileSystemProblem(error: unknown): string | undefined {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  // mkdir -p meets EEXIST only where a file stands in the way of a directory.
  if (code === 'EEXIST') return syscall === 'mkdir' ? PROBLEMS.ENOTDIR : 'it already exists';
  return code === undefined ? undefined : PROBLEMS[code];
}

const DOING: Record<string, string> = {
  open: 'open',
  read: 'read',
  write: 'write',
  rename: 'write',
  link: 'write',
  copyfile: 'write',
  mkdir: 'create directory',
  unlink: 'remove',
  rmdir: 'remove',
  scandir: 'read directory',
  stat: 'read',
  lstat: 'read',
  access: 'use',
  fsync: 'save',
  fdatasync: 'save',
};

/**
 * A file-system error from anywhere (a full disk mid-download, a directory
 * where an index must go) as a usage error naming what it was doing and
 * where; undefined when the error is not one the CLI can name.
 */
export function fileSystemFailure(error: unknown): CliError | undefined {
  const problem = fileSystemProblem(error);
  if (!problem) return undefined;
  const { syscall, path, dest } = error as NodeJS.ErrnoException & { dest?: string };
  const verb = (syscall && DOING[syscall]) ?? 'use';
  // A rename puts a finished temp file in place: the place is what the person knows.
  const where = dest ?? path;
  return new UsageError(`cannot ${verb}${where ? ` ${where}` : ''}: ${problem}`, 'FileSystemError');
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
