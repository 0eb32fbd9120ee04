// `aerial batch <file>`: plan every row, refuse bad input before anything is
// sent, skip what earlier runs finished, then generate the rest through one
// keep-alive pool with bounded concurrency, retries and a manifest.
import { setMaxListeners } from 'node:events';
import { relative, resolve } from 'node:path';
import { CliError, ExitCode, InterruptedError, UsageError } from '../api/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import type { Context } from '../context.js';
import { buildGenerationRequest, type SceneInput } from '../request.js';
import { removeStaleParts } from './files.js';
import { ManifestWriter, readManifest } from './manifest.js';
import { parseCount } from './options.js';
import { planBatch, type BatchPlan, type PlannedRow } from './plan.js';
import { createProgress, formatDuration, type Progress, type ProgressCounts } from './progress.js';
import { resumeState, type ResumeEntry } from './resume.js';
import { DEFAULT_RETRY_POLICY, decide, describeFailure, type Phase, type RetryPolicy } from './retry.js';
import { readBatchFile } from './rows.js';
import { PauseGate, runPool } from './runner.js';
import { parseShard } from './shard.js';
import { batchExitCode, summarize, type RowOutcome } from './summary.js';
import { compileTemplate } from './template.js';
import type { Readable } from 'node:stream';
import type { WrittenJpeg } from '../jpeg-file.js';

export const DEFAULT_TEMPLATE = 'aerial-batch/{row}-{lat}_{lng}.jpg';
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 256;

export interface BatchOptions {
  format?: string;
  outputTemplate?: string;
  concurrency?: string;
  maxRetries?: string;
  retryDelay?: string;
  retryUnsafe?: boolean;
  manifest?: string;
  shard?: string;
  dryRun?: boolean;
  force?: boolean;
  skipInvalid?: boolean;
  progressInterval?: string;
  /** false with --no-metadata. */
  metadata?: boolean;
  async?: boolean;
  listenHost?: string;
  listenPort?: string;
  publicUrl?: string;
  callbackTimeout?: string;
  scene: SceneInput;
}

export interface Job {
  plan: PlannedRow & { request: GenerationRequest; target: string; file: string; key: string };
  resume: ResumeEntry;
}

/** What one attempt at a row does: send it and write its image, noting when the service has answered. */
export type RowProducer = (job: Job, attempt: { phase: Phase; requestId?: string }, signal: AbortSignal) => Promise<WrittenJpeg>;

