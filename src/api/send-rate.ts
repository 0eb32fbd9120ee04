// The rate a client sends at when it shares an account's rate limit with
// others it cannot see (other shards, other machines). Modelled on the AWS
// SDKs' adaptive retry mode: until the service first answers 429 nothing is
// held back; at a 429 the rate falls to BETA times the rate actually being
// sent (a smoothed measure), and from there it recovers along a cubic curve,
// as TCP CUBIC grows its window: quickly at first, slowly near the rate that
// was refused, then probing beyond it. Every client sharing the limit does the
// same, so together they settle near the account's rate.
//
// Pure logic on an injected clock: WireLimiter (retry.ts) feeds it what its
// requests met and paces them with a token bucket at `rate`.

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
    this.refusedRate = Math.min(sending, this.ceiling ?? Infinity);
    this.climbSeconds = Math.cbrt((this.refusedRate * (1 - SEND_RATE.beta)) / SEND_RATE.scale);
    this.lastCut = this.now();
    this.current = Math.max(SEND_RATE.minimum, this.refusedRate * SEND_RATE.beta);
    return true;
  }

  /** An answer that was not 429: the rate climbs along the cubic, never past twice what is being sent. */
  answered(): void {
    if (this.current === undefined || this.lastCut === undefined) return;
    const t = (this.now() - this.lastCut) / 1000;
    const cubic = SEND_RATE.scale * (t - this.climbSeconds) ** 3 + this.refusedRate;
    this.current = Math.max(SEND_RATE.minimum, Math.min(cubic, 2 * this.sendingRate, this.ceiling ?? Infinity));
  }
}
