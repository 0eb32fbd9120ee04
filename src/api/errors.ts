// The one taxonomy of failures, for every face (the CLI, the library, the MCP
// server): what went wrong with a call, as the layers below the faces name it.
// An answer that refused it (its HTTP status, error code and Retry-After), no
// complete answer (and whether the service may have acted on the request
// anyway), an answer the client will not take, a generation the service
// reported failed, input that could not be sent, a file the call could not
// write, a call aborted or out of time. Each carries a machine `code`. None
// knows terminals, exit codes or flags: each face says a failure in its own
// words (the CLI's exit codes and lines in src/lifecycle/errors.ts, cliErrorOf;
// the library's option names in src/library/errors.ts; the MCP server's in its
// tools), including what the caller can do about it (`remedy`).

/**
 * Something the caller can do about a failure, which each face names its own
 * way (a flag, a library option, a tool argument): replace the file that is
 * there, send again a generation that may already have been charged, look for
 * an async generation's image later.
 */
export type Remedy = 'overwrite' | 'retryUnsafe' | 'findLater';

/** What a face says for each remedy, appended to the failure's message (its own punctuation first). */
export type RemedyWords = Readonly<Record<Remedy, string>>;

export interface RequestErrorDetails {
  /** The failure this one reports (a system error, the reason a signal aborted with). */
  cause?: unknown;
  remedy?: Remedy;
}

/** Every failure of a call: a machine-readable code, and the HTTP status when an answer carried one. */
export abstract class RequestError extends Error {
  /** The async request the failure concerns, when there is one (its callback never came, or reported an error). */
  readonly requestId?: string;
  /** What the caller can do about it, in no face's words (see RemedyWords). */
  readonly remedy?: Remedy;

  constructor(
    message: string,
    /** Machine-readable, e.g. ValidationFailed or InsufficientCredits. */
    readonly code: string,
    readonly status?: number,
    details: RequestErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    if (details.remedy !== undefined) this.remedy = details.remedy;
  }
}

/** The message of `error` with its remedy said in `words` (the message alone when it has none). */
export function withRemedy(error: RequestError, words: RemedyWords): string {
  return error.remedy === undefined ? error.message : `${error.message}${words[error.remedy]}`;
}

/**
 * The error codes the spec names and the client gives answers without one
 * (docs/library.md); a service may send others, which are kept as they are.
 */
export type ApiErrorCode = 'ValidationFailed' | 'Unauthorized' | 'InsufficientCredits' | 'Forbidden' | 'NotFound' | 'RateLimited' | 'ErrorGeneratingImage' | 'ServerError' | (string & {});

/** A non-2xx answer from the service. */
export class ApiError extends RequestError {
  declare readonly status: number;
  declare readonly code: ApiErrorCode;