export async function runBatch(ctx: Context, path: string, options: BatchOptions): Promise<void> {
  const { io } = ctx;
  // Everything that can be wrong with the command line is refused before the file is read.
  const concurrency = parseCount(options.concurrency, '--concurrency', 1, MAX_CONCURRENCY, DEFAULT_CONCURRENCY);
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxRetries: parseCount(options.maxRetries, '--max-retries', 0, 100, DEFAULT_RETRY_POLICY.maxRetries),
    baseDelayMs: parseCount(options.retryDelay, '--retry-delay', 0, 600_000, DEFAULT_RETRY_POLICY.baseDelayMs),
    retryUnsafe: Boolean(options.retryUnsafe),
  };
  const progressIntervalMs = parseCount(options.progressInterval, '--progress-interval', 1, 3600, 5) * 1000;
  const shard = parseShard(options.shard);
  const template = compileTemplate(options.outputTemplate ?? DEFAULT_TEMPLATE);
  const sceneDefaults = ctx.settings().sceneDefaults;
  // The flags are checked once, against their own names, rather than once per row.
  buildGenerationRequest({ ...options.scene, lat: 0, lng: 0 }, sceneDefaults);
  const asyncSetup = await import('./async-rows.js').then((m) => m.parseAsyncFlags(options));

  const file = await readBatchFile(path, { format: options.format, stdin: io.stdin });
  const plan = planBatch({ file, flags: options.scene, sceneDefaults, template, shard, manifestPath: options.manifest, cwd: process.cwd() });
  const shardNote = shard ? ` (shard ${shard.index}/${shard.count}: ${plan.rows.length} of ${plan.allRows.length} rows)` : '';

  if (options.dryRun) return printDryRun(ctx, plan, shardNote);

  const invalid = plan.rows.filter((row) => row.error);
  // Every shard refuses the same file: a typo in another runner's row is still a typo in this batch.
  const invalidAnywhere = plan.allRows.filter((row) => row.error);
  if (invalidAnywhere.length > 0 && !(options.skipInvalid && !invalidAnywhere.some(isCollision))) {
    throw new UsageError(describeInvalid(invalidAnywhere));
  }

  const manifest = await readManifest(plan.manifestPath);
  const valid = plan.rows.filter((row): row is Job['plan'] => !row.error);
  const state = await resumeState(valid, manifest, Boolean(options.force));
  const conflicts = valid.filter((row) => state.get(row)!.action === 'conflict');
  if (conflicts.length > 0) {
    const first = conflicts[0]!;
    throw new UsageError(
      `${conflicts.length} output file${conflicts.length > 1 ? 's' : ''} already exist${conflicts.length > 1 ? '' : 's'} and ${conflicts.length > 1 ? 'were' : 'was'} not written by this batch (first: row ${first.row}, ${displayPath(first.target)}); pass --force to overwrite, or change --output-template`,
    );
  }

  const outcomes: RowOutcome[] = invalid.map((row) => ({ row: row.row, status: 'failed', attempts: 0, error: row.error, exitCode: ExitCode.Usage }));
  const jobs: Job[] = [];
  let adopted = 0;
  for (const row of valid) {
    const entry = state.get(row)!;
    if (entry.action === 'done' || entry.action === 'adopt') {
      outcomes.push({ row: row.row, status: 'done', file: row.target, bytes: entry.bytes, attempts: 0, previously: true, adopted: entry.action === 'adopt' || undefined });
      if (entry.action === 'adopt') adopted++;
    } else {
      jobs.push({ plan: row, resume: entry });
    }
  }

  const inFlightBefore = jobs.filter((job) => job.resume.wasInFlight).length;
  if (inFlightBefore > 0) {
    io.warn(
      `${inFlightBefore} row${inFlightBefore > 1 ? 's were' : ' was'} in flight when an earlier run stopped; the service may already have generated (and charged for) ${inFlightBefore > 1 ? 'them' : 'it'}, and ${inFlightBefore > 1 ? 'they are' : 'it is'} sent again`,
    );
  }
  const previously = outcomes.filter((o) => o.previously).length;
  if (previously > 0) io.info(`${previously} row${previously > 1 ? 's' : ''} already done by an earlier run (manifest ${displayPath(plan.manifestPath)})`);

  let writer: ManifestWriter | undefined;
  if (jobs.length > 0 || adopted > 0) {
    writer = await ManifestWriter.open(plan.manifestPath);
    ctx.onCleanup(() => writer!.close());
    for (const row of valid) {
      const entry = state.get(row)!;
      if (entry.action === 'adopt') {
        await writer.append({ row: row.row, key: row.key, status: 'done', file: row.file, bytes: entry.bytes, attempts: 0, adopted: true }, false);
      }
    }
  }

  const started = Date.now();
  let ending: { interrupted?: boolean; stoppedWith?: number; stopError?: CliError } = {};
  if (jobs.length > 0) {
    const { mkdir } = await import('node:fs/promises');
    for (const dir of new Set(jobs.map((job) => resolve(job.plan.target, '..')))) await mkdir(dir, { recursive: true });
    await removeStaleParts(jobs.map((job) => job.plan.target));

    // Each row in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
    setMaxListeners(concurrency * 4 + 10, ctx.signal);
    const client = await ctx.client({ connections: concurrency, maxRateLimitRetries: 0 });
    const { writeJpegAtomically } = await import('../jpeg-file.js');
    const metadata = options.metadata === false ? undefined : await import('../metadata.js');
    const { VERSION } = await import('../version.js');
    const writeRow = async (body: Readable, job: Job, expectedLength: number | undefined, signal: AbortSignal): Promise<WrittenJpeg> => {
      // The same GPS EXIF and AI-generated note as `aerial generate` writes.
      const inserter = metadata?.createMetadataTransform({ request: job.plan.request, software: `aerial ${VERSION}` });
      const written = await writeJpegAtomically(body, job.plan.target, {
        force: Boolean(options.force),
        signal,
        expectedLength,
        transforms: inserter ? [inserter] : [],
      });
      return { ...written, bytes: written.bytes + (inserter?.insertedBytes ?? 0) };
    };
    const produce: RowProducer = asyncSetup
      ? await import('./async-rows.js').then((m) => m.asyncProducer(ctx, { client, setup: asyncSetup, policy, write: writeRow }))
      : async (job, attempt, signal) => {
          const image = await client.generate(job.plan.request, { signal });
          attempt.phase = 'response';
          return writeRow(image.body, job, image.contentLength, signal);
        };
    const progress = await createProgress(io, { intervalMs: progressIntervalMs });
    ctx.onCleanup(() => progress.stop());
    const run = new RowRunner(jobs, writer!, produce, policy, progress, ctx.signal);
    io.info(`Generating ${jobs.length} image${jobs.length > 1 ? 's' : ''} with concurrency ${concurrency}${shardNote}…`);
    try {
      await run.run(concurrency);
    } catch (error) {
      if (!ctx.signal.aborted) throw error;
      ending = { interrupted: true };
    } finally {
      progress.stop();
    }
    outcomes.push(...run.outcomes());
    if (run.stopError) ending = { ...ending, stoppedWith: run.stopError.exitCode, stopError: run.stopError };
  }

  const summary = summarize(outcomes);
  const exitCode = batchExitCode(summary.rows, ending);
  if (io.json) io.outJson({ total: summary.total, succeeded: summary.succeeded, failed: summary.failed, skipped: summary.skipped, manifest: plan.manifestPath, rows: summary.rows });
  else printSummary(ctx, summary, Date.now() - started, plan.manifestPath, shardNote);
  if (ending.interrupted) throw new InterruptedError();
  if (exitCode !== ExitCode.Ok) {
    const reason = ending.stopError ? `; stopped early: ${ending.stopError.code} — ${ending.stopError.message}` : '';
    const undone = summary.failed + summary.skipped;
    throw new CliError(
      `${undone} of ${summary.total} row${summary.total > 1 ? 's' : ''} did not succeed${reason}; re-run the same command to retry them`,
      exitCode as CliError['exitCode'],
      ending.stopError?.code ?? 'BatchIncomplete',
    );
  }
}

