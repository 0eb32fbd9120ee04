// Vitest's fake timers for code that lets its clock and its sleep be injected:
// waits take no real time, and Date.now() moves only as the timers are run.
import { vi } from 'vitest';
import type { Sleep } from '../../src/api/sleep.js';

/** A sleep on the global timers, which vi.useFakeTimers() replaces. */
export const sleepOnTimers: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** Runs `body` on vitest's fake clock. */
export async function onFakeClock(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers();
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}
