// The library's side of the one error taxonomy (api/errors.ts): every failure
// a call ends with reaches its caller as a RequestError with a machine code,
// whatever layer it came from, and says what can be done about it in the
// library's own words (its options, never the CLI's flags). An aborted call is
// an AbortError, one out of time a TimeoutError, each with its cause.
import { AbortError, FileError, fileErrorOf, InvalidInputError, RequestError, TimeoutError, type RemedyWords } from '../api/errors.js';
import { CliError, FileSystemError } from '../lifecycle/errors.js';

/** What a library user can do about a failure, in options (api/errors.ts, Remedy). */
export const LIBRARY_REMEDIES: RemedyWords = {
  overwrite: '; pass { overwrite: true } to replace it',
  retryUnsafe: ' (pass retry: { retryUnsafe: true } to send such a request again)',
  findLater: ' — look for it later with list() or images()',
};

/** Errors whose message already says their remedy in the library's words. */
const advised = new WeakSet<RequestError>();

/**
 * The message of a RequestError with its remedy in the library's words, once.
 * The error is the call's own, made for it below (a file refused, a
 * generation not sent again): it is told, not copied, so that its class,
 * code and cause stay what they are.
 */
function advise(error: RequestError): RequestError {
  if (error.remedy === undefined || advised.has(error)) return error;
  advised.add(error);
  const before = error.message;
  error.message = `${before}${LIBRARY_REMEDIES[error.remedy]}`;
  if (error.stack?.includes(before)) error.stack = error.stack.replace(before, error.message);
  return error;
}

/** How the call was stopped, when it was: the caller's signal, or the call's own deadline. */
export interface CallStop {
  /** The caller's signal. */
  signal?: AbortSignal;
  /** The deadline's signal, aborted with a TimeoutError once deadlineMs has passed. */
  deadline?: AbortSignal;
}

/**
 * `error` as a library call throws it: a RequestError of the taxonomy where
 * the failure has a name (the CLI's usage errors as InvalidInputError, a
 * system's refusal of a file as a FileError), the caller's abort as an
 * AbortError (a TimeoutError when its signal timed out), with the reason as
 * cause. Anything else is a bug, and passes as it is.
 */
export function publicError(error: unknown, stop: CallStop = {}): unknown {
  if (stop.deadline?.aborted) return stop.deadline.reason instanceof RequestError ? stop.deadline.reason : error;
  if (stop.signal?.aborted) {
    const reason: unknown = stop.signal.reason;
    if (reason instanceof RequestError) return advise(reason);
    const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
    return timedOut ? new TimeoutError('the call timed out (its signal)', 'Timeout', false, { cause: reason }) : new AbortError('the call was aborted (its signal)', { cause: reason });
  }
  if (error instanceof RequestError) return advise(error);
  // The config and setting checks the library shares with the CLI speak the CLI's classes; their words name no flag.
  if (error instanceof FileSystemError) return new FileError(error.message, error.code, undefined, { cause: error });
  if (error instanceof CliError) return new InvalidInputError(error.message, { cause: error });
  return fileErrorOf(error, 'cannot write the file', (error as { path?: string } | undefined)?.path) ?? error;
}