function isCollision(row: PlannedRow): boolean {
  return Boolean(row.error?.includes('writes the same file as row'));
}

function describeInvalid(rows: PlannedRow[]): string {
  const shown = rows.slice(0, 3).map((row) => row.error).join('; ');
  const more = rows.length > 3 ? `; and ${rows.length - 3} more (--dry-run lists them all)` : '';
  const hint = rows.some(isCollision) ? '' : '; nothing was sent (--skip-invalid runs the valid rows)';
  return `${rows.length} invalid row${rows.length > 1 ? 's' : ''}: ${shown}${more}${hint}`;
}

export function displayPath(path: string): string {
  const fromCwd = relative(process.cwd(), path);
  return fromCwd && !fromCwd.startsWith('..') ? fromCwd : path;
}

/** Runs the jobs through the pool, one row at a time per worker, with the retry rules of retry.ts. */
class RowRunner {
  private readonly results = new Map<number, RowOutcome>();
  private readonly gate = new PauseGate();
  private readonly counts: ProgressCounts;
  stopError?: CliError;

  constructor(
    private readonly jobs: Job[],
    private readonly manifest: ManifestWriter,
    private readonly produce: RowProducer,
    private readonly policy: RetryPolicy,
    private readonly progress: Progress,
    private readonly signal: AbortSignal,
  ) {
    this.counts = { total: jobs.length, done: 0, failed: 0, retrying: 0 };
  }

  async run(concurrency: number): Promise<void> {
    this.progress.update(this.counts);
    const { notStarted } = await runPool(this.jobs, concurrency, (job) => this.runRow(job), () => this.stopError !== undefined);
    for (const job of notStarted) {
      this.results.set(job.plan.row, {
        row: job.plan.row,
        status: 'skipped',
        file: job.plan.target,
        attempts: 0,
        error: `not started: the batch stopped early (${this.stopError?.code ?? 'interrupted'})`,
        exitCode: this.stopError?.exitCode,
      });
    }
  }

  outcomes(): RowOutcome[] {
    return [...this.results.values()];
  }

