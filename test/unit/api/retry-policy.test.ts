// The one retry engine (src/api/retry.ts): which failures each policy retries,
// after how long, how many times, and how a unit of work's hooks (a slot on
// the wire, a stop, a pause shared by every caller) take part.
import { describe, expect, it, vi } from 'vitest';
import { ApiError, GenerationFailedError, NetworkError } from '../../../src/api/errors.js';
import { cliErrorOf, CliError, ExitCode, FileSystemError, UsageError } from '../../../src/lifecycle/errors.js';
import { CorruptImageError } from '../../../src/api/jpeg-verifier.js';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  judge,
  MaybeChargedError,
  NotRetriedError,
  persistentPolicy,
  withRetries,
  type Attempt,
  type RetryPolicy,
} from '../../../src/api/retry.js';
import { PauseGate, WireLimiter } from '../../../src/api/wire-limiter.js';
import { onFakeClock, sleepOnTimers } from '../../helpers/fake-clock.js';
import { CallBudget, DEFAULT_TIMEOUTS } from '../../../src/api/timeouts.js';

const half = () => 0.5;
const attempt = (number: number, answered = false): Attempt => ({ number, answered });
const noAnswer = new NetworkError('timed out waiting for response headers', 'HeadersTimeout', false);
const reset = new NetworkError('connection reset', 'ECONNRESET', true);
const batch = (overrides: Partial<Parameters<typeof persistentPolicy>[0]> = {}): RetryPolicy =>
  persistentPolicy({ maxRetries: 5, firstDelayMs: 100, retryUnsafe: false, ...overrides });

describe('backoff', () => {
  it('doubles per retry, caps, and keeps its jitter within [ceiling/2, ceiling]', () => {
    const policy = { firstDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(2, policy, () => 1)).toBe(200);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(3, policy);
      expect(delay).toBeGreaterThanOrEqual(200);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });
});

describe('the default policy (single commands)', () => {
  const policy = DEFAULT_RETRY_POLICY;

  it('tries a lookup or download without an answer 3 times, a generation once (it may have been charged)', () => {
    for (const kind of ['lookup', 'download'] as const) {
      expect(judge(noAnswer, attempt(1), kind, policy, undefined, half)).toEqual({ retry: true, delayMs: 375, rateLimited: false });
      expect(judge(noAnswer, attempt(2), kind, policy).retry).toBe(true);
      expect(judge(noAnswer, attempt(3), kind, policy)).toEqual({ retry: false, error: noAnswer });
    }
    expect(judge(noAnswer, attempt(1), 'generation', policy)).toEqual({ retry: false, error: noAnswer });
    expect(judge(new NetworkError('refused', 'ECONNREFUSED', false), attempt(1), 'generation', policy).retry).toBe(false);
  });

  it('retries the gateway errors (502-504) like no answer, and no other 5xx', () => {
    for (const status of [502, 503, 504]) expect(judge(new ApiError(status, 'ServerError', 'x'), attempt(1), 'lookup', policy).retry).toBe(true);
    for (const status of [500, 501, 505]) expect(judge(new ApiError(status, 'ServerError', 'x'), attempt(1), 'lookup', policy).retry).toBe(false);
    expect(judge(new ApiError(503, 'ServerError', 'x'), attempt(1), 'generation', policy).retry).toBe(false);
  });

  it('retries a 503 that says when to come back whatever the kind, a generation too (nothing was carried out), without pausing others', () => {
    const unavailable = (seconds: number) => new ApiError(503, 'ServiceUnavailable', 'busy', seconds);
    expect(judge(unavailable(2), attempt(1), 'generation', policy)).toEqual({ retry: true, delayMs: 2000, rateLimited: false });
    expect(judge(unavailable(0), attempt(3), 'lookup', policy)).toEqual({ retry: true, delayMs: 0, rateLimited: false });
    expect(judge(unavailable(3600), attempt(1), 'generation', policy)).toEqual({ retry: true, delayMs: 60_000, rateLimited: false });
    expect(judge(unavailable(1), attempt(4), 'generation', policy).retry).toBe(false);
    // Not within the call's budget: given up at once.
    expect(judge(unavailable(30), attempt(1), 'generation', policy, new CallBudget({ ...DEFAULT_TIMEOUTS.calls.generation, totalMs: 1000 })).retry).toBe(false);
  });

  it('retries a 429 up to 3 times whatever the kind, honouring Retry-After and capping it', () => {
    const slowDown = (seconds?: number) => new ApiError(429, 'RateLimited', 'slow', seconds);
    expect(judge(slowDown(7), attempt(1), 'generation', policy)).toEqual({ retry: true, delayMs: 7000, rateLimited: true, cappedRetryAfter: undefined });
    expect(judge(slowDown(3600), attempt(3), 'lookup', policy)).toEqual({ retry: true, delayMs: 60_000, rateLimited: true, cappedRetryAfter: 3600 });
    expect(judge(slowDown(), attempt(2), 'lookup', policy, undefined, () => 1)).toEqual({ retry: true, delayMs: 1000, rateLimited: true });
    expect(judge(slowDown(1), attempt(4), 'lookup', policy).retry).toBe(false);
  });

  it('does not retry a body that broke off or failed its checks', () => {
    const cut = new NetworkError('timed out receiving the response body', 'ResponseTimeout', true);
    expect(judge(cut, attempt(1, true), 'lookup', policy).retry).toBe(false);
    expect(judge(new CorruptImageError('not a JPEG'), attempt(1, true), 'download', policy).retry).toBe(false);
  });

  it('retries only what fits in the call\'s budget', () => {
    let now = 0;
    const budget = new CallBudget(DEFAULT_TIMEOUTS.calls.lookup, () => now);
    now = 54_000;
    expect(judge(noAnswer, attempt(1), 'lookup', policy, budget).retry).toBe(false);
    now = 20_000;
    expect(judge(noAnswer, attempt(1), 'lookup', policy, budget).retry).toBe(true);
  });
});

