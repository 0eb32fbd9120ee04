// How long the client waits, per kind of call. A lookup (list, delete, init's
// test call) should fail within a minute or so when a server stops answering;
// a generation may legitimately take minutes to render before its first byte.
// Every limit is per stage (connect, response headers, body), so a timeout can
// say which stage ran out, and a lookup also has a budget for the whole call,
// retries and the waits between them included.
import { InvalidInputError } from './errors.js';

/** What a call is, for its limits: a quick lookup, a download of a signed image URL, or a generation. */
export type CallKind = 'lookup' | 'download' | 'generation';

/** The stage a timeout fired in, named in its message. */
export type Stage = 'connect' | 'headers' | 'body';

export interface CallLimits {
  /** Longest wait for response headers once the request is sent, per attempt. */
  headersMs: number;
  /** Longest silence while the body streams. */
  bodyIdleMs: number;
  /** Longest a whole body may take (a drip-fed body is never silent long enough for bodyIdleMs). */
  responseMs: number;
  /** Longest the whole call may take, every attempt and wait included; unbounded when absent. */
  totalMs?: number;
}

export interface Timeouts {
  /** Longest a connection may take to open (TCP, proxy tunnel, TLS handshake), each step. */
  connectMs: number;
  calls: Record<CallKind, CallLimits>;
}

/** A retry is not started with less time than this left of a call's budget. */
export const MIN_ATTEMPT_MS = 1000;

/**
 * A lookup is given up within 90 s: its budget (55 s) bounds the waits for
 * headers and body, and only the connection of the last attempt can run past
 * it, by at most its connect stages (3 × 10 s through a proxy tunnel: TCP to
 * the proxy, the proxy's answer to CONNECT, the TLS handshake). worstCaseMs
 * (retry.ts) works the bound out; a unit test holds it under 90 s. How many
 * attempts each kind of call gets is the retry policy's (retry.ts).
 */
export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 10_000,
  calls: {
    lookup: { headersMs: 20_000, bodyIdleMs: 20_000, responseMs: 60_000, totalMs: 55_000 },
    download: { headersMs: 30_000, bodyIdleMs: 60_000, responseMs: 10 * 60_000 },
    generation: { headersMs: 180_000, bodyIdleMs: 60_000, responseMs: 10 * 60_000 },
  },
};

/**
 * One limit for every stage of every call (AERIAL_TIMEOUT_MS). A lookup then
 * has no budget of its own: its bound is its attempts at that limit each.
 */
export function timeoutsOf(overrideMs?: number): Timeouts {
  if (overrideMs === undefined) return DEFAULT_TIMEOUTS;
  const limits: CallLimits = { headersMs: overrideMs, bodyIdleMs: overrideMs, responseMs: overrideMs };
  return { connectMs: overrideMs, calls: { lookup: limits, download: limits, generation: limits } };
}

/**
 * The clock of one call: what each attempt may wait, and whether another
 * attempt fits in what is left of the call's budget.
 */
export class CallBudget {
  private started: number;

  constructor(
    readonly limits: CallLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  elapsedMs(): number {
    return this.now() - this.started;
  }

  private leftMs(): number {
    return this.limits.totalMs === undefined ? Infinity : this.limits.totalMs - this.elapsedMs();
  }

  /** The header wait of an attempt starting now. */
  headersMs(): number {
    return Math.max(1, Math.min(this.limits.headersMs, this.leftMs()));
  }

  /** The deadline of a body whose headers arrived now. */
  responseMs(): number {
    return Math.max(1, Math.min(this.limits.responseMs, this.leftMs()));
  }

  /**
   * Leaves a wait the server asked for (a 429's Retry-After, capped on its
   * own) out of the budget, which bounds the time spent on a server that does
   * not answer.
   */
  exclude(waitMs: number): void {
    this.started += waitMs;
  }

  /** Whether a retry after waiting `waitMs` still leaves time for an attempt. */
  allowsRetry(waitMs: number): boolean {
    return this.leftMs() - waitMs >= MIN_ATTEMPT_MS;
  }
}

function seconds(ms: number): string {
  return ms >= 10_000 || ms % 1000 === 0 ? `${Math.round(ms / 1000)}s` : `${Number((ms / 1000).toFixed(1))}s`;
}

/** `3 attempts`, and over how long when there were several and that is known: `3 attempts in 55s`. */
export function attemptsText(attempts: number, elapsedMs?: number): string {
  const over = attempts > 1 && elapsedMs !== undefined ? ` in ${seconds(Math.round(elapsedMs / 100) * 100)}` : '';
  return `${attempts} attempt${attempts === 1 ? '' : 's'}${over}`;
}

/** The one line a timeout is reported with: the host, the stage, the limit that ran out, the attempts made. */
export function timeoutMessage(stage: Stage, host: string, limitMs: number, attempts: number, drip = false, elapsedMs?: number): string {
  const what =
    stage === 'connect'
      ? `timed out connecting to ${host}: no connection within ${seconds(limitMs)}`
      : stage === 'headers'
        ? `timed out waiting for response headers from ${host}: none within ${seconds(limitMs)}`
        : drip
          ? `timed out receiving the response body from ${host}: it did not finish within ${seconds(limitMs)}`
          : `timed out receiving the response body from ${host}: no data for ${seconds(limitMs)}`;
  return `${what} (${attemptsText(attempts, elapsedMs)})`;
}

export interface WaitSettings {
  timeouts: Timeouts;
  /** Longest Retry-After honoured, in seconds; the client's own cap when absent. */
  maxRetryAfterSeconds?: number;
}

/** Milliseconds a timer can hold (setTimeout fires at once beyond 2^31 - 1). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The environment's knobs for impatient CI and tests, checked before anything
 * is sent: AERIAL_TIMEOUT_MS (one limit for every stage, in milliseconds) and
 * AERIAL_MAX_RETRY_AFTER (seconds).
 */
export function readWaitSettings(env: Record<string, string | undefined>): WaitSettings {
  const timeout = env.AERIAL_TIMEOUT_MS;
  let overrideMs: number | undefined;
  if (timeout !== undefined && timeout !== '') {
    const text = timeout.trim();
    overrideMs = Number(text);
    if (!/^\d+$/.test(text) || overrideMs < 1 || overrideMs > MAX_TIMER_MS) {
      throw new InvalidInputError(`AERIAL_TIMEOUT_MS must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}; got '${timeout}'`);
    }
  }
  const retryAfter = env.AERIAL_MAX_RETRY_AFTER;
  let maxRetryAfterSeconds: number | undefined;
  if (retryAfter !== undefined && retryAfter !== '') {
    const text = retryAfter.trim();
    maxRetryAfterSeconds = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || maxRetryAfterSeconds > MAX_TIMER_MS / 1000) {
      throw new InvalidInputError(`AERIAL_MAX_RETRY_AFTER must be a number of seconds from 0 to ${Math.floor(MAX_TIMER_MS / 1000)}; got '${retryAfter}'`);
    }
  }
  return { timeouts: timeoutsOf(overrideMs), maxRetryAfterSeconds };
}
