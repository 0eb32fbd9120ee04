// Fault injection for tests of retries and error paths: latency, generation
// failures, dropped connections, rate limiting and failed webhook deliveries.
// Every random decision comes from a seeded generator, one stream per knob, so
// a given --seed replays the same faults; rates of 0 and 1 are exact.

export interface FaultSettings {
  /** No API answer is sent sooner than this after its request arrived, and no webhook sooner than this after its 202. */
  latencyMs: number;
  /** Share of generations that fail with ErrorGeneratingImage (sync 500, async error payload). */
  failRate: number;
  /** Share of API requests whose connection is reset before anything is processed. */
  dropRate: number;
  /** Requests per second per account (token bucket, burst of the same size); undefined means unlimited. */
  rateLimit?: number;
  /** The first n webhook delivery attempts are not sent and count as failures. */
  webhookFail: number;
}

/** The most latency the sandbox takes (the --latency flag, startSandbox's latencyMs). */
export const MAX_LATENCY_MS = 10 * 60 * 1000;

export const NO_FAULTS: FaultSettings = { latencyMs: 0, failRate: 0, dropRate: 0, webhookFail: 0 };

const KNOBS: ReadonlyArray<keyof FaultSettings> = ['latencyMs', 'failRate', 'dropRate', 'rateLimit', 'webhookFail'];

/**
 * The knobs of `patch`, checked: a name that is not a knob is a TypeError, a
 * value out of range a RangeError, each naming the knob and what it takes. A
 * knob given as undefined is left out, except rateLimit, where undefined (or
 * 0) means unlimited.
 */
export function checkFaultPatch(patch: Partial<Record<keyof FaultSettings, unknown>>): Partial<FaultSettings> {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) throw new TypeError(`the fault knobs must be an object such as { failRate: 0.5 }; got ${describe(patch)}`);
  const checked: Partial<FaultSettings> = {};
  for (const [name, value] of Object.entries(patch)) {
    switch (name) {
      case 'latencyMs':
        if (value !== undefined) checked.latencyMs = checkNumber(name, value, 0, MAX_LATENCY_MS, 'milliseconds');
        break;
      case 'failRate':
      case 'dropRate':
        if (value !== undefined) checked[name] = checkNumber(name, value, 0, 1, 'a share of the requests');
        break;
      case 'rateLimit':
        if (value !== undefined && value !== 0 && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
          throw new RangeError(`rateLimit must be a number of requests per second above 0 (undefined or 0: unlimited); got ${describe(value)}`);
        }
        checked.rateLimit = (value as number | undefined) || undefined;
        break;
      case 'webhookFail':
        if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)) {
          throw new RangeError(`webhookFail must be a whole number of deliveries, 0 or more; got ${describe(value)}`);
        }
        if (value !== undefined) checked.webhookFail = value as number;
        break;
      default:
        throw new TypeError(`${JSON.stringify(name)} is not a fault knob; the knobs are ${KNOBS.join(', ')}`);
    }
  }
  return checked;
}

function checkNumber(name: string, value: unknown, min: number, max: number, unit: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(`${name} must be between ${min} and ${max} (${unit}); got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}

/** mulberry32: small, fast and good enough to decide "fail this one?" reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One bucket per account: `rate` tokens per second, holding at most max(1, rate). */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly rate: number,
    private readonly now: () => number,
  ) {}

  /** Takes a token, or says how many whole seconds until one is available (for Retry-After). */
  take(account: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const capacity = Math.max(1, this.rate);
    const now = this.now();
    const bucket = this.buckets.get(account) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    this.buckets.set(account, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate)) };
  }
}

export class Faults {
  private settings: FaultSettings;
  private limiter?: RateLimiter;
  private failRandom: () => number;
  private dropRandom: () => number;
  private webhookFailuresLeft: number;

  constructor(
    settings: FaultSettings,
    readonly seed: number,
    private readonly now: () => number,
  ) {
    this.settings = { ...settings };
    this.failRandom = seededRandom(seed ^ 0x5eed_fa11);
    this.dropRandom = seededRandom(seed ^ 0x0d70_99ed);
    this.webhookFailuresLeft = settings.webhookFail;
    this.limiter = settings.rateLimit ? new RateLimiter(settings.rateLimit, now) : undefined;
  }

  current(): FaultSettings {
    return { ...this.settings };
  }

  /** Changes knobs of a running sandbox (checked: checkFaultPatch); the random streams continue where they were. */
  change(patch: Partial<FaultSettings>): void {
    const checked = checkFaultPatch(patch);
    this.settings = { ...this.settings, ...checked };
    if ('rateLimit' in checked) this.limiter = checked.rateLimit ? new RateLimiter(checked.rateLimit, this.now) : undefined;
    if (checked.webhookFail !== undefined) this.webhookFailuresLeft = checked.webhookFail;
  }

  /** Back to `settings` as if just started: the random streams from the seed again, the rate limit's buckets full. */
  restart(settings: FaultSettings): void {
    this.settings = { ...settings };
    this.failRandom = seededRandom(this.seed ^ 0x5eed_fa11);
    this.dropRandom = seededRandom(this.seed ^ 0x0d70_99ed);
    this.webhookFailuresLeft = settings.webhookFail;
    this.limiter = settings.rateLimit ? new RateLimiter(settings.rateLimit, this.now) : undefined;
  }

  shouldDrop(): boolean {
    return this.settings.dropRate > 0 && this.dropRandom() < this.settings.dropRate;
  }

  shouldFailGeneration(): boolean {
    return this.settings.failRate > 0 && this.failRandom() < this.settings.failRate;
  }

  rateLimit(account: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    return this.limiter ? this.limiter.take(account) : { ok: true };
  }

  /** True when this delivery attempt is one of the first --webhook-fail ones. */
  takeWebhookFailure(): boolean {
    if (this.webhookFailuresLeft <= 0) return false;
    this.webhookFailuresLeft -= 1;
    return true;
  }

  /**
   * Resolves once --latency has passed since `since` (a performance.now() time),
   * or as soon as `signal` aborts. Measured against the clock rather than left to
   * one timer, which can fire a little early: the latency is a floor.
   */
  async latencyElapsed(since: number, signal: AbortSignal): Promise<void> {
    const left = () => since + this.settings.latencyMs - performance.now();
    while (left() > 0 && !signal.aborted) await sleep(Math.ceil(left()), signal);
  }
}

/** Resolves after `ms`, or early (without error) when `signal` aborts: callers check the signal. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
