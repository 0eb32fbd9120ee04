// How many of a batch's requests may be on the wire at once, how fast they
// may start, and the pause all of them honour after a 429: the limiting that
// retry.ts's engine runs each attempt within (withRetries: `wire`, `pause`).
// The sending rate itself, and the pacer that spaces starts at it, are in
// send-rate.ts.
import { SendRate, StartPacer } from './send-rate.js';
import { sleep, type Sleep } from './sleep.js';

/** What an attempt tells the wire limiter about itself. */
export interface WireTicket {
  /** The request is about to be sent. */
  sent(): void;
  /** An answer came: refused with 429, or anything else. */
  answered(rateLimited: boolean): void;
}

const NO_TICKET: WireTicket = { sent() {}, answered() {} };
/** Calls under a policy without a wire limiter: nothing to wait for. */
export const UNLIMITED_WIRE = { admit: <T>(attempt: (ticket: WireTicket) => Promise<T>) => attempt(NO_TICKET) };

/** What the requests under a wire limiter met, for the summary. */
export interface WireStats {
  /** Attempts sent. */
  requests: number;
  /** Answers that were 429. */
  rateLimited: number;
  /** The least the in-flight limit was cut to. */
  lowestLimit: number;
}

/**
 * Room on the wire for a batch's requests, shared by all of them: at most
 * `limit` attempts at once, started no faster than the sending rate allows.
 * The limit adapts to the service's 429s as TCP's window adapts to loss: a 429
 * halves it (once per round: the other answers to requests that were on the
 * wire together with the refused one do not cut it again), and every `limit`
 * answers that are not 429 grow it by one, back up to --concurrency. Against a
 * service that answers at once the number on the wire does not bound the rate,
 * so the rate adapts too (send-rate.ts): nothing holds requests back until the
 * first 429 (under --rate, from the first request), then their starts are
 * spaced at a rate that falls at each 429 and recovers cubically, never above
 * --rate. Several processes sharing an account's rate limit so settle near
 * it, instead of all retrying at once after each pause.
 */
export class WireLimiter {
  /** The in-flight limit, kept fractional so it can grow by 1/limit per answer. */
  private window: number;
  private active = 0;
  private readonly queue: Array<() => void> = [];
  /** Bumped at every cut: a 429 to a request sent before the last cut does not cut again. */
  private round = 0;
  /** Spaces the attempts' starts at the sending rate, once there is one (--rate, or the first 429). */
  private readonly pacer: StartPacer;
  /** The rate the attempts may start at, adapted to the 429s met, never above --rate. */
  readonly sendRate: SendRate;
  private readonly now: () => number;
  private readonly sleep?: Sleep;
  readonly stats: WireStats;

  constructor(
    readonly maxConcurrency: number,
    options: { ratePerSecond?: number; onCut?: (limit: number) => void; now?: () => number; sleep?: Sleep } = {},
  ) {
    this.window = maxConcurrency;
    this.onCut = options.onCut;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep;
    this.stats = { requests: 0, rateLimited: 0, lowestLimit: maxConcurrency };
    this.sendRate = new SendRate(options.ratePerSecond, this.now);
    this.pacer = new StartPacer(this.now, this.sleep ?? sleep);
  }

  private readonly onCut?: (limit: number) => void;

  /** Attempts allowed on the wire at once now. */
  get limit(): number {
    return Math.max(1, Math.floor(this.window));
  }

  /** Attempts holding room on the wire now. */
  get inFlight(): number {
    return this.active;
  }

  /** Runs `attempt` within room on the wire, waiting for it in turn. */
  async admit<T>(attempt: (ticket: WireTicket) => Promise<T>): Promise<T> {
    // Room handed over by fill() is counted there, so that nobody can take it in between.
    if (this.active >= this.limit || this.queue.length > 0) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active++;
    const round = this.round;
    let answered = false;
    let sentAt = this.now();
    const ticket: WireTicket = {
      sent: () => {
        this.stats.requests++;
        sentAt = this.now();
        this.sendRate.sent();
      },
      answered: (rateLimited) => {
        if (answered) return;
        answered = true;
        if (rateLimited) {
          this.sendRate.refused(sentAt);
          this.refused(round);
        } else {
          this.sendRate.answered();
          this.grow();
        }
      },
    };
    try {
      return await attempt(ticket);
    } finally {
      this.active--;
      this.fill();
    }
  }

  /** Waits until an attempt may start at the sending rate (at once while there is none); rejects when `signal` aborts first. */
  pace(signal?: AbortSignal): Promise<void> {
    const rate = this.sendRate.rate;
    if (rate === undefined) return Promise.resolve();
    return this.pacer.take(rate, signal);
  }

  private refused(round: number): void {
    this.stats.rateLimited++;
    if (round !== this.round) return;
    this.round++;
    this.window = Math.max(1, this.window / 2);
    this.stats.lowestLimit = Math.min(this.stats.lowestLimit, this.limit);
    this.onCut?.(this.limit);
  }

  private grow(): void {
    this.window = Math.min(this.maxConcurrency, this.window + 1 / this.limit);
    this.fill();
  }

  /** Hands free room to the callers waiting, in turn. */
  private fill(): void {
    while (this.queue.length > 0 && this.active < this.limit) {
      this.active++;
      this.queue.shift()!();
    }
  }
}

/**
 * A pause every caller under one policy honours before its next attempt:
 * when the service answers 429, all of them wait, not only the one refused.
 */
export class PauseGate {
  private until = 0;

  constructor(
    /** Told when a pause starts (not when one under way is made longer). */
    private readonly onPause?: (ms: number) => void,
    private readonly now: () => number = Date.now,
    private readonly sleepFor: Sleep = sleep,
  ) {}

  pause(ms: number): void {
    if (this.remaining() === 0) this.onPause?.(ms);
    this.until = Math.max(this.until, this.now() + ms);
  }

  /** Milliseconds left of the current pause. */
  remaining(): number {
    return Math.max(0, this.until - this.now());
  }

  async wait(signal?: AbortSignal): Promise<void> {
    for (let left = this.remaining(); left > 0; left = this.remaining()) await this.sleepFor(left, signal);
  }
}
