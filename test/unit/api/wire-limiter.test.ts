// Room on the wire for a batch's requests and the pause every caller honours
// after a 429 (src/api/wire-limiter.ts), on clocks the tests move; the last
// test runs them under the retry engine, as a batch does.
import { describe, expect, it, vi } from 'vitest';
import { persistentPolicy, withRetries, type RetryPolicy } from '../../../src/api/retry.js';
import { PauseGate, WireLimiter, type WireTicket } from '../../../src/api/wire-limiter.js';
import { onFakeClock, sleepOnTimers } from '../../helpers/fake-clock.js';

const batch = (overrides: Partial<Parameters<typeof persistentPolicy>[0]> = {}): RetryPolicy =>
  persistentPolicy({ maxRetries: 5, firstDelayMs: 100, retryUnsafe: false, ...overrides });

describe('PauseGate', () => {
  it('holds every waiter until the longest pause has passed, telling only when a pause starts', () =>
    onFakeClock(async () => {
      const told: number[] = [];
      const gate = new PauseGate((ms) => told.push(ms), Date.now, sleepOnTimers);
      gate.pause(40);
      gate.pause(10);
      const started = Date.now();
      const released: number[] = [];
      const waiting = Promise.all([gate.wait(), gate.wait()].map((wait) => wait.then(() => released.push(Date.now() - started))));
      await vi.runAllTimersAsync();
      await waiting;
      expect(released).toEqual([40, 40]);
      expect(gate.remaining()).toBe(0);
      expect(told).toEqual([40]);
    }));

  it('stops waiting when the signal aborts', async () => {
    const gate = new PauseGate();
    gate.pause(10_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interrupted')), 5);
    await expect(gate.wait(controller.signal)).rejects.toThrow('interrupted');
  });
});

describe('WireLimiter', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

  it('lets at most its limit on the wire, in turn', async () => {
    const wire = new WireLimiter(3);
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        wire.admit(async (ticket) => {
          ticket.sent();
          order.push(i);
          peak = Math.max(peak, wire.inFlight);
          await tick();
          ticket.answered(false);
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(wire.stats).toMatchObject({ requests: 10, rateLimited: 0, lowestLimit: 3 });
  });

  it('halves the limit on a 429 once per round, and grows it back by one per limit\'s worth of answers', async () => {
    const cuts: number[] = [];
    const wire = new WireLimiter(16, { onCut: (limit) => cuts.push(limit) });
    // Eight requests on the wire together are all refused: one cut, not eight.
    const tickets: WireTicket[] = [];
    const held: Array<() => void> = [];
    const round = Array.from({ length: 8 }, () => wire.admit((ticket) => new Promise<void>((resolve) => (tickets.push(ticket), held.push(resolve)))));
    await tick();
    for (const ticket of tickets) ticket.answered(true);
    held.forEach((release) => release());
    await Promise.all(round);
    expect(wire.limit).toBe(8);
    expect(cuts).toEqual([8]);
    // A 429 to a request sent after the cut cuts again.
    await wire.admit(async (ticket) => ticket.answered(true));
    expect(wire.limit).toBe(4);
    // Four answers grow it by one; the next five by one more.
    for (let i = 0; i < 4; i++) await wire.admit(async (ticket) => ticket.answered(false));
    expect(wire.limit).toBe(5);
    for (let i = 0; i < 5; i++) await wire.admit(async (ticket) => ticket.answered(false));
    expect(wire.limit).toBe(6);
    // Never below one, never above the concurrency it started with.
    for (let i = 0; i < 10; i++) await wire.admit(async (ticket) => ticket.answered(true));
    expect(wire.limit).toBe(1);
    for (let i = 0; i < 2000; i++) await wire.admit(async (ticket) => ticket.answered(false));
    expect(wire.limit).toBe(16);
    expect(wire.stats).toMatchObject({ rateLimited: 19, lowestLimit: 1 });
  });

  it('lets waiting callers in as the limit grows', async () => {
    const wire = new WireLimiter(2);
    await wire.admit(async (ticket) => ticket.answered(true));
    expect(wire.limit).toBe(1);
    let release!: () => void;
    const first = wire.admit((ticket) => new Promise<void>((resolve) => (release = () => (ticket.answered(false), resolve()))));
    let secondStarted = false;
    const second = wire.admit(async () => void (secondStarted = true));
    await tick();
    expect(secondStarted).toBe(false);
    release();
    await Promise.all([first, second]);
    expect(secondStarted).toBe(true);
  });

  it('paces nothing until a 429, then at the rate cut from what was being sent, never above --rate', async () => {
    let clock = 0;
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      clock += ms;
    };
    const wire = new WireLimiter(64, { now: () => clock, sleep });
    const send = async (rateLimited: boolean, answerMs = 10) =>
      wire.admit(async (ticket) => {
        await wire.pace();
        ticket.sent();
        clock += answerMs;
        ticket.answered(rateLimited);
      });
    // 100 requests a second, none held back.
    for (let i = 0; i < 100; i++) await send(false);
    expect(slept).toEqual([]);
    await send(true);
    expect(wire.sendRate.rate).toBeCloseTo(70, 0);
    // From now on their starts are spaced about 1/70 s apart, even against answers that come at once.
    for (let i = 0; i < 20; i++) await send(false, 0);
    expect(slept.length).toBeGreaterThan(10);
    expect(Math.max(...slept)).toBeLessThanOrEqual(Math.ceil(1000 / 70));

    const capped = new WireLimiter(64, { ratePerSecond: 5, now: () => clock, sleep });
    expect(capped.sendRate.rate).toBe(5);
  });

  it('an attempt whose turn to start comes during a 429\'s pause waits for the pause too, and is sent after it', async () => {
    let clock = 0;
    // Sleeps resolve when the test says, moving the clock to their end.
    const sleeping: Array<() => void> = [];
    const sleep = (ms: number) => new Promise<void>((resolve) => sleeping.push(() => ((clock = Math.max(clock, clock + ms)), resolve())));
    const wire = new WireLimiter(4, { ratePerSecond: 1, now: () => clock, sleep });
    const pause = new PauseGate(undefined, () => clock, sleep);
    const policy: RetryPolicy = { ...batch(), pause, wire, sleep };
    const sentAt: number[] = [];
    const work = async () => void sentAt.push(clock);
    await withRetries(policy, { kind: 'generation' }, work);
    // The second waits for its turn (a second after the first)...
    const second = withRetries(policy, { kind: 'generation' }, work);
    await tick();
    expect(sleeping).toHaveLength(1);
    // ...while a 429 elsewhere pauses everyone for 5 s.
    pause.pause(5_000);
    sleeping.shift()!();
    await tick();
    expect(sentAt).toEqual([0]);
    // Its turn came inside the pause: it waits out the rest of the pause, and a turn after it.
    while (sentAt.length < 2) {
      expect(sleeping.length).toBeGreaterThan(0);
      sleeping.shift()!();
      await tick();
    }
    await second;
    expect(sentAt[1]).toBeGreaterThanOrEqual(5_000);
  });
});
