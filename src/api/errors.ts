// Typed errors and the documented exit codes. Everything the CLI can fail with
// is a CliError carrying its exit code, so the entry point needs one catch.

export const ExitCode = {
  Ok: 0,
  Unexpected: 1,
  Usage: 2,
  Auth: 3,
  Credits: 4,
  NotFound: 5,
  Server: 6,
  Network: 7,
  RateLimited: 8,
  Interrupted: 130,
  /** The reader of stdout or stderr went away (`| head`): what a shell reports for a process ended by SIGPIPE. */
  BrokenPipe: 141,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    /** Machine-readable code, e.g. ValidationFailed or InsufficientCredits. */
    readonly code: string,
    /** HTTP status when the error came from a response. */
    readonly status?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { status: number | null; error: string; message: string; exitCode: number } {
    return { status: this.status ?? null, error: this.code, message: this.message, exitCode: this.exitCode };
  }
}

/** Bad flags or values, caught before anything is sent. */
export class UsageError extends CliError {
  constructor(message: string, code = 'UsageError') {
    super(message, ExitCode.Usage, code);
  }
}

/** A non-2xx answer from the service. */
export class ApiError extends CliError {
  constructor(
    status: number,
    code: string,
    message: string,
    /** Seconds the server asked us to wait (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, exitCodeForStatus(status), code, status);
  }
}

/**
 * A temporary image URL (list `url`, webhook `signedUrl`) refused with 401,
 * 403, 404 or 410: expired or revoked, which says nothing about the API key.
 * A fresh listing gives a new one, where the image still exists.
 */
export class ImageUrlRefusedError extends ApiError {}

/** The request never got a complete answer: refused, reset, DNS, TLS or timed out. */
export class NetworkError extends CliError {
  constructor(
    message: string,
    code = 'NetworkError',
    /** True when the request body may have reached the server (a retry could charge twice). */
    readonly maybeProcessed = false,
  ) {
    super(message, ExitCode.Network, code);
  }
}

/** The async generation finished with the webhook error payload. */
export class GenerationFailedError extends CliError {
  constructor(code: string, message: string) {
    super(message, ExitCode.Server, code);
  }
}

export class InterruptedError extends CliError {
  constructor() {
    super('interrupted', ExitCode.Interrupted, 'Interrupted');
  }
}

/** stdout or stderr lost its reader; the command ends quietly (there may be nobody left to tell). */
export class BrokenPipeError extends CliError {
  constructor() {
    super('the reader of the output went away', ExitCode.BrokenPipe, 'BrokenPipe');
  }
}

/**
 * A file the CLI must write cannot be written: disk full, read-only, no
 * permission, name too long. Not a bug, and not fixed by trying again: the user
 * must make room or choose another place, so exit 2 like other client-side problems.
 */
export class FileSystemError extends CliError {
  constructor(message: string, code: string) {
    super(message, ExitCode.Usage, code);
  }
}

/**
 * The file-system errors a user must fix (permissions, space, a read-only
 * disk, a file in the way, a directory or device where a file must be), by
 * errno code: what they mean, and the error code scripts see.
 */
const FILE_SYSTEM_PROBLEMS: Record<string, [problem: string, code: string]> = {
  ENOSPC: ['no space left on the device', 'NoSpace'],
  EDQUOT: ['disk quota exceeded', 'QuotaExceeded'],
  EFBIG: ['the file is too large for the file system', 'FileTooLarge'],
  EROFS: ['the file system is read-only', 'ReadOnlyFileSystem'],
  EACCES: ['permission denied', 'PermissionDenied'],
  EPERM: ['operation not permitted', 'PermissionDenied'],
  ENAMETOOLONG: ['the name is too long for the file system', 'NameTooLong'],
  ENOTDIR: ['a file is in the way, where a directory must be', 'NotADirectory'],
  EISDIR: ['it is a directory', 'IsADirectory'],
  ELOOP: ['too many levels of symbolic links', 'SymlinkLoop'],
  EMFILE: ['too many open files', 'TooManyOpenFiles'],
  ENFILE: ['too many open files', 'TooManyOpenFiles'],
  EIO: ['the device reported an input/output error', 'DeviceError'],
  ENXIO: ['no such device', 'NoSuchDevice'],
  ENODEV: ['no such device', 'NoSuchDevice'],
  ENOTREGULAR: ['it is not a regular file', 'NotARegularFile'],
};

/**
 * `error` as a FileSystemError about `what` ("cannot write out.jpg: no space
 * left on the device"), or undefined when it is not one a user must fix.
 */
export function fileSystemError(error: unknown, what: string): FileSystemError | undefined {
  if (error instanceof FileSystemError) return error;
  const known = knownProblem(error);
  return known && new FileSystemError(`${what}: ${known[0]}`, known[1]);
}

/** What a file-system error means to a user ("permission denied"), or undefined when it is not one they must fix. */
export function fileSystemProblem(error: unknown): string | undefined {
  return knownProblem(error)?.[0];
}

function knownProblem(error: unknown): [problem: string, code: string] | undefined {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  // mkdir -p meets EEXIST only where a file stands in the way of a directory.
  if (code === 'EEXIST') return syscall === 'mkdir' ? FILE_SYSTEM_PROBLEMS.ENOTDIR : ['it already exists', 'AlreadyExists'];
  return code === undefined ? undefined : FILE_SYSTEM_PROBLEMS[code];
}

/** What a failed system call was doing, in the words of the person who chose the path. */
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
 * where an index must go) as a FileSystemError naming what it was doing and
 * where, from the error itself; undefined when it is not one the CLI can name.
 */
export function fileSystemFailure(error: unknown): FileSystemError | undefined {
  if (error instanceof FileSystemError) return error;
  const { syscall, path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: string };
  const verb = (syscall && DOING[syscall]) ?? 'use';
  // A rename puts a finished temp file in place: the place is what the person knows.
  const where = dest ?? path;
  return fileSystemError(error, `cannot ${verb}${where ? ` ${where}` : ''}`);
}

export function exitCodeForStatus(status: number): ExitCodeValue {
  if (status === 400 || status === 422) return ExitCode.Usage;
  if (status === 401 || status === 403) return ExitCode.Auth;
  if (status === 402) return ExitCode.Credits;
  if (status === 404) return ExitCode.NotFound;
  if (status === 429) return ExitCode.RateLimited;
  if (status === 408 || status === 504) return ExitCode.Network;
  if (status === 410) return ExitCode.NotFound;
  // Any other refusal of the request (405, 409, 413, 414, 431…) is the service saying it will not take it.
  if (status >= 400 && status < 500) return ExitCode.Usage;
  // 5xx, and anything else the spec does not describe: the service's failure, not a bug of the CLI.
  return ExitCode.Server;
}

/** Error code used when a response body does not carry one (401 bodies are not shown in the spec). */
export function defaultCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'ValidationFailed';
    case 401:
      return 'Unauthorized';
    case 402:
      return 'InsufficientCredits';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 429:
      return 'RateLimited';
    default:
      return status >= 500 ? 'ServerError' : `Http${status}`;
  }
}
