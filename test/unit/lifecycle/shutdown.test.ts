// How a command is stopped: the first signal, the grace for work in flight,
// the second and third signals, a reader gone, and waiting for output to drain.
// Signals are emitted on this process (process.emit), which runs the listeners
// without delivering a real signal.
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokenPipeError, ExitCode, InterruptedError } from '../../../src/lifecycle/errors.js';
import { drained, Shutdown, type InFlight } from '../../../src/lifecycle/shutdown.js';

const attached: Shutdown[] = [];
afterEach(() => {
  while (attached.length) attached.pop()!.detach();
});

function shutdownWith(graceMs = 10_000) {
  const exits: number[] = [];
  const shutdown = new Shutdown({ graceMs, exit: (code) => exits.push(code) });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  shutdown.attach({ stdout, stderr });
  attached.push(shutdown);
  return { shutdown, exits, stdout, stderr };
}

function inFlight(count: number): InFlight & { notices: string[] } {
  const notices: string[] = [];
  return { count: () => count, noun: 'request', notice: (message) => notices.push(message), notices };
}

describe('Shutdown', () => {
  it('aborts at once on the first SIGINT, SIGTERM or SIGHUP when nothing in flight is registered', () => {
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const { shutdown, exits } = shutdownWith();
      process.emit(name);
      expect(shutdown.signal.aborted, name).toBe(true);
      expect(shutdown.stopSignal.aborted, name).toBe(true);
      expect(shutdown.signal.reason).toBeInstanceOf(InterruptedError);
      expect(shutdown.exitCode(0)).toBe(ExitCode.Interrupted);
      expect(exits).toEqual([]);
      // Aborting already: the next signal exits without waiting for any cleanup.
      process.emit(name);
      expect(exits).toEqual([ExitCode.Interrupted]);
      shutdown.detach();
    }
  });

  it('with work in flight, the first signal only stops new work and says how to abort; the second aborts; the third exits', () => {
    const { shutdown, exits } = shutdownWith();
    const work = inFlight(3);
    shutdown.finishInFlight(work);
    process.emit('SIGTERM');
    expect(shutdown.stopSignal.aborted).toBe(true);
    expect(shutdown.signal.aborted).toBe(false);
    expect(work.notices).toEqual(['SIGTERM: finishing 3 requests in flight (at most 10s); send SIGTERM again to abort']);
    process.emit('SIGINT');
    expect(shutdown.signal.aborted).toBe(true);
    expect(exits).toEqual([]);
    process.emit('SIGHUP');
    expect(exits).toEqual([ExitCode.Interrupted]);
  });

  it('says "press Ctrl-C again" for SIGINT, and counts one request as one', () => {
    const { shutdown } = shutdownWith();
    const work = inFlight(1);
    shutdown.finishInFlight(work);
    process.emit('SIGINT');
    expect(work.notices).toEqual(['interrupted: finishing 1 request in flight (at most 10s); press Ctrl-C again to abort']);
  });

  it('aborts what is still in flight when the grace period ends', async () => {
    const { shutdown } = shutdownWith(50);
    const work = inFlight(2);
    shutdown.finishInFlight(work);
    process.emit('SIGHUP');
    expect(shutdown.signal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(shutdown.signal.aborted).toBe(true);
    expect(work.notices[1]).toBe('2 requests still in flight after 0.05s: abandoned');
  });

  it('once the command has ended, a signal exits at once (output still draining)', () => {
    const { shutdown, exits } = shutdownWith();
    shutdown.end();
    process.emit('SIGTERM');
    expect(exits).toEqual([ExitCode.Interrupted]);
  });

  it('a reader gone (EPIPE) stops the command quietly with 141, on stdout or stderr alike', () => {
    for (const stream of ['stdout', 'stderr'] as const) {
      const setup = shutdownWith();
      const work = inFlight(2);
      setup.shutdown.finishInFlight(work);
      setup[stream].emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      expect(setup.shutdown.outputFailure).toBeInstanceOf(BrokenPipeError);
      // Like a signal, it lets the requests in flight finish; unlike one, it says nothing.
      expect(setup.shutdown.stopSignal.aborted).toBe(true);
      expect(setup.shutdown.signal.aborted).toBe(false);
      expect(work.notices).toEqual([]);
      expect(setup.shutdown.exitCode(0)).toBe(ExitCode.BrokenPipe);
      setup.shutdown.detach();
    }
  });

  it('stdout on a full disk is a file-system error (exit 2) naming standard output', () => {
    const { shutdown, stdout } = shutdownWith();
    stdout.emit('error', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
    expect(shutdown.outputFailure?.message).toBe('cannot write to standard output: no space left on the device');
    expect(shutdown.exitCode(0)).toBe(ExitCode.Usage);
  });
});

describe('drained', () => {
  it('resolves only once a slow writable has taken everything written before', async () => {
    let taken = 0;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        setTimeout(() => {
          taken += chunk.length;
          done();
        }, 5);
      },
    });
    for (let i = 0; i < 20; i++) slow.write(Buffer.alloc(100));
    expect(taken).toBe(0);
    await drained(slow);
    expect(taken).toBe(2_000);
  });

  it('resolves at once for a stream with nothing pending, or one that has failed', async () => {
    const idle = new PassThrough();
    await drained(idle);
    const failed = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EPIPE')) });
    failed.on('error', () => {});
    failed.write('x');
    failed.write('y');
    await drained(failed);
  });
});
