// Runs a batch's rows through the bounded pool: for each row a "started"
// manifest line, attempts with the retry rules of retry.ts, and a "done" or
// "failed" line; a 401/402 stops the pool and leaves the rest "skipped", and
// so does the first signal, while the requests already on the wire finish.
// --concurrency bounds the requests on the wire (Slots); a row whose response
// has arrived gives its slot to the next while its file is finished.
import type { CliError } from '../api/errors.js';
import { sleep } from '../api/client.js';
import type { GenerationRequest } from '../api/schema.js';
import { formatDuration } from '../duration.js';
import type { WrittenJpeg } from '../jpeg-file.js';
import type { ManifestWriter } from './manifest.js';
import type { PlannedRow } from './plan.js';
import type { Progress, ProgressCounts } from './progress.js';
import { decide, describeFailure, type Decision, type Phase, type RetryPolicy } from './retry.js';
import type { ResumeEntry } from './resume.js';
import { PauseGate, runPool, Slots } from './runner.js';
import type { RowOutcome } from './summary.js';

export interface Job {
  plan: PlannedRow & { request: GenerationRequest; target: string; file: string; key: string };
  resume: ResumeEntry;
}

/**
 * What one attempt at a row does: send it and write its image, noting when the
 * service has answered (`attempt.phase`) and calling `received` once the whole
 * response is off the wire (its file may still be being finished).
 */
export type RowProducer = (job: Job, attempt: { phase: Phase; requestId?: string }, signal: AbortSignal, received: () => void) => Promise<WrittenJpeg>;

/** Runs the jobs through the pool, one row at a time per worker, with the retry rules of retry.ts. */
export class RowRunner {
  private readonly results = new Map<number, RowOutcome>();
  private readonly gate = new PauseGate();
  private readonly counts: ProgressCounts;
  private slots?: Slots;
  stopError?: CliError;

  constructor(
    private readonly jobs: Job[],
    private readonly manifest: ManifestWriter,
    private readonly produce: RowProducer,
    private readonly policy: RetryPolicy,
    private readonly progress: Progress,
    /** Aborts everything, requests on the wire included. */
    private readonly signal: AbortSignal,
    /** Stops new work: no request is sent, and no retry waited for, once it is aborted. */
    private readonly stopSignal: AbortSignal = signal,
  ) {
    this.counts = { total: jobs.length, done: 0, failed: 0, retrying: 0 };
  }

  async run(concurrency: number): Promise<void> {
    this.progress.update(this.counts);
    const slots = (this.slots = new Slots(concurrency));
    // Twice as many rows under way as slots: one on the wire and one finishing its file, per slot.
    const { notStarted } = await runPool(this.jobs, concurrency * 2, (job) => this.runRow(job, slots), () => this.stopError !== undefined || this.stopSignal.aborted);
    for (const job of notStarted) this.skip(job);
  }

