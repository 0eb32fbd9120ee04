// What to do after a failed attempt: retry (and after how long), give the row
// up, or stop the whole batch. Shared by batch and export.
import { ApiError, CliError, ExitCode, fileSystemFailure, GenerationFailedError, NetworkError, UsageError } from '../api/errors.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Delay before the first retry; doubled for each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After beyond this is capped, so a server cannot park the batch for hours. */
  maxRetryAfterMs: number;
  /** Retry requests the service may already have acted on (and charged for). */
  retryUnsafe: boolean;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  retryUnsafe: false,
};

/**
 * Where an attempt failed: before a response arrived ('request'), or while
 * its body was being received ('response' — the service has done the work).
 */
export type Phase = 'request' | 'response';

export type Decision =
  | { action: 'retry'; delayMs: number; /** 429: every worker should wait, not just this row. */ pauseAll: boolean }
  | { action: 'fail'; error: CliError }
  | { action: 'stop'; error: CliError };

/** Exponential backoff with "equal jitter": half fixed, half random, so workers do not retry in lockstep. */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The request may have been processed, so sending it again may charge again. */
export class MaybeChargedError extends NetworkError {
  constructor(cause: CliError) {
    super(
      `${cause.message}; the service may already have generated (and charged for) this image, so it was not retried (pass --retry-unsafe to retry such rows)`,
      cause.code,
      true,
    );
  }
}

const NETWORK_CODE = /^(UND_ERR|ECONN|EPIPE|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|EAI_)/;

export function toCliError(error: unknown, phase: Phase): CliError {
  if (error instanceof CliError) return error;
  const err = error as { code?: string; message?: string };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  if (code && NETWORK_CODE.test(code)) {
    // A stream error while the body was arriving: the connection broke after the service answered.
    const where = phase === 'response' ? 'while receiving the image' : 'before an answer arrived';
    return new NetworkError(`connection failed ${where} (${code})${err.message ? `: ${err.message}` : ''}`, code, true);
  }
  // A full disk or a permission error is not something a retry fixes; it is named, not "unexpected".
  return fileSystemFailure(error) ?? new CliError(err?.message ?? String(error), ExitCode.Unexpected, code ?? 'Unexpected');
}

/**
 * `retry` counts the retries this row has had so far (0 after the first attempt).
 * 400 and other client errors are final; 401/403/402 stop the batch because every
 * further row would be refused the same way.
 */
export function decide(error: unknown, phase: Phase, retry: number, policy: RetryPolicy, random = Math.random): Decision {
  const failure = toCliError(error, phase);
  const exhausted = retry >= policy.maxRetries;

  if (failure instanceof ApiError) {
    const status = failure.status ?? 0;
    if (status === 401 || status === 403 || status === 402) return { action: 'stop', error: failure };
    if (status === 429) {
      if (exhausted) return { action: 'fail', error: failure };
      const asked = failure.retryAfterSeconds;
      const delayMs =
        asked === undefined
          ? backoffDelay(retry + 1, policy, random)
          : // At least what the server asked, plus a little spread so the pool does not return as one burst.
            Math.min(policy.maxRetryAfterMs, asked * 1000) + Math.round(random() * Math.min(250, policy.baseDelayMs));
      return { action: 'retry', delayMs, pauseAll: true };
    }
    if (status >= 500 && !exhausted) return { action: 'retry', delayMs: backoffDelay(retry + 1, policy, random), pauseAll: false };
    return { action: 'fail', error: failure };
  }

  // An async generation reported failed by webhook: the service's 500, delivered late.
  if (failure instanceof GenerationFailedError) {
    return exhausted ? { action: 'fail', error: failure } : { action: 'retry', delayMs: backoffDelay(retry + 1, policy, random), pauseAll: false };
  }
  if (failure instanceof UsageError) return { action: 'fail', error: failure };

  // Everything after the response started, and a connection that broke after the body was sent,
  // may have been charged: the row is retried only when the user accepts paying twice.
  const maybeCharged = phase === 'response' || (failure instanceof NetworkError && failure.maybeProcessed);
  const transient = failure instanceof NetworkError || failure.code === 'InvalidImage';
  if (!transient) return { action: 'fail', error: failure };
  if (maybeCharged && !policy.retryUnsafe) return { action: 'fail', error: failure instanceof MaybeChargedError ? failure : new MaybeChargedError(failure) };
  if (exhausted) return { action: 'fail', error: failure };
  return { action: 'retry', delayMs: backoffDelay(retry + 1, policy, random), pauseAll: false };
}

/** When a row gives up after retries, say so in its reason. */
export function describeFailure(error: CliError, attempts: number): string {
  const what = error instanceof ApiError || error.status !== undefined ? `${error.code}: ${error.message}` : error.message;
  return attempts > 1 ? `${what} (after ${attempts} attempts)` : what;
}
