// Runs a batch's rows: for each row a "started" manifest line, its attempts
// under the retry engine (api/retry.ts, with the batch's policy), and a "done"
// or "failed" line. A failure every further row would meet too (a 401 or 402,
// a full disk) stops the batch and leaves the rest "skipped", and so does the
// first signal, while the requests already on the wire finish.
// --concurrency bounds the requests on the wire: each attempt runs within a
// slot (p-limit), given back as soon as its response has arrived, so the next
// row's request goes out while the previous one's file is finished.
import pLimit, { type LimitFunction } from 'p-limit';
import { ApiError, ImageUrlRefusedError } from '../api/errors.js';
import { asCliError, CliError, ExitCode, fileSystemError, FileSystemError } from '../errors.js';
import { NotRetriedError, type RetryHooks } from '../api/retry.js';
import type { GenerationRequest } from '../api/schema.js';
import type { WrittenJpeg } from '../jpeg-file.js';
import type { ManifestWriter } from './manifest.js';
import type { PlannedRow } from './plan.js';
import type { Progress, ProgressCounts } from './progress.js';
import type { ResumeEntry } from './resume.js';
import type { RowOutcome } from './summary.js';

export interface Job {
  plan: PlannedRow & { request: GenerationRequest; target: string; file: string; key: string };
  resume: ResumeEntry;
}

/** What a row learns on its way that its result reports. */
export interface RowNotes {
  /** The async request whose callback delivered the image. */
  requestId?: string;
}

/**
 * Makes one row's image: its request(s) sent with `retry` (the row's slot,
 * its stop, its progress) and its file written.
 */
export type RowProducer = (job: Job, retry: RetryHooks, signal: AbortSignal, notes: RowNotes) => Promise<WrittenJpeg>;

/** A failure as the batch reports it: a file-system error in the user's terms, anything unknown as a bug. */
export function rowFailure(error: unknown): CliError {
  const named = asCliError(error);
  if (named) return named;
  const err = error as { code?: string; message?: string };
  return fileSystemError(error, 'cannot write the image') ?? new CliError(err?.message ?? String(error), ExitCode.Unexpected, typeof err?.code === 'string' ? err.code : 'Unexpected');
}

/**
 * A failure every further row would meet the same way: the key refused (401,
 * 403), the credits gone (402), or a disk that cannot take the images (each
 * further row would be paid for and lost). A refused image URL says nothing
 * about the key.
 */
export function stopsTheBatch(error: unknown): boolean {
  if (error instanceof ApiError) return !(error instanceof ImageUrlRefusedError) && [401, 402, 403].includes(error.status);
  return rowFailure(error) instanceof FileSystemError;
}

/** When a row gives up after retries, say so in its reason. */
export function describeFailure(error: CliError, attempts: number): string {
  const what = error.status !== undefined ? `${error.code}: ${error.message}` : error.message;
  return attempts > 1 ? `${what} (after ${attempts} attempts)` : what;
}

export class RowRunner {
  private readonly results = new Map<number, RowOutcome>();
  private readonly counts: ProgressCounts;
  private onWire?: LimitFunction;
  /** The batch's own stop (stopError), beside the signal's. */
  private readonly stopping = new AbortController();
  /** Once aborted, no request is sent and no retry waited for. */
  private readonly stopSignal: AbortSignal;
  stopError?: CliError;

  constructor(
    private readonly jobs: Job[],
    private readonly manifest: ManifestWriter,
    private readonly produce: RowProducer,
    private readonly progress: Progress,
    /** Aborts everything, requests on the wire included. */
    private readonly signal: AbortSignal,
    /** Stops new work: no request is sent, and no retry waited for, once it is aborted. */
    stopSignal: AbortSignal = signal,
  ) {
    this.counts = { total: jobs.length, done: 0, failed: 0, retrying: 0 };
    this.stopSignal = AbortSignal.any([stopSignal, this.stopping.signal]);
  }

