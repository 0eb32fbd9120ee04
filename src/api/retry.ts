// The one retry engine. Every request the CLI makes is tried under a policy:
// how many attempts each kind of call gets, how long to wait between them
// (exponential backoff with jitter, or what a 429's Retry-After asks, capped),
// and which failures are worth another attempt at all. A generation the
// service may already have carried out (and charged for) is never sent again
// unless the policy says so (retryUnsafe: the CLI's --retry-unsafe).
//
// Single commands use DEFAULT_RETRY_POLICY; batch and export make theirs with
// persistentPolicy() and hand it to the client. A unit of work bigger than one
// call (a batch row, an async generation) runs through the same engine with
// hooks of its own: room on the wire (a batch's slot), a stop that lets what is
// on the wire finish, progress.
import { ApiError, GenerationFailedError, NetworkError, type RequestError } from './errors.js';
import { CorruptImageError } from './jpeg-verifier.js';
import { isTransient } from './network-failure.js';
import { sleep, type Sleep } from './sleep.js';
import { CallBudget, type CallKind, type CallLimits } from './timeouts.js';
import { PauseGate, UNLIMITED_WIRE, type WireLimiter } from './wire-limiter.js';

export interface RetryPolicy {
  /** Most attempts of one call, by kind, when it got no answer or a 5xx worth repeating. */
  attempts: Record<CallKind, number>;
  /** Most attempts of a call the service keeps refusing with 429. Every attempt of the call counts. */
  rateLimitedAttempts: number;
  /** The 5xx worth another attempt: gateway errors (502-504), or every one (the service's own failures too). */
  serverErrors: 'gateway' | 'all';
  /** Whether a response whose body broke off or failed its checks is asked for again. */
  retryBrokenBodies: boolean;
  /** Whether a generation the service may already have carried out, and charged for, is sent again. */
  retryUnsafe: boolean;
  /** The first backoff; doubled for each further retry, up to maxDelayMs, with "equal jitter". */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After beyond this is capped, so a hostile server cannot park us for a year. */
  maxRetryAfterMs: number;
  /** Shared by every call under the policy: a 429 pauses them all, not only the one refused. */
  pause?: PauseGate;
  /**
   * Shared by every call under the policy (a batch): how many attempts may be on
   * the wire at once, adapted to the 429s met, and how fast they may start (--rate).
   */
  wire?: WireLimiter;
  /** How waits are made; injectable so tests need not wait. */
  sleep?: Sleep;
}

/**
 * Single commands: a lookup or download that got no answer is tried 3 times
 * (within its budget, timeouts.ts), a generation once, since it may have been
 * charged; a gateway error is retried like no answer, and a 429 up to 3 times.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: { lookup: 3, download: 3, generation: 1 },
  rateLimitedAttempts: 4,
  serverErrors: 'gateway',
  retryBrokenBodies: false,
  retryUnsafe: false,
  firstDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
};

/** --max-retries, --retry-delay: their defaults, and the longest first delay that still changes anything. */
export const PERSISTENT_RETRIES = { maxRetries: 5, firstDelayMs: 500, maxDelayMs: 30_000 } as const;

/**
 * Batch and export: every request is retried up to `maxRetries` times on 429,
 * any 5xx, resets, timeouts and broken bodies; a 429 pauses every request.
 * Generations that may have been charged are sent again only with `retryUnsafe`.
 */
export function persistentPolicy(options: {
  maxRetries: number;
  firstDelayMs: number;
  retryUnsafe: boolean;
  onPause?: (ms: number) => void;
  /** Room on the wire shared by every call (a batch's --concurrency and --rate); none when absent. */
  wire?: WireLimiter;
}): RetryPolicy {
  const attempts = options.maxRetries + 1;
  return {
    attempts: { lookup: attempts, download: attempts, generation: attempts },
    rateLimitedAttempts: attempts,
    serverErrors: 'all',
    retryBrokenBodies: true,
    retryUnsafe: options.retryUnsafe,
    firstDelayMs: options.firstDelayMs,
    maxDelayMs: PERSISTENT_RETRIES.maxDelayMs,
    maxRetryAfterMs: DEFAULT_RETRY_POLICY.maxRetryAfterMs,
    pause: new PauseGate(options.onPause),
    wire: options.wire,
  };
}

/** The longest wait before retry `retry` (1 for the first): the first delay, doubled each time, capped. */
export function backoffCeilingMs(retry: number, policy: Pick<RetryPolicy, 'firstDelayMs' | 'maxDelayMs'>): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, retry - 1));
}

