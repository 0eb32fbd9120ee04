// Runs a batch's rows: for each row a "started" manifest line, its attempts
// under the retry engine (api/retry.ts, with the batch's policy), and a "done"
// or "failed" line. A failure every further row would meet too (a 401 or 402,
// a full disk) stops the batch and leaves the rest "skipped", and so does the
// first signal, while the requests already on the wire finish.
// Rows are taken from their source one at a time, as workers are free: a
// batch of any length holds only the rows under way. --concurrency bounds the
// requests on the wire (the policy's WireLimiter): each attempt runs within
// its room there, given back as soon as its response has arrived, so the next
// row's request goes out while the previous one's file is finished.
import { ApiError, ImageUrlRefusedError } from '../api/errors.js';
import { isRateLimited, NotRetriedError, type RetryHooks } from '../api/retry.js';
import { asCliError, CliError, ExitCode, fileSystemError, FileSystemError } from '../lifecycle/errors.js';
import type { WrittenJpeg } from '../files/jpeg-file.js';
import type { ManifestWriter } from './manifest.js';
import type { OutcomeLog } from './outcomes.js';
import type { ValidRow } from './plan.js';
import type { Progress, ProgressCounts } from '../bulk/progress.js';
import type { ResumeEntry } from './resume.js';
import { describeFailure, type RowOutcome } from '../bulk/summary.js';

export interface Job {
  plan: ValidRow;
  resume: ResumeEntry;
}

/** What a row learns on its way that its result reports. */
export interface RowNotes {
  /** The async request whose callback delivered the image, and the image's id. */
  requestId?: string;
  imageId?: string;
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

export interface RunnerOptions {
  manifest: ManifestWriter;
  produce: RowProducer;
  progress: Progress;
  outcomes: OutcomeLog;
  /** Aborts everything, requests on the wire included. */
  signal: AbortSignal;
  /** Stops new work: no request is sent, and no retry waited for, once it is aborted. */
  stopSignal?: AbortSignal;
}

export class RowRunner {
  private readonly counts: ProgressCounts = { total: 0, done: 0, failed: 0, retrying: 0 };
  /** The batch's own stop (stopError), beside the signal's. */
  private readonly stopping = new AbortController();
  /** Once aborted, no request is sent and no retry waited for. */
  private readonly stopSignal: AbortSignal;
  private readonly signal: AbortSignal;
  private sentNotSettled = 0;
  stopError?: CliError;

  constructor(private readonly options: RunnerOptions) {
    this.signal = options.signal;
    this.stopSignal = AbortSignal.any([options.stopSignal ?? options.signal, this.stopping.signal]);
  }

  /**
   * Runs `jobs` (`total` of them) with `workers` rows under way at once: a
   * worker takes the next row only once it is free, and none once the batch
   * stops. Rows never taken are left without an outcome (see unfinished()).
   */
  async run(jobs: AsyncIterator<Job> | Iterator<Job>, total: number, workers: number): Promise<void> {
    this.counts.total = total;
    this.options.progress.update(this.counts);
    const worker = async () => {
      while (!this.stopSignal.aborted) {
        const next = await jobs.next();
        if (next.done) return;
        // Rows cut off by an aborted run are reported with the run (unfinished).
        if (this.signal.aborted) return;
        await this.runRow(next.value);
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: workers }, worker));
    await jobs.return?.(undefined);
    const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /**
   * Rows paid for and not yet recorded: their request sent (or on its way to a
   * retry), or their image being saved. The first signal lets them finish.
   */
  get paidForRows(): number {
    return this.sentNotSettled;
  }

  /** The outcome of a row never started or cut off, given how the run ended. */
  unfinished(job: { row: number; target?: string }): RowOutcome {
    const { row, target: file } = job;
    if (this.signal.aborted) return { row, status: 'skipped', file, attempts: 0, error: 'not finished: interrupted' };
    if (!this.stopError) return { row, status: 'skipped', file, attempts: 0, error: 'not started: interrupted' };
    return { row, status: 'skipped', file, attempts: 0, error: `not started: the batch stopped early (${this.stopError.code})`, exitCode: this.stopError.exitCode };
  }

