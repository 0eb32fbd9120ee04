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

// What a file-system error means to the person who chose the path: the
// conditions the CLI can name (permissions, space, a read-only disk, a file
// in the way, a directory or device where a file must be) become one clear
// line with exit 2, never "unexpected".
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