  constructor(
    status: number,
    code: ApiErrorCode,
    message: string,
    /** Seconds the server asked us to wait (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, code, status);
  }
}

/** 400: the request failed the service's validation (a latitude out of range, a missing callback URL). */
export class ValidationFailed extends ApiError {}

/** 401: the API key is missing or not valid. */
export class Unauthorized extends ApiError {}

/** 402: the account has too few credits. */
export class InsufficientCredits extends ApiError {}

/** 403: the key may not do this. */
export class Forbidden extends ApiError {}

/** 404: no such image (a delete of an unknown id). */
export class NotFound extends ApiError {}

/** 429: too many requests; `retryAfterSeconds` says how long the service asked to wait. */
export class RateLimited extends ApiError {}

/** 5xx: the service failed (ErrorGeneratingImage, a gateway's 502, 503 or 504). */
export class ServerError extends ApiError {}

/**
 * The ApiError of an answer's status: a class per status the spec names, so a
 * caller can catch one with instanceof; the code is the body's, whatever it says.
 */
export function apiErrorFor(status: number, code: ApiErrorCode, message: string, retryAfterSeconds?: number): ApiError {
  const Kind =
    { 400: ValidationFailed, 401: Unauthorized, 402: InsufficientCredits, 403: Forbidden, 404: NotFound, 429: RateLimited }[status] ??
    (status >= 500 && status < 600 ? ServerError : ApiError);
  return new Kind(status, code, message, retryAfterSeconds);
}

/**
 * A temporary image URL (list `url`, webhook `signedUrl`) refused with 401,
 * 403, 404 or 410: expired or revoked, which says nothing about the API key.
 * A fresh listing gives a new one, where the image still exists.
 */
export class ImageUrlRefusedError extends ApiError {}

/** The request never got a complete answer: refused, reset, DNS, TLS or timed out. */
export class NetworkError extends RequestError {
  constructor(
    message: string,
    code = 'NetworkError',
    /** True when the request body may have reached the server (a retry could charge twice). */
    readonly maybeProcessed = false,
    details?: RequestErrorDetails,
  ) {
    super(message, code, undefined, details);
  }
}

/**
 * No answer in time: a stage of an attempt ran out (ConnectTimeout,
 * HeadersTimeout, BodyTimeout, ResponseTimeout), or the whole attempt (the
 * library's timeoutMs: AttemptTimeout); a callback never came (Timeout); a
 * call's deadline passed (Deadline); or the caller's own signal timed out
 * (Timeout, the signal's reason as its cause).
 */
export class TimeoutError extends NetworkError {}

/** The caller aborted the call (its signal's reason is the cause); what was on the wire was abandoned. */
export class AbortError extends RequestError {
  constructor(message = 'the call was aborted', details?: RequestErrorDetails) {
    super(message, 'Aborted', undefined, details);
  }
}

/**
 * An answer the client will not take: not what the spec describes (a
 * redirect, the wrong content type, unreadable JSON), over its size cap, a
 * corrupt image, paging that cannot end, or a download to a forbidden address.
 */
export class BadResponseError extends RequestError {}

/** The service reported that the generation failed (the async webhook's error payload). */
export class GenerationFailedError extends RequestError {
  constructor(code: string, message: string, details?: RequestErrorDetails) {
    super(message, code, undefined, details);
  }
}

/**
 * Input that cannot be sent: a request the scene vocabulary refuses, an image
 * id, a setting or option (a proxy variable, a timeout); nothing was sent.
 */
export class InvalidInputError extends RequestError {
  constructor(message: string, details?: RequestErrorDetails) {
    super(message, 'InvalidInput', undefined, details);
  }
}

/**
 * A file a call was to write cannot be. Either the target was refused before
 * anything was sent (it exists, it is a directory or a dangling link, it lies
 * outside the directory allowed), and `errno` is absent; or the system refused
 * it (no space, no permission, a read-only disk), and `errno` is the system's
 * code (ENOSPC, EACCES…). `code` names the problem for programs (AlreadyExists,
 * IsADirectory, OutsideRoot, NoSpace, PermissionDenied…), `path` the file.
 */
export class FileError extends RequestError {
  readonly errno?: string;

  constructor(
    message: string,
    code: string,
    readonly path?: string,
    details: RequestErrorDetails & { errno?: string } = {},
  ) {
    super(message, code, undefined, details);
    if (details.errno !== undefined) this.errno = details.errno;
  }
}

/**
 * The file-system errors a user must fix (permissions, space, a read-only
 * disk, a file in the way, a directory or device where a file must be), by
 * errno code: what they mean, and the code programs see.
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
 * What a system error means to a user and its code ("no space left on the
 * device", NoSpace), or undefined when it is not one a user must fix.
 */
export function fileSystemProblemOf(error: unknown): [problem: string, code: string] | undefined {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  // mkdir -p meets EEXIST only where a file stands in the way of a directory.
  if (code === 'EEXIST') return syscall === 'mkdir' ? FILE_SYSTEM_PROBLEMS.ENOTDIR : ['it already exists', 'AlreadyExists'];
  // makeDirectories makes one level at a time, its parent there: ENOENT is the file system refusing it (a directory under /proc).
  if (code === 'ENOENT' && syscall === 'mkdir') return ['the file system does not allow a directory there', 'CannotCreateDirectory'];
  return code === undefined ? undefined : FILE_SYSTEM_PROBLEMS[code];
}

/**
 * A system error as a FileError about `what` ("cannot write out.jpg: no space
 * left on the device"), or undefined when it is not one a user must fix. A
 * FileError passes as it is.
 */
export function fileErrorOf(error: unknown, what: string, path?: string): FileError | undefined {
  if (error instanceof FileError) return error;
  const known = fileSystemProblemOf(error);
  return known && new FileError(`${what}: ${known[0]}`, known[1], path, { errno: (error as NodeJS.ErrnoException).code, cause: error });
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
