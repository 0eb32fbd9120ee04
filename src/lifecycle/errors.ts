// The CLI's errors and the documented exit codes. Everything the CLI can fail
// with reaches the entry point as a CliError carrying its exit code, so it
// needs one catch. The failures of the layers below (api/errors.ts: answers,
// no answer, input not sent, files not written, aborts) know nothing of exit
// codes or flags: cliErrorOf() below is the one place where they get theirs,
// and where what the user can do about them is said in flags.
import { AbortError, ApiError, FileError, fileSystemProblemOf, InvalidInputError, NetworkError, RequestError, withRemedy, type RemedyWords } from '../api/errors.js';

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

export interface CliErrorDetails {
  /** The RequestError this one reports (cliErrorOf). */
  cause?: RequestError;
  /** The async request it concerns, for scripts (`--json`). */
  requestId?: string;
}

export class CliError extends Error {
  readonly requestId?: string;

  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    /** Machine-readable code, e.g. ValidationFailed or InsufficientCredits. */
    readonly code: string,
    /** HTTP status when the error came from a response. */
    readonly status?: number,
    details: CliErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.requestId = details.requestId;
  }

  /** The error object `--json` prints on stderr. */
  toJSON(): { status: number | null; error: string; message: string; exitCode: number; requestId?: string } {
    const json = { status: this.status ?? null, error: this.code, message: this.message, exitCode: this.exitCode };
    return this.requestId === undefined ? json : { ...json, requestId: this.requestId };
  }
}

/** Bad flags or values, caught before anything is sent. */
export class UsageError extends CliError {
  constructor(message: string, code = 'UsageError', details?: CliErrorDetails) {
    super(message, ExitCode.Usage, code, undefined, details);
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
 * An image that was generated but could not be downloaded from its signedUrl
 * (after the download's own retries): never a reason to generate it again. No
 * answer is a network failure (7); anything else, a refused or expired URL
 * included, is the service's failure (6): it says nothing about the API key
 * or the request, so it is never reported as the service refusing them.
 */
export class GeneratedImageDownloadError extends CliError {
  constructor(failure: RequestError | CliError) {
    super(`downloading the generated image failed: ${failure.message}`, failure instanceof NetworkError ? ExitCode.Network : ExitCode.Server, failure.code);
  }
}

/**
 * `error` as a FileSystemError about `what` ("cannot write out.jpg: no space
 * left on the device"), or undefined when it is not one a user must fix.
 */
export function fileSystemError(error: unknown, what: string): FileSystemError | undefined {
  if (error instanceof FileSystemError) return error;
  // A system's refusal the files layer already named (jpeg-file.ts): its words, the CLI's class.
  if (error instanceof FileError) return error.errno === undefined ? undefined : new FileSystemError(error.message, error.code);
  const known = fileSystemProblemOf(error);
  return known && new FileSystemError(`${what}: ${known[0]}`, known[1]);
}

/** What a file-system error means to a user ("permission denied"), or undefined when it is not one they must fix. */
export function fileSystemProblem(error: unknown): string | undefined {
  return fileSystemProblemOf(error)?.[0];
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
 * `error` naming `path` when it names no file: a call on an open file (a write
 * to a full disk) fails without saying which, and fileSystemFailure names what
 * the error carries. Returns the error, to be thrown again.
 */
export function namingFile(error: unknown, path: string): unknown {
  if (error instanceof Error && (error as NodeJS.ErrnoException).code !== undefined && !('path' in error)) Object.assign(error, { path });
  return error;
}

/**
 * A file-system error from anywhere (a full disk mid-download, a directory
 * where an index must go) as a FileSystemError naming what it was doing and
 * where, from the error itself; undefined when it is not one the CLI can name.
 */
export function fileSystemFailure(error: unknown): FileSystemError | undefined {
  if (error instanceof FileSystemError || error instanceof FileError) return fileSystemError(error, '');
  const { syscall, path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: string };
  const verb = (syscall && DOING[syscall]) ?? 'use';
  // A rename puts a finished temp file in place: the place is what the person knows.
  const where = dest ?? path;
  return fileSystemError(error, `cannot ${verb}${where ? ` ${where}` : ''}`);
}

/**
 * The exit code of an answer's HTTP status: 2 for a refusal of the request,
 * 3 for the key, 4 for credits, 5 for what is not there, 7 for a timeout,
 * 8 for a rate limit, 6 for the service's own failure and anything else.
 */
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

/** What a user of the CLI can do about a failure, in flags (api/errors.ts, Remedy). */
export const CLI_REMEDIES: RemedyWords = {
  overwrite: '; pass --force to overwrite',
  retryUnsafe: ' (pass --retry-unsafe to retry such rows)',
  findLater: " — look for it later with 'aerial list'",
};

/**
 * What a failure of the layers below means to the CLI, and the one place
 * where it is decided: an answer's status gives its exit code
 * (exitCodeForStatus), no complete answer is 7, an answer the CLI will not
 * take and a generation the service reported failed are 6, input that could
 * not be sent and an output refused before sending are usage errors, a file
 * the system would not write is a FileSystemError (2, named by its code), and
 * an aborted call is the reason it was aborted with. Code, status and request
 * id stay as they are, and the message too, with the remedy said in flags;
 * the RequestError is the CliError's cause.
 */
export function cliErrorOf(error: RequestError): CliError {
  const message = withRemedy(error, CLI_REMEDIES);
  if (error instanceof InvalidInputError) return new UsageError(message, 'UsageError', { cause: error });
  if (error instanceof FileError) {
    if (error.errno === 'EPIPE') return new BrokenPipeError();
    return error.errno === undefined ? new UsageError(message, 'UsageError', { cause: error }) : new FileSystemError(message, error.code);
  }
  if (error instanceof AbortError) return error.cause instanceof CliError ? error.cause : new InterruptedError();
  const exitCode = error instanceof ApiError ? exitCodeForStatus(error.status) : error instanceof NetworkError ? ExitCode.Network : ExitCode.Server;
  return new CliError(message, exitCode, error.code, error.status, { cause: error, requestId: error.requestId });
}

/** `error` as the CLI reports it, when the CLI or the layers below named it; undefined for anything else (a bug, a raw system error). */
export function asCliError(error: unknown): CliError | undefined {
  if (error instanceof CliError) return error;
  if (error instanceof RequestError) return cliErrorOf(error);
  return undefined;
}
