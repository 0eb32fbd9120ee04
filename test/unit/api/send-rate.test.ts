// The adaptive sending rate (src/api/send-rate.ts) on a clock the test moves:
// nothing held back before a 429, a cut to 0.7 of the measured rate at one,
// a cubic climb back, one cut per round, never above --rate. And the pacer
// that keeps --rate's promise: at most N starts in any second, evenly spaced,
// none bunched by a timer that fired late.
import { describe, expect, it } from 'vitest';
import { PACE_MARGIN, SEND_RATE, SendRate, StartPacer } from '../../../src/api/send-rate.js';

function clocked(ceiling?: number) {
  let clock = 1_000_000;
  const rate = new SendRate(ceiling, () => clock);
  return {
    rate,
    at: () => clock,
    /** Sends `count` requests evenly over `ms`. */
    send(count: number, ms: number) {
      for (let i = 0; i < count; i++) {
        rate.sent();
        clock += ms / count;
      }
    },
  };
}

describe('SendRate', () => {
  it('holds nothing back until the first 429, and then only --rate', () => {
    const free = clocked();
    free.send(100, 1000);
    free.rate.answered();
    expect(free.rate.rate).toBeUndefined();
    const capped = clocked(5);
    capped.send(10, 1000);
    capped.rate.answered();
    expect(capped.rate.rate).toBe(5);
  });

  it('measures the rate being sent, smoothed over half-second spans', () => {
    const { rate, send } = clocked();
    send(20, 1000);
    expect(rate.sendingRate).toBeCloseTo(20, 0);
    send(10, 1000);
    // The newest span weighs 0.8: 0.8 × 10 + 0.2 × 20, close to 10, not yet there.
    expect(rate.sendingRate).toBeCloseTo(12, 5);
  });

  it('judges the rate from what was sent so far when a 429 comes before a span has closed (nothing let through yet)', () => {
    const { rate, send, at } = clocked();
    send(8, 200);
    expect(rate.refused(at())).toBe(true);
    // 8 requests, counted over at least one span (half a second): 16/s, cut to 0.7 of it.
    expect(rate.rate).toBeCloseTo(16 * SEND_RATE.beta, 5);
  });

  it('cuts to 0.7 of the measured rate at a 429, then climbs back cubically and probes beyond', () => {
    const { rate, send, at } = clocked();
    send(40, 2000);
    const refusedAt = at();
    expect(rate.refused(refusedAt)).toBe(true);
    expect(rate.rate).toBeCloseTo(20 * 0.7, 0);
    // The climb back to the refused rate takes cbrt(20 × 0.3 / 0.4) ≈ 2.47 s: slow near the top.
    const samples: number[] = [];
    for (let i = 0; i < 8; i++) {
      send(10, 500);
      rate.answered();
      samples.push(rate.rate!);
    }
    expect(samples.every((value, i) => i === 0 || value >= samples[i - 1]! - 1e-9)).toBe(true);
    const rise = (i: number) => samples[i + 1]! - samples[i]!;
    // Concave, then convex: fast at first, flat around the refused rate.
    expect(rise(0)).toBeGreaterThan(rise(3));
    // Never above twice what is being sent (20/s here).
    expect(Math.max(...samples)).toBeLessThanOrEqual(40);
  });

  it('cuts once a round: a 429 to a request sent before the last cut does not cut again', () => {
    const { rate, send, at } = clocked();
    send(40, 2000);
    const before = at() - 10;
    expect(rate.refused(at())).toBe(true);
    const cut = rate.rate;
    expect(rate.refused(before)).toBe(false);
    expect(rate.rate).toBe(cut);
    send(5, 500);
    expect(rate.refused(at())).toBe(true);
    expect(rate.rate!).toBeLessThan(cut!);
  });

  it('never goes below half a request a second, nor above --rate', () => {
    const { rate, send, at } = clocked(3);
    send(2, 4000);
    for (let i = 0; i < 10; i++) {
      send(1, 1000);
      rate.refused(at());
    }
    expect(rate.rate).toBe(SEND_RATE.minimum);
    for (let i = 0; i < 60; i++) {
      send(10, 1000);
      rate.answered();
      expect(rate.rate!).toBeLessThanOrEqual(3);
    }
    expect(rate.rate).toBe(3);
  });
});

