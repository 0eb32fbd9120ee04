import { describe, expect, it } from 'vitest';
import { PauseGate, runPool, Slots } from '../../src/batch/runner.js';

describe('runPool', () => {
  it('never runs more than the concurrency at once, and runs everything once', async () => {
    let active = 0;
    let peak = 0;
    const seen: number[] = [];
    const items = Array.from({ length: 50 }, (_, i) => i);
    const result = await runPool(
      items,
      7,
      async (item) => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, (item % 5) + 1));
        seen.push(item);
        active--;
      },
      () => false,
    );
    expect(peak).toBe(7);
    expect(seen.sort((a, b) => a - b)).toEqual(items);
    expect(result.notStarted).toEqual([]);
  });

  it('hands back the items not started once told to stop', async () => {
    let stop = false;
    const started: number[] = [];
    const result = await runPool(
      [1, 2, 3, 4, 5, 6],
      2,
      async (item) => {
        started.push(item);
        if (item === 3) stop = true;
        await Promise.resolve();
      },
      () => stop,
    );
    expect(started.length + result.notStarted.length).toBe(6);
    expect(result.notStarted.length).toBeGreaterThan(0);
    expect([...started, ...result.notStarted].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('rejects with a worker failure after the other workers finish', async () => {
    const finished: number[] = [];
    await expect(
      runPool(
        [1, 2],
        2,
        async (item) => {
          if (item === 1) throw new Error('boom');
          await new Promise((resolve) => setTimeout(resolve, 5));
          finished.push(item);
        },
        () => false,
      ),
    ).rejects.toThrow('boom');
    expect(finished).toEqual([2]);
  });
});

describe('PauseGate', () => {
  it('holds every waiter until the longest pause has passed', async () => {
    const gate = new PauseGate();
    gate.pause(40);
    gate.pause(10);
    const started = Date.now();
    await Promise.all([gate.wait(), gate.wait()]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(38);
    expect(gate.remaining()).toBe(0);
  });

  it('stops waiting when the signal aborts', async () => {
    const gate = new PauseGate();
    gate.pause(10_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interrupted')), 5);
    await expect(gate.wait(controller.signal)).rejects.toThrow('interrupted');
  });
});

describe('Slots', () => {
  it('never has more holders than slots, and serves waiters first come, first served', async () => {
    const slots = new Slots(2);
    const order: number[] = [];
    const releases = await Promise.all([slots.acquire(), slots.acquire()]);
    expect(slots.inUse()).toBe(2);
    const waiting = [3, 4, 5].map((n) => slots.acquire().then((release) => (order.push(n), release)));
    await Promise.resolve();
    expect(order).toEqual([]);
    releases[0]!();
    releases[0]!(); // a second call gives nothing back
    const third = await waiting[0]!;
    expect(order).toEqual([3]);
    expect(slots.inUse()).toBe(2);
    releases[1]!();
    third();
    const [fourth, fifth] = await Promise.all([waiting[1]!, waiting[2]!]);
    expect(order).toEqual([3, 4, 5]);
    fourth();
    fifth();
    expect(slots.inUse()).toBe(0);
  });

  it('stops waiting when the signal aborts, without taking a slot', async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const controller = new AbortController();
    const waiter = slots.acquire(controller.signal);
    controller.abort(new Error('interrupted'));
    await expect(waiter).rejects.toThrow('interrupted');
    held();
    expect(slots.inUse()).toBe(0);
    await expect(slots.acquire(controller.signal)).rejects.toThrow('interrupted');
    expect(slots.inUse()).toBe(0);
  });
});
