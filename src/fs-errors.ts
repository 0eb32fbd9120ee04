// What a file-system error means to the person who chose the path: the
// conditions the CLI can name (permissions, space, a read-only disk, a file
// in the way) become one clear line with exit 2, never "unexpected".
import { UsageError } from './api/errors.js';

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
};

/** The person's words for a file-system error, or undefined when it is not one the CLI can name. */
export function fileSystemProblem(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? undefined : PROBLEMS[code];
}

/**
 * A usage error (exit 2) for an operation on a path that failed with a
 * nameable file-system error: "cannot write /x/y: no space left on the device".
 * Anything else is returned as it was.
 */
export function fileSystemError(error: unknown, doing: string, path: string, hint = ''): unknown {
  const problem = fileSystemProblem(error);
  return problem ? new UsageError(`cannot ${doing} ${path}: ${problem}${hint}`, 'FileSystemError') : error;
}