  /** Requests on the wire now (a row holds its slot until its response has arrived). */
  inFlight(): number {
    return this.slots?.inUse() ?? 0;
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
   * A row the stop reached before its next request: never sent (no manifest
   * line), or sent before and now not retried, recorded as failed so that a
   * re-run sends it again without taking it for one that was in flight.
   */
  private interrupted(job: Job, attempts: number): void {
    const { row, key, file, target } = job.plan;
    const error = attempts === 0 ? 'not started: interrupted' : 'not retried: interrupted';
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

  private async runRow(job: Job, slots: Slots): Promise<void> {
    const { row, key, file, target } = job.plan;
    const attempt: { phase: Phase; requestId?: string } = { phase: 'request' };
    for (let retry = 0; ; retry++) {
      const outcome = await this.attempt(job, attempt, slots, retry);
      if (outcome === 'skipped') return this.skip(job);
      if (outcome === 'stopped') return this.interrupted(job, retry);
      if ('written' in outcome) {
        const { bytes } = outcome.written;
        this.manifest.append({ row, key, status: 'done', file, bytes, attempts: retry + 1 }, true);
        this.finish({ row, status: 'done', file: target, bytes, attempts: retry + 1, requestId: attempt.requestId });
        return;
      }
      const { decision } = outcome;
      if (decision.action === 'retry' && !this.stopError) {
        if (!(await this.waitToRetry(decision.delayMs, decision.pauseAll))) return this.interrupted(job, retry + 1);
        if (!this.stopError) continue;
      }
      const failure =
        decision.action === 'retry'
          ? `not retried: the batch stopped early (${this.stopError!.code})`
          : describeFailure(decision.error, retry + 1);
      const exitCode = decision.action === 'retry' ? this.stopError!.exitCode : decision.error.exitCode;
      this.manifest.append({ row, key, status: 'failed', file, attempts: retry + 1, error: failure }, true);
      if (decision.action !== 'stop') this.progress.log(`row ${row} failed: ${failure}`);
      this.finish({ row, status: 'failed', file: target, attempts: retry + 1, error: failure, exitCode, requestId: attempt.requestId });
      return;
    }
  }

  /**
   * One attempt, holding a slot from before the request until its response is
   * received (or the attempt ends): never through a retry's wait. A failure's
   * consequences for the other rows (a 429 pause, a 401/402 stop) take effect
   * before the slot is handed on, so the next row in line sees them. Once the
   * stop signal is aborted no request is sent ('stopped'); one already sent
   * goes on until the abort signal.
   */
  private async attempt(
    job: Job,
    attempt: { phase: Phase; requestId?: string },
    slots: Slots,
    retry: number,
  ): Promise<'skipped' | 'stopped' | { written: WrittenJpeg } | { decision: Decision }> {
    let release: () => void;
    try {
      release = await slots.acquire(this.stopSignal);
    } catch (error) {
      if (this.signal.aborted || !this.stopSignal.aborted) throw this.signal.reason ?? error;
      return 'stopped';
    }
    try {
      // A 429 pauses every worker, first attempts included: they would only be refused too.
      await this.gate.wait(this.stopSignal).catch(() => {});
      if (this.signal.aborted) throw this.signal.reason;
      if (this.stopSignal.aborted) return 'stopped';
      if (retry === 0) {
        if (this.stopError) return 'skipped';
        const { row, key, file } = job.plan;
        this.manifest.append({ row, key, status: 'started', file }, false);
      }
      attempt.phase = 'request';
      return { written: await this.produce(job, attempt, this.signal, release) };
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason ?? error;
      const decision = decide(error, attempt.phase, retry, this.policy);
      if (decision.action === 'retry' && decision.pauseAll && !this.stopError) this.pauseAll(decision.delayMs);
      if (decision.action === 'stop' && !this.stopError) {
        this.stopError = decision.error;
        this.progress.log(`stopping the batch: ${decision.error.code} — ${decision.error.message}; rows not yet started are skipped`);
      }
      return { decision };
    } finally {
      release();
    }
  }

  private pauseAll(delayMs: number): void {
    const wasPaused = this.gate.remaining() > 0;
    this.gate.pause(delayMs);
    if (!wasPaused) this.progress.log(`rate limited (429): pausing all requests for ${formatDuration(delayMs, 100)}`);
  }

  /** Waits before a retry; false when the stop came first (the retry is not sent). */
  private async waitToRetry(delayMs: number, pauseAll: boolean): Promise<boolean> {
    this.counts.retrying++;
    this.progress.update(this.counts);
    try {
      // The pause itself was set when the 429 arrived (see attempt).
      if (pauseAll) await this.gate.wait(this.stopSignal);
      else await sleep(delayMs, this.stopSignal);
      return true;
    } catch (error) {
      if (this.signal.aborted || !this.stopSignal.aborted) throw this.signal.reason ?? error;
      return false;
    } finally {
      this.counts.retrying--;
    }
  }

  private finish(outcome: RowOutcome): void {
    this.results.set(outcome.row, outcome);
    if (outcome.status === 'done') this.counts.done++;
    else this.counts.failed++;
    this.progress.update(this.counts);
  }
}
