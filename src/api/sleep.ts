// The wait between attempts and between paced starts (retry.ts,
// wire-limiter.ts), injectable so that tests can run them on a clock of their own.
import { setTimeout as delay } from 'node:timers/promises';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Waits `ms`, or rejects with the signal's own reason when it aborts first. */
export const sleep: Sleep = async (ms, signal) => {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  }
};
