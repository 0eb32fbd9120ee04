// Every stop a signal makes is bounded (src/lifecycle/shutdown.ts): a command
// told to end that does not (it awaits a call stuck in the thread pool) is
// ended UNWIND_MS later with the line it would have printed and exit 130;
// one with requests in flight gets the grace first. Signals are emitted on
// this process (process.emit); time is vitest's fake clock, moved by hand.
// The same, with a real stuck call and real signals, is in
// test/e2e/fault-sweep.test.ts.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokenPipeError, CliError, ExitCode, InterruptedError } from '../../../src/lifecycle/errors.js';
import { Shutdown, type InFlight } from '../../../src/lifecycle/shutdown.js';

const attached: Shutdown[] = [];
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  while (attached.length) attached.pop()!.detach();
  vi.useRealTimers();
});

function shutdownWith(options: { graceMs?: number; unwindMs?: number } = {}) {
  const exits: number[] = [];
  const forced: CliError[] = [];
  const shutdown = new Shutdown({ graceMs: 30_000, unwindMs: 1_000, ...options, exit: (code) => exits.push(code), onForcedExit: (reason) => forced.push(reason) });
  shutdown.attach({ stdout: new PassThrough(), stderr: new PassThrough() });
  attached.push(shutdown);
  return { shutdown, exits, forced };
}

function inFlight(count: () => number): InFlight {
  return { count, noun: 'request', notice: () => {} };
}

describe('a command stopped by a signal that does not end', () => {
  it('with nothing registered in flight: aborted at once, and ended with its line and 130 once the unwind time has passed', () => {
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const { shutdown, exits, forced } = shutdownWith();
      process.emit(name);
      expect(shutdown.signal.aborted).toBe(true);
      vi.advanceTimersByTime(999);
      expect(exits, name).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(exits, name).toEqual([ExitCode.Interrupted]);
      expect(forced, name).toHaveLength(1);
      expect(forced[0]).toBeInstanceOf(InterruptedError);
      shutdown.detach();
    }
  });

  it('a command that ends within the unwind time is not ended for it: its own exit code and line stand', () => {
    const { shutdown, exits, forced } = shutdownWith();
    process.emit('SIGTERM');
    vi.advanceTimersByTime(500);
    shutdown.end();
    vi.advanceTimersByTime(10_000);
    expect(exits).toEqual([]);
    expect(forced).toEqual([]);
  });

  it('batch or export with nothing on the wire: new work stops, the run may end by itself, and is ended after the unwind time', () => {
    const { shutdown, exits } = shutdownWith();
    shutdown.finishInFlight(inFlight(() => 0));
    process.emit('SIGINT');
    // Stopped, not aborted: a run between rows ends as a stopped run does, with its summary.
    expect(shutdown.stopSignal.aborted).toBe(true);
    expect(shutdown.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(exits).toEqual([ExitCode.Interrupted]);
  });

  it('with requests on the wire: the grace for them, then the abort, then the unwind time, and no longer', () => {
    const { shutdown, exits, forced } = shutdownWith({ graceMs: 30_000 });
    let onTheWire = 2;
    shutdown.finishInFlight(inFlight(() => onTheWire));
    process.emit('SIGTERM');
    vi.advanceTimersByTime(29_999);
    expect(shutdown.signal.aborted).toBe(false);
    expect(exits).toEqual([]);
    // One request is stuck for good (its answer never comes, or its file is on a hung disk).
    onTheWire = 1;
    vi.advanceTimersByTime(1);
    expect(shutdown.signal.aborted).toBe(true);
    vi.advanceTimersByTime(999);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([ExitCode.Interrupted]);
    expect(forced).toHaveLength(1);
  });

  it('a second signal still ends it at once, before the unwind time', () => {
    const { exits } = shutdownWith();
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(exits).toEqual([ExitCode.Interrupted]);
  });

  it('a reader gone is bounded the same way, with its own exit code (141) and nothing said', () => {
    const exits: number[] = [];
    const forced: CliError[] = [];
    const shutdown = new Shutdown({ unwindMs: 1_000, exit: (code) => exits.push(code), onForcedExit: (reason) => forced.push(reason) });
    const stdout = new PassThrough();
    shutdown.attach({ stdout, stderr: new PassThrough() });
    attached.push(shutdown);
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(shutdown.signal.aborted).toBe(true);
    vi.advanceTimersByTime(1_000);
    expect(exits).toEqual([ExitCode.BrokenPipe]);
    expect(forced[0]).toBeInstanceOf(BrokenPipeError);
  });
});
