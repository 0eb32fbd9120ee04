// The bounded-concurrency pool: N workers take the next item until the list
// is done or the batch is stopped; items never taken are handed back. And the
// slots that bound how many requests are on the wire at once.
import { sleep } from '../api/client.js';

export interface PoolResult<T> {
  /** Items no worker started, because the batch was stopped or interrupted. */
  notStarted: T[];
}

export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
  shouldStop: () => boolean,
): Promise<PoolResult<T>> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !shouldStop()) {
      const item = items[next++]!;
      await work(item);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker);
  const results = await Promise.allSettled(workers);
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) throw failure.reason;
  return { notStarted: items.slice(next) };
}

/**
 * A pause every worker honours before its next attempt: when the service
 * answers 429 with Retry-After, the whole pool waits, not only the row that
 * was refused (the others would be refused too).
 */
export class PauseGate {
  private until = 0;

  constructor(private readonly now: () => number = Date.now) {}

  pause(ms: number): void {
    this.until = Math.max(this.until, this.now() + ms);
  }

  /** Milliseconds left of the current pause. */
  remaining(): number {
    return Math.max(0, this.until - this.now());
  }

  async wait(signal?: AbortSignal): Promise<void> {
    for (let left = this.remaining(); left > 0; left = this.remaining()) await sleep(left, signal);
  }
}

/**
 * At most `size` holders at a time, served first come, first served. A row
 * holds a slot while its request is on the wire and gives it back as soon as
 * the response has been received, before its file is finished: the next row's
 * request goes out while the previous one's file is closed and moved into place.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Resolves with a release function (idempotent) once a slot is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const release = this.releaser();
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const entry = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Slots held right now. */
  inUse(): number {
    return this.size - this.free;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Handed straight to the next in line, or back to the pool.
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
