// How a command ends early: on SIGINT, SIGTERM or SIGHUP (Ctrl-C, CI cancel,
// `docker stop`, a closed terminal), and when the reader of its output goes
// away (`| head`). And how every command ends: not before stdout and stderr
// have handed everything written to them to the operating system.
//
// The first signal aborts the command: its cleanups remove temp files and
// close listeners. Commands with paid-for requests on the wire (batch, export)
// register them (finishInFlight): there the first signal only stops new work,
// and what is in flight gets STOP_GRACE_MS to finish and be recorded. The next
// signal aborts; one more, or any signal once the command has ended, exits at
// once.
//
// Every stop is bounded: a command told to end (aborted, or stopped with
// nothing on the wire) has UNWIND_MS to do so, after which the process ends
// without it, with the line and exit code it would have ended with (130 for a
// signal, 141 for a reader gone). A call stuck in Node's thread pool (a hung
// network file system, a FIFO nobody opens) never settles, so the command
// awaiting it could never end by itself; and process.exit() itself waits for
// the pool's threads, so exitNow() ends the process without that wait.
import type { Writable } from 'node:stream';
import { BrokenPipeError, CliError, ExitCode, fileSystemError, InterruptedError } from './errors.js';
import { drained } from './streams.js';

export { drained };

export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** How long requests in flight may take to finish after the first signal. */
export const STOP_GRACE_MS = 30_000;
/** How long a command told to end (a signal, a reader gone) has to end, its cleanups run, before the process ends without it. */
export const UNWIND_MS = 1_000;

/** Work on the wire that the first signal lets finish. */
export interface InFlight {
  /** How many are on the wire now. */
  count(): number;
  /** What they are, singular: "request", "download". */
  noun: string;
  /** Shows a notice (through the progress display, so a bar is not torn). */
  notice(message: string): void;
}

export type OutputStream = Writable & { isTTY?: boolean };

/** Where the stop signals arrive: `process`, or a test terminal. */
export interface SignalTarget {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

/** Errors of a stream whose reader has gone: a closed pipe or socket. */
const READER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);

export interface ShutdownOptions {
  graceMs?: number;
  unwindMs?: number;
  /** Ends the process at once; a test may catch it. */
  exit?: (code: number) => void;
  /** Says why, before the process ends without the command having ended: the line the command would have printed. */
  onForcedExit?: (reason: CliError) => void;
}

export class Shutdown {
  private readonly aborter = new AbortController();
  private readonly stopper = new AbortController();
  /** Aborted when the command must end now: requests in flight are abandoned, cleanups run. */
  readonly signal = this.aborter.signal;
  /** Aborted when the command must start nothing new; always aborted with `signal` too. */
  readonly stopSignal = this.stopper.signal;
  /** The signal that stopped the command, if one did. */
  interruptedBy?: NodeJS.Signals;
  /** Why output could not be delivered: its reader went away, or its stream failed (a full disk). */
  outputFailure?: CliError;
  /** The stream's own error behind outputFailure (its stack, with --verbose, when it is unexpected). */
  outputCause?: Error;
  private inFlight?: InFlight;
  private graceTimer?: NodeJS.Timeout;
  /** Ends the process when a command told to end has not, UNWIND_MS later. */
  private unwindTimer?: NodeJS.Timeout;
  private ended = false;
  private readonly detachers: Array<() => void> = [];
  private streams: Record<string, OutputStream> = {};
  private readonly graceMs: number;
  private readonly unwindMs: number;
  private readonly exit: (code: number) => void;
  private readonly onForcedExit?: (reason: CliError) => void;

  constructor(options: ShutdownOptions = {}) {
    this.graceMs = options.graceMs ?? STOP_GRACE_MS;
    this.unwindMs = options.unwindMs ?? UNWIND_MS;
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.onForcedExit = options.onForcedExit;
  }

  /** Starts listening for the stop signals (`process`'s, or a test terminal's) and for failures of the output streams. */
  attach(streams: { stdout: OutputStream; stderr: OutputStream }, signals: SignalTarget = process): void {
    this.streams = { stdout: streams.stdout, stderr: streams.stderr };
    for (const name of STOP_SIGNALS) {
      const onSignal = () => this.onSignal(name);
      signals.on(name, onSignal);
      this.detachers.push(() => signals.off(name, onSignal));
    }
    for (const [name, stream] of Object.entries(this.streams)) {
      const onError = (error: NodeJS.ErrnoException) => this.onOutputError(error, name);
      stream.on('error', onError);
      this.detachers.push(() => stream.off('error', onError));
    }
  }

  /** The command has ended: a signal now exits at once, and no timer may outlive it. */
  end(): void {
    this.ended = true;
    clearTimeout(this.graceTimer);
    clearTimeout(this.unwindTimer);
  }

  /** Waits until stdout and stderr have handed everything to the OS, and notes a failure they met doing it. */
  async drain(): Promise<void> {
    const streams = Object.entries(this.streams);
    await Promise.all(streams.map(([, stream]) => drained(stream)));
    // A write that failed at once has its error event still to come.
    for (const [name, stream] of streams) if (stream.errored) this.onOutputError(stream.errored, name);
  }

