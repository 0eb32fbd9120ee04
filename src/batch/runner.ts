// The bounded-concurrency pool: N workers take the next item until the list
// is done or the batch is stopped; items never taken are handed back.
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
