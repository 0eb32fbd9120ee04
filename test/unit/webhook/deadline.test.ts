// The deadline behind --timeout, --callback-timeout and the sandbox's webhook
// deliveries, under forced garbage collection: a time limit that the collector
// can drop (AbortSignal.any over AbortSignal.timeout) never fires.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startDeadline } from '../../../src/webhook/deadline.js';
import { inProcessGc } from '../../helpers/forced-gc.js';

const gc = inProcessGc();

/** Resolves with the abort reason and when it came, collecting garbage every few ms meanwhile; undefined after `limitMs`. */
async function abortUnderGc(signal: AbortSignal, limitMs: number): Promise<{ reason: unknown; afterMs: number } | undefined> {
  const started = Date.now();
  let outcome: { reason: unknown; afterMs: number } | undefined;
  signal.addEventListener('abort', () => (outcome = { reason: signal.reason, afterMs: Date.now() - started }), { once: true });
  while (!outcome && Date.now() - started < limitMs) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return outcome;
}

describe('startDeadline', () => {
  it('fires on time while the garbage collector runs, holding only its signal, as a waiter does', async () => {
    const parent = new AbortController();
    for (let round = 0; round < 3; round++) {
      // Nothing but the signal is kept: the listener waitFor() adds is all a caller holds while it waits.
      const { signal } = startDeadline(300, parent.signal);
      // A deadline the collector dropped never fires at all: the wait gives up long after 300 ms,
      // so a busy machine's late timer is not mistaken for it.
      const fired = await abortUnderGc(signal, 10_000);
      expect(fired, `round ${round}: the deadline never fired`).toBeDefined();
      expect(fired!.afterMs).toBeGreaterThanOrEqual(290);
      expect((fired!.reason as Error).name).toBe('TimeoutError');
    }
    // Each expired deadline let go of the parent.
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('says it expired only when the time ran out', async () => {
    const deadline = startDeadline(50);
    expect(deadline.expired).toBe(false);
    await abortUnderGc(deadline.signal, 2000);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(true);
  });

  it('passes the parent\'s abort on with its reason, and is then not expired', async () => {
    const parent = new AbortController();
    const deadline = startDeadline(10_000, parent.signal);
    const reason = new Error('interrupted');
    parent.abort(reason);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe(reason);
    expect(deadline.expired).toBe(false);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('starts aborted under an aborted parent', () => {
    const parent = new AbortController();
    parent.abort(new Error('already'));
    const deadline = startDeadline(10_000, parent.signal);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(false);
  });

  it('cleared, it never fires and no longer listens to the parent', async () => {
    const parent = new AbortController();
    const deadline = startDeadline(50, parent.signal);
    deadline.clear();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    expect(await abortUnderGc(deadline.signal, 300)).toBeUndefined();
    parent.abort();
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.expired).toBe(false);
  });

  it('refuses a delay a Node timer cannot hold', () => {
    expect(() => startDeadline(2 ** 31)).toThrow(RangeError);
    expect(() => startDeadline(-1)).toThrow(RangeError);
    expect(() => startDeadline(Number.NaN)).toThrow(RangeError);
  });
});
