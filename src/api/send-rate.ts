// The rate a client sends at when it shares an account's rate limit with
// others it cannot see (other shards, other machines). Modelled on the AWS
// SDKs' adaptive retry mode: until the service first answers 429 nothing is
// held back; at a 429 the rate falls to BETA times the rate actually being
// sent (a smoothed measure), and from there it recovers along a cubic curve,
// as TCP CUBIC grows its window: quickly at first, slowly near the rate that
// was refused, then probing beyond it. Every client sharing the limit does the
// same, so together they settle near the account's rate.
//
// Pure logic on an injected clock: WireLimiter (wire-limiter.ts) feeds it what its
// requests met and paces them with a StartPacer (below) at `rate`.
//
// The pacer keeps the promise of --rate N/s: at most N requests start in any
// one-second window, evenly spaced, with no burst at the start (a token
// bucket lets a bucketful through at once, which a service's sliding window
// refuses when several processes share it). Each start comes at least 1/rate
// after the one before, and never sooner than the rate allows after the
// N-th before it, told by when they really started (a timer that fired late
// does not let the next ones bunch up), with a margin for the way to the
// service, whose own clock counts arrivals.

import type { Sleep } from './sleep.js';

/** The constants of the AWS SDKs' adaptive mode. */
export const SEND_RATE = {
  /** The share of the sending rate kept at a 429. */
  beta: 0.7,
  /** How fast the rate recovers: the cubic's scale, in requests per second per second³. */
  scale: 0.4,
  /** The weight of the newest measure in the smoothed sending rate. */
  smooth: 0.8,
  /** The rate is never cut below this, in requests per second. */
  minimum: 0.5,
  /** The sending rate is measured over spans of this many milliseconds. */
  spanMs: 500,
} as const;

export class SendRate {
  /** The smoothed measure of requests sent per second; undefined until a span has closed. */
  private measured?: number;
  /** Requests sent in the current span. */
  private count = 0;
  private spanStart: number;
  /** The rate to send at; undefined (no limit of its own) until the first 429. */
  private current?: number;
  /** The rate that was refused last, the cubic's plateau. */
  private refusedRate = 0;
  /** When the last cut was made: 429s to requests sent before it do not cut again. */
  private lastCut?: number;
  /** Seconds from a cut until the cubic is back at the refused rate. */
  private climbSeconds = 0;
  /** When the answers of the last second that were not 429 came, oldest first. */
  private readonly letThrough: number[] = [];

  constructor(
    /** --rate: the rate is never above it. */
    readonly ceiling?: number,
    private readonly now: () => number = Date.now,
  ) {
    this.spanStart = this.now();
  }

  /** Requests per second to send at now; undefined when nothing holds them back. */
  get rate(): number | undefined {
    if (this.current === undefined) return this.ceiling;
    return this.ceiling === undefined ? this.current : Math.min(this.current, this.ceiling);
  }

  /** The measured sending rate, requests per second. */
  get sendingRate(): number {
    if (this.measured !== undefined) return this.measured;
    // No span has closed yet: what was sent so far, over at least one span.
    return (this.count * 1000) / Math.max(SEND_RATE.spanMs, this.now() - this.spanStart);
  }

  /** Answers that were not 429 in the last second. */
  private letThroughLastSecond(): number {
    const since = this.now() - 1000;
    let old = 0;
    while (old < this.letThrough.length && this.letThrough[old]! <= since) old++;
    this.letThrough.splice(0, old);
    return this.letThrough.length;
  }

  /** A request is being sent: counted towards the measured rate. */
  sent(): void {
    const now = this.now();
    if (now - this.spanStart >= SEND_RATE.spanMs) {
      const rate = (this.count * 1000) / (now - this.spanStart);
      this.measured = this.measured === undefined ? rate : SEND_RATE.smooth * rate + (1 - SEND_RATE.smooth) * this.measured;
      this.count = 0;
      this.spanStart = now;
    }
    this.count++;
  }

  /**
   * The service refused a request sent at `sentAt` with 429. The first refusal
   * of a round cuts the rate; the others were sent at the rate already cut.
   * Returns whether it cut.
   */
  refused(sentAt: number): boolean {
    if (this.lastCut !== undefined && sentAt < this.lastCut) return false;
    const sending = this.current === undefined ? this.sendingRate : Math.min(this.sendingRate, this.current);
    // What the service let through in the last second is this client's share of the limit, however fast it
    // sent (a burst at the start measures far above it): the cut lands no higher than that share.
    const share = this.letThroughLastSecond();
    this.refusedRate = Math.min(sending, share > 0 ? share / SEND_RATE.beta : Infinity, this.ceiling ?? Infinity);
    this.climbSeconds = Math.cbrt((this.refusedRate * (1 - SEND_RATE.beta)) / SEND_RATE.scale);
    this.lastCut = this.now();
    this.current = Math.max(SEND_RATE.minimum, this.refusedRate * SEND_RATE.beta);
    return true;
  }

  /** An answer that was not 429: the rate climbs along the cubic, never past twice what is being sent. */
  answered(): void {
    this.letThrough.push(this.now());
    // Kept to the last second now and then, not only at a 429: a batch may never meet one.
    if (this.letThrough.length > 1024) this.letThroughLastSecond();
    if (this.current === undefined || this.lastCut === undefined) return;
    const t = (this.now() - this.lastCut) / 1000;
    const cubic = SEND_RATE.scale * (t - this.climbSeconds) ** 3 + this.refusedRate;
    this.current = Math.max(SEND_RATE.minimum, Math.min(cubic, 2 * this.sendingRate, this.ceiling ?? Infinity));
  }
}

/** How much wider than a second the window a pacer keeps to is: room for the jitter on the way to the service. */
export const PACE_MARGIN = 0.05;

/**
 * When the next request may start, at `rate` requests a second (which may
 * change between requests: send-rate's cuts and climbs). Callers wait in
 * turn: each is let go at its time, the next one's counted from it.
 */
export class StartPacer {
  /** When the caller before was let go (its slot, not the moment it woke: lateness does not pile up). */
  private lastSlot = -Infinity;
  /** When the last few callers really started, oldest first. */
  private readonly starts: number[] = [];
  /** Settles when the caller before has been let go (or has given up): the turn. */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly now: () => number,
    private readonly wait: Sleep,
  ) {}

  /** Waits until a request may start at `rate` a second; rejects (taking no turn) when `signal` aborts first. */
  async take(rate: number, signal?: AbortSignal): Promise<void> {
    const before = this.turn;
    let passOn!: () => void;
    this.turn = new Promise((resolve) => (passOn = resolve));
    try {
      await waitFor(before, signal);
      const interval = (1000 / rate) * (1 + PACE_MARGIN);
      // At most `inWindow` starts in any window of inWindow / rate seconds (a second, for whole rates):
      // the start that many before this one, by when it really happened, sets the earliest this one may.
      const inWindow = Math.max(1, Math.ceil(rate));
      const windowStart = this.starts.length >= inWindow ? this.starts[this.starts.length - inWindow]! + inWindow * interval : -Infinity;
      const slot = Math.max(this.now(), this.lastSlot + interval, windowStart);
      const ms = slot - this.now();
      if (ms > 0) await this.wait(Math.ceil(ms), signal);
      this.lastSlot = slot;
      this.starts.push(this.now());
      if (this.starts.length > inWindow) this.starts.splice(0, this.starts.length - inWindow);
    } finally {
      // The next caller's turn comes once the one before this one has had its own, whatever this one did.
      void before.then(passOn);
    }
  }
}

/** Waits for `promise`, or rejects with the signal's reason when it aborts first. */
function waitFor(promise: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