  private async runRow(job: Job): Promise<void> {
    const { row, key, file, target } = job.plan;
    await this.manifest.append({ row, key, status: 'started', file }, false);
    const attempt: { phase: Phase; requestId?: string } = { phase: 'request' };
    for (let retry = 0; ; retry++) {
      attempt.phase = 'request';
      try {
        const written = await this.produce(job, attempt, this.signal);
        await this.manifest.append({ row, key, status: 'done', file, bytes: written.bytes, attempts: retry + 1 }, true);
        this.finish({ row, status: 'done', file: target, bytes: written.bytes, attempts: retry + 1, requestId: attempt.requestId });
        return;
      } catch (error) {
        if (this.signal.aborted) throw this.signal.reason ?? error;
        const decision = decide(error, attempt.phase, retry, this.policy);
        if (decision.action === 'retry' && !this.stopError) {
          await this.waitToRetry(decision.delayMs, decision.pauseAll);
          if (!this.stopError) continue;
        }
        if (decision.action === 'stop' && !this.stopError) {
          this.stopError = decision.error;
          this.progress.log(`stopping the batch: ${decision.error.code} — ${decision.error.message}; rows not yet started are skipped`);
        }
        const failure =
          decision.action === 'retry'
            ? `not retried: the batch stopped early (${this.stopError!.code})`
            : describeFailure(decision.error, retry + 1);
        const exitCode = decision.action === 'retry' ? this.stopError!.exitCode : decision.error.exitCode;
        await this.manifest.append({ row, key, status: 'failed', file, attempts: retry + 1, error: failure }, true);
        if (decision.action !== 'stop') this.progress.log(`row ${row} failed: ${failure}`);
        this.finish({ row, status: 'failed', file: target, attempts: retry + 1, error: failure, exitCode, requestId: attempt.requestId });
        return;
      }
    }
  }

  private async waitToRetry(delayMs: number, pauseAll: boolean): Promise<void> {
    this.counts.retrying++;
    this.progress.update(this.counts);
    try {
      if (pauseAll) {
        const wasPaused = this.gate.remaining() > 0;
        this.gate.pause(delayMs);
        if (!wasPaused) this.progress.log(`rate limited (429): pausing all requests for ${formatDuration(delayMs / 1000)}`);
      } else {
        const { sleep } = await import('../api/client.js');
        await sleep(delayMs, this.signal);
      }
      await this.gate.wait(this.signal);
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

function printDryRun(ctx: Context, plan: BatchPlan, shardNote: string): void {
  const { io } = ctx;
  const valid = plan.rows.filter((row) => !row.error);
  const invalid = plan.rows.filter((row) => row.error);
  const credits = valid.reduce((sum, row) => sum + (row.credits ?? 0), 0);
  if (io.json) {
    io.outJson({
      total: plan.rows.length,
      valid: valid.length,
      invalid: invalid.length,
      credits,
      priceTable: 'sandbox',
      manifest: plan.manifestPath,
      rows: plan.rows.map((row) =>
        row.error
          ? { row: row.row, valid: false, error: row.error }
          : { row: row.row, valid: true, file: row.target, credits: row.credits, request: row.request },
      ),
    });
  } else {
    for (const row of plan.rows) {
      if (row.error) io.out(`${io.style.red('invalid')}  ${row.error}`);
      else io.out(`${io.style.green('ok')}       row ${row.row}: ${row.request!.resolution} ${row.request!.coordinates.lat},${row.request!.coordinates.lng} → ${displayPath(row.target!)} (${row.credits} credit${row.credits === 1 ? '' : 's'})`);
    }
    io.info(
      `${valid.length} valid, ${invalid.length} invalid${shardNote}; would cost ${credits} credits at the sandbox's prices (HD 1, FHD 2, UHD 4; the service does not publish its prices). Nothing was sent.`,
    );
  }
  if (invalid.length > 0) {
    throw new UsageError(`${invalid.length} invalid row${invalid.length > 1 ? 's' : ''} (listed above); nothing was sent`);
  }
}

function printSummary(ctx: Context, summary: ReturnType<typeof summarize>, elapsedMs: number, manifestPath: string, shardNote: string): void {
  const { io } = ctx;
  const previously = summary.rows.filter((r) => r.previously).length;
  const generated = summary.succeeded - previously;
  const parts = [`${generated} generated`];
  if (previously) parts.push(`${previously} already done`);
  const line = `${summary.succeeded} of ${summary.total} rows done (${parts.join(', ')})${shardNote} in ${formatDuration(elapsedMs / 1000)}`;
  if (summary.failed === 0 && summary.skipped === 0) {
    io.success(line);
  } else {
    io.info(`${io.style.yellow('!')} ${line}; ${summary.failed} failed, ${summary.skipped} skipped:`);
    const problems = summary.rows.filter((r) => r.status !== 'done');
    for (const row of problems.slice(0, 20)) io.info(`  row ${row.row}: ${row.status === 'skipped' ? 'skipped' : 'failed'} — ${row.error ?? ''}`);
    if (problems.length > 20) io.info(`  … and ${problems.length - 20} more (--json lists every row)`);
  }
  io.info(io.style.dim(`Manifest: ${displayPath(manifestPath)}`));
}
