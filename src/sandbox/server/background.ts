// Work that outlives the request that started it (async generation and its
// webhook delivery). Closing the sandbox gives it a grace period, then aborts it.
import { sleep } from '../faults.js';

export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();
  private controller = new AbortController();
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get pending(): number {
    return this.running.size;
  }

  /** Runs `task` in the background; its failure is reported to `onError`, never thrown. */
  start(task: (signal: AbortSignal) => Promise<void>, onError: (error: unknown) => void): void {
    const promise = (async () => {
      try {
        await task(this.controller.signal);
      } catch (error) {
        onError(error);
      }
    })();
    this.running.add(promise);
    void promise.finally(() => {
      this.running.delete(promise);
      if (this.running.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const wake of waiters) wake();
      }
    });
  }

  /** Resolves when nothing is running (tests use it to wait for a webhook). */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Aborts what is running and waits for it to wind down; work started later runs as usual (the fixture's reset()). */
  async cancel(): Promise<void> {
    const running = this.controller;
    if (!this.stopped) this.controller = new AbortController();
    running.abort();
    await this.idle();
  }

  /** Lets running work finish for up to `graceMs`, then aborts it and waits for it to wind down. */
  async stop(graceMs: number): Promise<void> {
    if (this.running.size > 0 && graceMs > 0) {
      const timer = new AbortController();
      await Promise.race([this.idle(), sleep(graceMs, timer.signal)]);
      timer.abort();
    }
    this.stopped = true;
    this.controller.abort();
    await this.idle();
  }
}