  /**
   * A row the signal's stop reached before its next request: never sent (no
   * manifest line), or sent before and now not retried, recorded as failed so
   * that a re-run sends it again without taking it for one that was in flight.
   */
  private interrupted(job: Job, stopped: NotRetriedError): void {
    const { row, key, file, target } = job.plan;
    const { attempts, message: error } = stopped;
    if (attempts > 0) this.options.manifest.append({ row, key, status: 'failed', file, attempts, error }, true);
    this.options.outcomes.record({ row, status: 'skipped', file: target, attempts, error });
  }

  /** Stops the batch when `error` is one every further row would meet (before the failed row's slot is handed on). */
  private stopIfAllWouldFail(error: unknown): boolean {
    if (!stopsTheBatch(error)) return false;
    if (!this.stopError) {
      const failure = rowFailure(error);
      this.stopError = failure;
      this.options.progress.log(`stopping the batch: ${failure.code} — ${failure.message}; rows not yet started are skipped`);
      this.stopping.abort(failure);
    }
    return true;
  }

  private async runRow(job: Job): Promise<void> {
    let sent = false;
    const onSent = () => {
      sent = true;
      this.sentNotSettled++;
    };
    try {
      await this.runRowUntilRecorded(job, onSent);
    } finally {
      if (sent) this.sentNotSettled--;
    }
  }

  private async runRowUntilRecorded(job: Job, onSent: () => void): Promise<void> {
    const { row, key, file, target } = job.plan;
    const { manifest, outcomes, progress } = this.options;
    const notes: RowNotes = {};
    let attempts = 0;
    let rateLimited = 0;
    const hooks: RetryHooks = {
      stopSignal: this.stopSignal,
      onAttempt: (attempt) => {
        attempts = attempt.number;
        if (attempt.number === 1) {
          manifest.append({ row, key, status: 'started', file }, false);
          onSent();
        }
      },
      onRetry: (notice) => {
        if (notice.rateLimited) rateLimited++;
        this.counts.retrying++;
        progress.update(this.counts);
        return () => void this.counts.retrying--;
      },
      onGiveUp: (error) => void this.stopIfAllWouldFail(error),
    };
    let failure: CliError;
    let exitCode: number | undefined;
    let stopped = false;
    const met = () => (rateLimited > 0 ? rateLimited : undefined);
    try {
      const { bytes } = await this.options.produce(job, hooks, this.signal, notes);
      manifest.append({ row, key, status: 'done', file, bytes, attempts, rateLimited: met(), requestId: notes.requestId, imageId: notes.imageId, input: job.plan.input }, true);
      this.finish({ row, status: 'done', file: target, bytes, attempts, requestId: notes.requestId });
      return;
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      if (error instanceof NotRetriedError) {
        if (!this.stopError) return this.interrupted(job, error);
        if (error.attempts === 0) return outcomes.record(this.unfinished(job.plan));
        failure = new CliError(`not retried: the batch stopped early (${this.stopError.code})`, this.stopError.exitCode, this.stopError.code);
        exitCode = this.stopError.exitCode;
      } else {
        if (isRateLimited(error)) rateLimited++;
        failure = rowFailure(error);
        stopped = this.stopIfAllWouldFail(error);
      }
    }
    const reason = exitCode === undefined ? describeFailure(failure, attempts) : failure.message;
    exitCode ??= failure.exitCode;
    manifest.append({ row, key, status: 'failed', file, attempts, error: reason, exitCode, rateLimited: met() }, true);
    if (!stopped) progress.log(`row ${row} failed: ${reason}`, { inSummary: true });
    this.finish({ row, status: 'failed', file: target, attempts, error: reason, exitCode, requestId: notes.requestId });
  }

  private finish(outcome: RowOutcome): void {
    this.options.outcomes.record(outcome);
    if (outcome.status === 'done') this.counts.done++;
    else this.counts.failed++;
    this.options.progress.update(this.counts);
  }
}