  detach(): void {
    this.end();
    while (this.detachers.length) this.detachers.pop()!();
  }

  /** Lets the first signal stop new work only, while `inFlight` finishes (see the top of this file). */
  finishInFlight(inFlight: InFlight): void {
    this.inFlight = inFlight;
  }

  /** The exit code of a command that ended with `code`, given how it was stopped. */
  exitCode(code: number): number {
    if (this.interruptedBy) return ExitCode.Interrupted;
    return this.outputFailure?.exitCode ?? code;
  }

  private onSignal(name: NodeJS.Signals): void {
    // Already aborting (or done): no more waiting, no more cleanup.
    if (this.ended || this.signal.aborted) return this.exit(ExitCode.Interrupted);
    this.interruptedBy ??= name;
    const again = name === 'SIGINT' ? 'press Ctrl-C again' : `send ${name} again`;
    this.stop(new InterruptedError(), (count, noun) => `${name === 'SIGINT' ? 'interrupted' : name}: finishing ${count} ${noun} in flight (at most ${this.graceMs / 1000}s); ${again} to abort`);
  }

  /** Ends the process UNWIND_MS from now, for `reason`, unless the command has ended by then. */
  private endWithinUnwind(reason: CliError): void {
    if (this.ended || this.unwindTimer) return;
    this.unwindTimer = setTimeout(() => {
      if (this.ended) return;
      this.onForcedExit?.(reason);
      this.exit(this.exitCode(reason.exitCode));
    }, this.unwindMs);
  }

  private onOutputError(error: NodeJS.ErrnoException, stream: string): void {
    if (this.outputFailure) return;
    this.outputCause = error;
    const what = stream === 'stdout' ? 'standard output' : 'standard error';
    this.outputFailure = READER_GONE.has(error.code ?? '')
      ? new BrokenPipeError()
      : (fileSystemError(error, `cannot write to ${what}`) ?? new CliError(`unexpected: cannot write to ${what}: ${error.message}`, ExitCode.Unexpected, 'Unexpected'));
    // Nothing written from now on can arrive: the command stops as it would for a signal, quietly.
    if (!this.ended && !this.signal.aborted) this.stop(this.outputFailure);
  }

  /** Stops new work; aborts at once unless work in flight is registered, which gets the grace period. */
  private stop(reason: CliError, notice?: (count: number, noun: string) => string): void {
    const inFlight = this.inFlight;
    if (!inFlight || this.stopSignal.aborted) return this.abort(reason);
    this.stopper.abort(reason);
    const count = inFlight.count();
    // Nothing on the wire: nothing paid for is waited for, so the command has only UNWIND_MS to end.
    if (count === 0) this.endWithinUnwind(reason);
    const noun = (n: number) => `${inFlight.noun}${n === 1 ? '' : 's'}`;
    if (count > 0 && notice) inFlight.notice(notice(count, noun(count)));
    this.graceTimer = setTimeout(() => {
      const left = inFlight.count();
      if (left > 0) inFlight.notice(`${left} ${noun(left)} still in flight after ${this.graceMs / 1000}s: abandoned`);
      this.abort(reason);
    }, this.graceMs);
  }

  /** Ends the command now, as a second signal does. */
  abort(reason: CliError = new InterruptedError()): void {
    clearTimeout(this.graceTimer);
    if (!this.stopSignal.aborted) this.stopper.abort(reason);
    this.aborter.abort(reason);
    this.endWithinUnwind(reason);
  }
}

/** Requests Node hands to its thread pool (file-system calls, name lookups, compression), by resource name. */
const POOL_REQUEST = /^(FSReq|FileHandleCloseReq|GetAddrInfoReqWrap|GetNameInfoReqWrap|Zlib)/;

/** Whether a call is in Node's thread pool now, which process.exit() would wait for. */
export function poolIsBusy(): boolean {
  return process.getActiveResourcesInfo().some((name) => POOL_REQUEST.test(name));
}

/** Whether exitNow() can end the process without waiting for the thread pool and without a signal (Node 22.15 and later). */
export const canReplaceProcess = typeof (process as { execve?: unknown }).execve === 'function';

/**
 * Ends this process with `code` at once. process.exit() first waits for every
 * thread of Node's pool to finish the call it is in: one stuck in a system
 * call that never returns (a hung network file system) holds it for ever. So
 * while a call is in the pool, process.execve (Node 22.15 and later) replaces
 * the process without that wait, with a shell that exits with `code`; where
 * it is missing (Node 20), the process is ended by `signal` itself, its
 * default action restored, which does not wait either (a shell then reads 128
 * plus its number: 130 for SIGINT, 143 for SIGTERM).
 */
export function exitNow(code: number, signal?: NodeJS.Signals): void {
  if (poolIsBusy()) {
    const { execve } = process as { execve?: (file: string, args: string[], env: Record<string, string>) => never };
    try {
      execve?.('/bin/sh', ['sh', '-c', `exit ${code}`], {});
    } catch {
      // No shell to become: the ways below.
    }
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
  }
  process.exit(code);
}