/** Exponential backoff with "equal jitter": half fixed, half random, so callers do not retry in lockstep. */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, 'firstDelayMs' | 'maxDelayMs'>, random = Math.random): number {
  const ceiling = backoffCeilingMs(retry, policy);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** One attempt of a unit of work, as the work sees it. */
export interface Attempt {
  /** 1 for the first. */
  readonly number: number;
  /** Set once a successful answer began to arrive: a failure from then on came after the service did the work. */
  answered: boolean;
  /** Set when what the attempt did cannot be taken back (an image half on standard output): it is never repeated. */
  final?: boolean;
}

export type Verdict =
  | { retry: true; delayMs: number; rateLimited: boolean; /** What a 429 asked for, in seconds, when it was capped. */ cappedRetryAfter?: number }
  | { retry: false; error: unknown };

/**
 * The request may have been carried out, so sending it again may charge
 * again. Its remedy is the policy's retryUnsafe, which each face names (the
 * CLI's --retry-unsafe, the library's retry: { retryUnsafe: true }).
 */
export class MaybeChargedError extends NetworkError {
  constructor(cause: RequestError) {
    super(`${cause.message}; the service may already have generated (and charged for) this image, so it was not retried`, cause.code, true, { cause, remedy: 'retryUnsafe' });
  }
}

/** The stop came before the next attempt: nothing more was sent. `attempts` were made before it. */
export class NotRetriedError extends Error {
  constructor(
    readonly attempts: number,
    readonly lastError?: unknown,
  ) {
    super(attempts === 0 ? 'not started: interrupted' : 'not retried: interrupted');
    this.name = 'NotRetriedError';
  }
}

/**
 * Whether the failure of `attempt` (of a call of `kind`) is worth another
 * attempt under `policy`, and after how long. Only failures another attempt
 * can mend are retried: no answer or a broken one, a 429, a 5xx, a generation
 * the service reported failed. Everything else (a refusal, a file that cannot
 * be written, a bug) ends the work at once.
 */
export function judge(error: unknown, attempt: Attempt, kind: CallKind, policy: RetryPolicy, budget?: CallBudget, random = Math.random): Verdict {
  const fail: Verdict = { retry: false, error };
  if (attempt.final) return fail;
  const backoff = (): Verdict => {
    const delayMs = backoffDelay(attempt.number, policy, random);
    return budget && !budget.allowsRetry(delayMs) ? fail : { retry: true, delayMs, rateLimited: false };
  };
  const allowed = attempt.number < policy.attempts[kind];

  if (error instanceof ApiError && error.status === 429) {
    if (attempt.number >= policy.rateLimitedAttempts) return fail;
    const asked = error.retryAfterSeconds;
    if (asked === undefined) return { retry: true, delayMs: backoffDelay(attempt.number, policy, random), rateLimited: true };
    const capped = asked * 1000 > policy.maxRetryAfterMs;
    return { retry: true, delayMs: capped ? policy.maxRetryAfterMs : asked * 1000, rateLimited: true, cappedRetryAfter: capped ? asked : undefined };
  }
  // A 503 that says when to come back (RFC 9110 §15.6.4) is a refusal to take the request on, not a
  // failure part way through it: nothing was carried out or charged, so it is retried as a 429 is,
  // after its Retry-After, whatever the kind of call (a generation included). It is no sign of the
  // account's rate, so it neither pauses the other calls nor counts as a 429.
  if (error instanceof ApiError && error.status === 503 && error.retryAfterSeconds !== undefined) {
    if (attempt.number >= policy.rateLimitedAttempts) return fail;
    const capped = error.retryAfterSeconds * 1000 > policy.maxRetryAfterMs;
    const delayMs = capped ? policy.maxRetryAfterMs : error.retryAfterSeconds * 1000;
    return budget && !budget.allowsRetry(delayMs) ? fail : { retry: true, delayMs, rateLimited: false };
  }
  // 5xx, and an async generation the service reported failed by webhook (its 500, delivered late).
  const status = error instanceof ApiError ? (error.status ?? 0) : error instanceof GenerationFailedError ? 500 : 0;
  if (status >= 500) {
    const worth = policy.serverErrors === 'all' || (status >= 502 && status <= 504);
    return worth && allowed ? backoff() : fail;
  }

  const broken = error instanceof CorruptImageError || (error instanceof NetworkError && isTransient(error));
  if (!broken) return fail;
  if (attempt.answered && !policy.retryBrokenBodies) return fail;
  if (!allowed) return fail;
  // A generation whose body reached the service, or whose answer had begun, may have been charged.
  const maybeCharged = kind === 'generation' && (attempt.answered || error instanceof CorruptImageError || (error as NetworkError).maybeProcessed);
  if (maybeCharged && !policy.retryUnsafe) return { retry: false, error: new MaybeChargedError(error as RequestError) };
  return backoff();
}

/** A failed attempt that is about to be retried. */
export interface RetryNotice {
  attempt: Attempt;
  error: unknown;
  delayMs: number;
  rateLimited: boolean;
  cappedRetryAfter?: number;
}

/** What a unit of work adds to the engine (a batch row: its slot, its stop, its progress). */
export interface RetryHooks {
  /** Once aborted, nothing more is sent (what is on the wire goes on): the work ends with NotRetriedError. */
  stopSignal?: AbortSignal;
  /** Before each attempt is sent. */
  onAttempt?(attempt: Attempt): void;
  /** Before the wait for a retry; may return what to call once the wait is over. */
  onRetry?(notice: RetryNotice): (() => void) | void;
  /** A failure that ends the work, before its room on the wire is given back. */
  onGiveUp?(error: unknown, attempt: Attempt): void;
}

export interface RetryRun extends RetryHooks {
  kind: CallKind;
  /** Aborts everything, the attempt on the wire included. */
  signal?: AbortSignal;
  /** The call's time budget (timeouts.ts): a retry must fit in it; waits a 429 asked for are left out of it. */
  budget?: CallBudget;
}

type Outcome<T> = { value: T } | { verdict: Verdict; error: unknown } | { stopped: true };

/** Runs `work` until it succeeds or the policy gives up, attempt by attempt. */
export async function withRetries<T>(policy: RetryPolicy, run: RetryRun, work: (attempt: Attempt) => Promise<T>): Promise<T> {
  const { signal, stopSignal, pause, wire } = { ...run, pause: policy.pause, wire: policy.wire };
  const wait = policy.sleep ?? sleep;
  /** Waits for the stop-aware `waiting`; false when the stop came first. */
  const waited = async (waiting: Promise<void>): Promise<boolean> => {
    try {
      await waiting;
      return true;
    } catch (error) {
      if (signal?.aborted || !stopSignal?.aborted) throw signal?.reason ?? error;
      return false;
    }
  };
  let lastError: unknown;
  for (let number = 1; ; number++) {
    const attempt: Attempt = { number, answered: false };
    // Each attempt runs within its room on the wire, given back as soon as the attempt is over.
    const outcome = await (wire ?? UNLIMITED_WIRE).admit(async (ticket): Promise<Outcome<T>> => {
      // A 429 pauses every caller under the policy, first attempts included: they would only be refused too.
      // One that came while this attempt waited for its turn to start holds it too.
      do {
        if (pause && !(await waited(pause.wait(stopSignal)))) return { stopped: true };
        if (wire && !(await waited(wire.pace(stopSignal)))) return { stopped: true };
      } while (pause && pause.remaining() > 0);
      if (signal?.aborted) throw signal.reason;
      if (stopSignal?.aborted) return { stopped: true };
      run.onAttempt?.(attempt);
      ticket.sent();
      try {
        const value = await work(attempt);
        ticket.answered(false);
        return { value };
      } catch (error) {
        if (signal?.aborted) throw signal.reason ?? error;
        ticket.answered(isRateLimited(error));
        const verdict = judge(error, attempt, run.kind, policy, run.budget);
        // What this failure means for the others takes effect before its room is given back.
        if (verdict.retry && verdict.rateLimited) pause?.pause(verdict.delayMs);
        if (!verdict.retry) run.onGiveUp?.(verdict.error, attempt);
        return { verdict, error };
      }
    });
    if ('stopped' in outcome) throw new NotRetriedError(number - 1, lastError);
    if ('value' in outcome) return outcome.value;
    const { verdict } = outcome;
    if (!verdict.retry) throw verdict.error;
    lastError = outcome.error;
    const done = run.onRetry?.({ attempt, error: lastError, ...verdict });
    try {
      // A 429's pause was set for everyone; the others may have made it longer.
      const waiting = verdict.rateLimited && pause ? pause.wait(stopSignal) : wait(verdict.delayMs, stopSignal ?? signal);
      if (!(await waited(waiting))) throw new NotRetriedError(number, lastError);
    } finally {
      done?.();
    }
    // The service asked for this wait: it is not time spent on a server that does not answer.
    if (verdict.rateLimited) run.budget?.exclude(verdict.delayMs);
  }
}

/** The service refused the attempt for going too fast. */
export function isRateLimited(error: unknown): boolean {
  return error instanceof ApiError && error.status === 429;
}

/**
 * The longest a call of these limits can take under `policy` when every
 * attempt gets no answer: each attempt spends its connect stages
 * (`connectStages` of `connectMs` each, 3 through a proxy tunnel), then its
 * whole header wait, then the longest backoff. Worked out with the same
 * CallBudget and rules the client uses, on a simulated clock.
 */
export function worstCaseMs(limits: CallLimits, kind: CallKind, connectMs: number, connectStages: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  let clock = 0;
  const budget = new CallBudget(limits, () => clock);
  for (let number = 1; ; number++) {
    // The header wait is fixed when the request is handed to the pool, before its connection opens.
    const headersMs = budget.headersMs();
    clock += connectStages * connectMs + headersMs;
    const noAnswer = new NetworkError('no answer', 'HeadersTimeout', false);
    const verdict = judge(noAnswer, { number, answered: false }, kind, policy, budget, () => 1);
    if (!verdict.retry) return clock;
    clock += verdict.delayMs;
  }
}