describe('the persistent policy (batch and export)', () => {
  it('retries every 5xx, 429s and no answer until --max-retries run out', () => {
    const policy = batch({ maxRetries: 2 });
    for (const error of [new ApiError(500, 'ErrorGeneratingImage', 'x'), new ApiError(429, 'RateLimited', 'x'), new NetworkError('refused', 'ECONNREFUSED', false)]) {
      expect(judge(error, attempt(1), 'generation', policy).retry).toBe(true);
      expect(judge(error, attempt(2), 'generation', policy).retry).toBe(true);
      expect(judge(error, attempt(3), 'generation', policy).retry).toBe(false);
    }
  });

  it('retries a generation the webhook reported failed, as the service\'s 500 (the default policy does not)', () => {
    const failed = new GenerationFailedError('ErrorGeneratingImage', 'x');
    expect(judge(failed, attempt(1), 'generation', batch()).retry).toBe(true);
    expect(judge(failed, attempt(1), 'generation', DEFAULT_RETRY_POLICY).retry).toBe(false);
  });

  it('never sends again a generation that may have been charged, unless --retry-unsafe, and says why', () => {
    for (const [error, answered] of [[reset, false], [new NetworkError('cut', 'UND_ERR_SOCKET', false), true], [new CorruptImageError('truncated'), true]] as const) {
      const verdict = judge(error, attempt(1, answered), 'generation', batch());
      expect(verdict.retry).toBe(false);
      const why = (verdict as { error: MaybeChargedError }).error;
      expect(why).toBeInstanceOf(MaybeChargedError);
      expect(cliErrorOf(why).exitCode).toBe(ExitCode.Network);
      // The API layer says why; the CLI says what to do about it in its flag (cliErrorOf), the library in its option.
      expect(why.message).toMatch(/may already have generated \(and charged for\) this image/);
      expect(why.message).not.toMatch(/--/);
      expect(why.remedy).toBe('retryUnsafe');
      expect(cliErrorOf(why).message).toMatch(/may already have generated \(and charged for\) this image.*--retry-unsafe/);
      expect(judge(error, attempt(1, answered), 'generation', batch({ retryUnsafe: true })).retry).toBe(true);
    }
  });

  it('retries downloads and lookups that broke off: repeating them never charges', () => {
    const cut = new NetworkError('cut', 'UND_ERR_SOCKET', true);
    expect(judge(cut, attempt(1, true), 'download', batch()).retry).toBe(true);
    expect(judge(new CorruptImageError('truncated'), attempt(1, true), 'download', batch()).retry).toBe(true);
    expect(judge(cut, attempt(1, true), 'lookup', batch()).retry).toBe(true);
  });

  it('never retries a refusal, a file that cannot be written, a bug, or an attempt that cannot be taken back', () => {
    const policy = batch({ retryUnsafe: true });
    const refusals = [400, 401, 402, 403, 404].map((status) => new ApiError(status, 'No', 'no'));
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    for (const error of [...refusals, new UsageError('exists'), new FileSystemError('full', 'NoSpace'), full, new Error('bug')]) {
      expect(judge(error, attempt(1), 'generation', policy).retry).toBe(false);
    }
    expect(judge(noAnswer, { number: 1, answered: true, final: true }, 'download', policy).retry).toBe(false);
    // A certificate another attempt will not mend.
    expect(judge(new NetworkError('bad cert', 'SELF_SIGNED_CERT_IN_CHAIN', false), attempt(1), 'lookup', policy).retry).toBe(false);
  });
});

