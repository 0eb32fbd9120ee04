// The adaptive sending rate (src/api/send-rate.ts) on a clock the test moves:
// nothing held back before a 429, a cut to 0.7 of the measured rate at one,
// a cubic climb back, one cut per round, never above --rate.
import { describe, expect, it } from 'vitest';
import { SEND_RATE, SendRate } from '../../../src/api/send-rate.js';

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

  it('judges the rate from what was sent so far when a 429 comes before a span has closed', () => {
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