  async run(concurrency: number): Promise<void> {
    this.progress.update(this.counts);
    this.onWire = pLimit(concurrency);
    // Twice as many rows under way as slots: one on the wire and one finishing its file, per slot.
    const underWay = pLimit(concurrency * 2);
    const rows = this.jobs.map((job) =>
      underWay(async () => {
        // Rows never started by an aborted run are reported with the run (markUnfinished).
        if (this.signal.aborted) return;
        if (this.stopSignal.aborted) return this.skip(job);
        await this.runRow(job);
      }),
    );
    const settled = await Promise.allSettled(rows);
    const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** Requests on the wire now (a row holds its slot until its response has arrived). */
  inFlight(): number {
    return this.onWire?.activeCount ?? 0;
  }

  private skip(job: Job): void {
    this.results.set(job.plan.row, {
      row: job.plan.row,
      status: 'skipped',
      file: job.plan.target,
      attempts: 0,
      error: `not started: the batch stopped early (${this.stopError?.code ?? 'interrupted'})`,
      exitCode: this.stopError?.exitCode,
    });
  }

  /**
   * A row the signal's stop reached before its next request: never sent (no
   * manifest line), or sent before and now not retried, recorded as failed so
   * that a re-run sends it again without taking it for one that was in flight.
   */
  private interrupted(job: Job, stopped: NotRetriedError): void {
    const { row, key, file, target } = job.plan;
    const { attempts, message: error } = stopped;
    if (attempts > 0) this.manifest.append({ row, key, status: 'failed', file, attempts, error }, true);
    this.results.set(row, { row, status: 'skipped', file: target, attempts, error });
  }

  /** Rows in flight or not started when the run was cut short. */
  markUnfinished(reason: string): void {
    for (const job of this.jobs) {
      if (!this.results.has(job.plan.row)) {
        this.results.set(job.plan.row, { row: job.plan.row, status: 'skipped', file: job.plan.target, attempts: 0, error: reason });
      }
    }
  }

  outcomes(): RowOutcome[] {
    return [...this.results.values()];
  }

  /** Stops the batch when `error` is one every further row would meet (before the failed row's slot is handed on). */
  private stopIfAllWouldFail(error: unknown): boolean {
    if (!stopsTheBatch(error)) return false;
    if (!this.stopError) {
      const failure = rowFailure(error);
      this.stopError = failure;
      this.progress.log(`stopping the batch: ${failure.code} — ${failure.message}; rows not yet started are skipped`);
      this.stopping.abort(failure);
    }
    return true;
  }

  private async runRow(job: Job): Promise<void> {
    const { row, key, file, target } = job.plan;
    const notes: RowNotes = {};
    let attempts = 0;
    const hooks: RetryHooks = {
      stopSignal: this.stopSignal,
      admit: (attempt) => this.onWire!(attempt),
      onAttempt: (attempt) => {
        attempts = attempt.number;
        if (attempt.number === 1) this.manifest.append({ row, key, status: 'started', file }, false);
      },
      onRetry: () => {
        this.counts.retrying++;
        this.progress.update(this.counts);
        return () => void this.counts.retrying--;
      },
      onGiveUp: (error) => void this.stopIfAllWouldFail(error),
    };
    let failure: CliError;
    let exitCode: number | undefined;
    let stopped = false;
    try {
      const { bytes } = await this.produce(job, hooks, this.signal, notes);
      this.manifest.append({ row, key, status: 'done', file, bytes, attempts }, true);
      this.finish({ row, status: 'done', file: target, bytes, attempts, requestId: notes.requestId });
      return;
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      if (error instanceof NotRetriedError) {
        if (!this.stopError) return this.interrupted(job, error);
        if (error.attempts === 0) return this.skip(job);
        failure = new CliError(`not retried: the batch stopped early (${this.stopError.code})`, this.stopError.exitCode, this.stopError.code);
        exitCode = this.stopError.exitCode;
      } else {
        failure = rowFailure(error);
        stopped = this.stopIfAllWouldFail(error);
      }
    }
    const reason = exitCode === undefined ? describeFailure(failure, attempts) : failure.message;
    this.manifest.append({ row, key, status: 'failed', file, attempts, error: reason }, true);
    if (!stopped) this.progress.log(`row ${row} failed: ${reason}`);
    this.finish({ row, status: 'failed', file: target, attempts, error: reason, exitCode: exitCode ?? failure.exitCode, requestId: notes.requestId });
  }

  private finish(outcome: RowOutcome): void {
    this.results.set(outcome.row, outcome);
    if (outcome.status === 'done') this.counts.done++;
    else this.counts.failed++;
    this.progress.update(this.counts);
  }
}