describe('withRetries', () => {
  const recorded = (policy: RetryPolicy) => {
    const waits: number[] = [];
    return { waits, policy: { ...policy, sleep: async (ms: number) => void waits.push(ms) } };
  };

  it('runs the work until it succeeds, telling the hooks of each attempt and each wait', async () => {
    const { waits, policy } = recorded(DEFAULT_RETRY_POLICY);
    const seen: string[] = [];
    const result = await withRetries(
      policy,
      { kind: 'lookup', onAttempt: (a) => seen.push(`attempt ${a.number}`), onRetry: (n) => (seen.push(`retry after ${n.attempt.number}`), () => seen.push('waited')) },
      async (a) => {
        if (a.number < 3) throw new ApiError(503, 'ServerError', 'busy');
        return 'done';
      },
    );
    expect(result).toBe('done');
    expect(seen).toEqual(['attempt 1', 'retry after 1', 'waited', 'attempt 2', 'retry after 2', 'waited', 'attempt 3']);
    expect(waits).toHaveLength(2);
  });

  it('gives up with the failure as the policy says, telling onGiveUp before the attempt\'s room is given back', async () => {
    const wire = new WireLimiter(2);
    const order: string[] = [];
    const refused = new ApiError(402, 'InsufficientCredits', 'no');
    const work = async () => {
      order.push(`sent with ${wire.inFlight} on the wire`);
      throw refused;
    };
    await expect(withRetries(batch({ wire }), { kind: 'generation', onGiveUp: () => void order.push(`gave up with ${wire.inFlight} on the wire`) }, work)).rejects.toBe(refused);
    expect(order).toEqual(['sent with 1 on the wire', 'gave up with 1 on the wire']);
    expect(wire.inFlight).toBe(0);
  });

  it('a 429 pauses every caller under the policy, and the wait is left out of the call\'s budget', () =>
    onFakeClock(async () => {
      const policy: RetryPolicy = { ...batch(), pause: new PauseGate(undefined, Date.now, sleepOnTimers), sleep: sleepOnTimers };
      const t0 = Date.now();
      const starts: Array<[string, number]> = [];
      let refused = false;
      const work = (name: string) => async () => {
        starts.push([name, Date.now() - t0]);
        if (name === 'a' && !refused) {
          refused = true;
          throw new ApiError(429, 'RateLimited', 'slow', 0.15);
        }
      };
      const budget = new CallBudget(DEFAULT_TIMEOUTS.calls.lookup, Date.now);
      const first = withRetries(policy, { kind: 'generation', budget }, work('a'));
      await vi.advanceTimersByTimeAsync(10);
      // Called 10 ms into the 150 ms pause: held until it is over.
      const second = withRetries(policy, { kind: 'generation' }, work('b'));
      await vi.runAllTimersAsync();
      await Promise.all([first, second]);
      expect(starts.filter(([name]) => name === 'a').map(([, at]) => at)).toEqual([0, 150]);
      expect(starts.filter(([name]) => name === 'b').map(([, at]) => at)).toEqual([150]);
      // 150 ms went by, all of them the wait the service asked for.
      expect(Date.now() - t0).toBe(150);
      expect(budget.elapsedMs()).toBe(0);
    }));

  it('a stop before the next attempt sends nothing more: NotRetriedError with the attempts made', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stop'));
    const never = withRetries(DEFAULT_RETRY_POLICY, { kind: 'lookup', stopSignal: stop.signal }, async () => 'sent');
    await expect(never).rejects.toMatchObject({ attempts: 0, message: 'not started: interrupted' });

    const later = new AbortController();
    const busy = new ApiError(503, 'ServerError', 'busy');
    const stopped = withRetries({ ...batch(), firstDelayMs: 10_000 }, { kind: 'lookup', stopSignal: later.signal }, async () => Promise.reject(busy));
    setTimeout(() => later.abort(new Error('stop')), 20);
    const error = await stopped.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotRetriedError);
    expect(error).toMatchObject({ attempts: 1, lastError: busy, message: 'not retried: interrupted' });
  });

  it('an abort ends the work with its reason, the attempt on the wire included', async () => {
    const controller = new AbortController();
    const reason = new CliError('interrupted', ExitCode.Interrupted, 'Interrupted');
    const running = withRetries(DEFAULT_RETRY_POLICY, { kind: 'lookup', signal: controller.signal }, () => new Promise((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('aborted')))));
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });
});