/** A pacer on a clock that moves only as it sleeps (each sleep `lateMs(n)` longer than asked, as a timer that fires late). */
function pacedClock(lateMs: (n: number) => number = () => 0) {
  let clock = 5_000_000;
  let sleeps = 0;
  const starts: number[] = [];
  const pacer = new StartPacer(
    () => clock,
    async (ms) => {
      clock += ms + lateMs(sleeps++);
    },
  );
  return {
    pacer,
    starts,
    advance: (ms: number) => void (clock += ms),
    async take(rate: number, signal?: AbortSignal) {
      await pacer.take(rate, signal);
      starts.push(clock);
    },
  };
}

/** The most starts in any window of `windowMs` (closed at both ends: the strictest count). */
function busiest(starts: number[], windowMs: number): number {
  let most = 0;
  for (let first = 0, last = 0; last < starts.length; last++) {
    while (starts[last]! - starts[first]! > windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('SendRate, against other clients it cannot see', () => {
  it('a 429 after a burst: the cut lands no higher than what the service let through in the last second, however fast it was sent', () => {
    const { rate, send, at } = clocked();
    // 40 sent in 100 ms (measured as at least 80/s), of which the service let 5 through (its share of an account shared by four).
    send(40, 100);
    for (let i = 0; i < 5; i++) rate.answered();
    expect(rate.refused(at())).toBe(true);
    expect(rate.rate).toBeCloseTo(5, 5);
  });
});

describe('StartPacer', () => {
  it('--rate 5/s: the first at once, then evenly 1/5 s apart (and the margin), never 6 in a second, even counted at both ends', async () => {
    const paced = pacedClock();
    for (let i = 0; i < 50; i++) await paced.take(5);
    const gaps = paced.starts.slice(1).map((at, i) => at - paced.starts[i]!);
    expect(new Set(gaps.map(Math.round))).toEqual(new Set([Math.round(200 * (1 + PACE_MARGIN))]));
    expect(busiest(paced.starts, 1000)).toBe(5);
  });

  it('no burst after a quiet spell: the next request is at once, the ones after it spaced again', async () => {
    const paced = pacedClock();
    for (let i = 0; i < 5; i++) await paced.take(10);
    paced.advance(60_000);
    for (let i = 0; i < 11; i++) await paced.take(10);
    expect(busiest(paced.starts.slice(5), 1000)).toBe(10);
  });

  it('a timer that fires late does not let the next ones bunch: still never more than 5 in any second', async () => {
    // Every third sleep is 150 ms late (a loaded machine, a collection of the garbage).
    const paced = pacedClock((n) => (n % 3 === 0 ? 150 : 0));
    for (let i = 0; i < 60; i++) await paced.take(5);
    expect(busiest(paced.starts, 1000)).toBeLessThanOrEqual(5);
  });

  it('callers waiting at once take their turns in order, each spaced from the one before', async () => {
    const paced = pacedClock();
    await Promise.all(Array.from({ length: 20 }, () => paced.take(20)));
    expect(busiest(paced.starts, 1000)).toBe(20);
    expect(paced.starts).toEqual([...paced.starts].sort((a, b) => a - b));
  });

  it('follows a rate that changes as it goes (a cut, a climb)', async () => {
    const paced = pacedClock();
    await paced.take(10);
    await paced.take(2);
    expect(paced.starts[1]! - paced.starts[0]!).toBeCloseTo(500 * (1 + PACE_MARGIN), 0);
    await paced.take(10);
    expect(paced.starts[2]! - paced.starts[1]!).toBeCloseTo(100 * (1 + PACE_MARGIN), 0);
  });

  it('a caller that gives up its wait takes no turn: the next is spaced from the last one that started', async () => {
    let clock = 0;
    const waits: Array<{ ms: number; resolve: () => void }> = [];
    const pacer = new StartPacer(
      () => clock,
      (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          waits.push({ ms, resolve: () => ((clock += ms), resolve()) });
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    );
    await pacer.take(1);
    const stop = new AbortController();
    const givenUp = pacer.take(1, stop.signal);
    const next = pacer.take(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toHaveLength(1);
    stop.abort(new Error('stopped'));
    await expect(givenUp).rejects.toThrow('stopped');
    await new Promise((resolve) => setImmediate(resolve));
    // The next one waits as the given-up one did: a second (and the margin) after the first, not two.
    expect(waits).toHaveLength(2);
    expect(waits[1]!.ms).toBe(Math.ceil(1000 * (1 + PACE_MARGIN)));
    waits[1]!.resolve();
    await next;
  });
});
