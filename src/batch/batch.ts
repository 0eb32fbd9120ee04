// `aerial batch <file>`: plan every row, refuse bad input before anything is
// sent, skip what earlier runs finished, then generate the rest through one
// keep-alive pool with bounded concurrency, retries and a manifest.
import { setMaxListeners } from 'node:events';
import { basename, dirname } from 'node:path';
import { CliError, ExitCode, fileSystemProblem, InterruptedError, UsageError } from '../api/errors.js';
import { PERSISTENT_RETRIES, persistentPolicy, type Attempt } from '../api/retry.js';
import type { Context } from '../context.js';
import { formatDuration } from '../duration.js';
import type { JpegFileOptions } from '../jpeg-file.js';
import { buildGenerationRequest, type SceneInput } from '../request.js';
import { removeStaleParts } from './files.js';
import { ManifestWriter, readManifest } from './manifest.js';
import { parseCount } from '../flags.js';
import { parseProgressInterval, parseRetryDelay } from './options.js';
import { planBatch, type PlannedRow } from './plan.js';
import { createProgress, type Progress } from './progress.js';
import { displayPath, printDryRun, printSummary } from './report.js';
import { resumeState } from './resume.js';
import { RowRunner, type Job, type RowProducer } from './row-runner.js';
import { readBatchFile } from './rows.js';
import { resolveShard } from './shard.js';
import { batchExitCode, summarize, type RowOutcome } from './summary.js';
import { compileTemplate } from './template.js';

export const DEFAULT_TEMPLATE = 'aerial-batch/{row}-{lat}_{lng}.jpg';
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 256;
/** Per row in flight: an HD image fits, so its connection is free as soon as it has arrived. */
const DISK_BUFFER_BYTES = 1024 * 1024;

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

export async function runBatch(ctx: Context, path: string, options: BatchOptions): Promise<void> {
  const { io } = ctx;
  // Everything that can be wrong with the command line is refused before the file is read.
  const concurrency = parseCount(options.concurrency, '--concurrency', 1, MAX_CONCURRENCY, DEFAULT_CONCURRENCY);
  const retries = {
    maxRetries: parseCount(options.maxRetries, '--max-retries', 0, 100, PERSISTENT_RETRIES.maxRetries),
    firstDelayMs: parseRetryDelay(options.retryDelay),
    retryUnsafe: Boolean(options.retryUnsafe),
  };
  const progressIntervalMs = parseProgressInterval(options.progressInterval);
  const shardChoice = resolveShard(options.shard, ctx.env);
  const shard = shardChoice?.shard;
  if (shardChoice?.source) io.debug(`shard ${shard!.index}/${shard!.count} from ${shardChoice.source}`);
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
  // --skip-invalid lets bad rows fail alone; clashing names would still lose images, so they always stop the batch.
  if (invalidAnywhere.length > 0 && (!options.skipInvalid || invalidAnywhere.some((row) => row.collision))) {
    throw new UsageError(describeInvalid(invalidAnywhere));
  }

  // A manifest path that cannot hold a file is the user's to fix: --manifest, or the outputs' directory it defaults to.
  const manifestUnusable = (error: unknown): unknown => {
    const problem = fileSystemProblem(error);
    if (!problem) return error;
    return new UsageError(
      options.manifest !== undefined
        ? `--manifest ${options.manifest}: ${problem}`
        : `the manifest's place beside the outputs, ${displayPath(plan.manifestPath)}, is unusable: ${problem}; pass --manifest to put it elsewhere`,
    );
  };
  const manifest = await readManifest(plan.manifestPath).catch((error: unknown) => {
    throw manifestUnusable(error);
  });
  const valid = plan.rows.filter((row): row is Job['plan'] => !row.error);
  const state = await resumeState(valid, manifest, Boolean(options.force));
  // A directory where an image must go would fail that row after it was paid for: refused now, --force or not.
  const blocked = valid.filter((row) => state.get(row)!.action === 'blocked');
  if (blocked.length > 0) {
    throw new UsageError(
      `${blocked.length} output path${blocked.length > 1 ? 's are directories' : ' is a directory'} (first: row ${blocked[0]!.row}, ${displayPath(blocked[0]!.target)}); change --output-template or move ${blocked.length > 1 ? 'them' : 'it'}`,
    );
  }
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

  // The outputs' directories before the manifest: a path that cannot be one, or where no file can be
  // created (read-only, full, no permission, names too long), stops the batch with nothing sent.
  const longestName = new Map<string, string>();
  for (const { plan: row } of jobs) {
    const dir = dirname(row.target);
    const name = basename(row.target);
    if (Buffer.byteLength(name) > Buffer.byteLength(longestName.get(dir) ?? '')) longestName.set(dir, name);
  }
  const { checkOutputDirectory } = await import('../jpeg-file.js');
  for (const [dir, name] of longestName) await checkOutputDirectory(dir, name, '--output-template');
  let writer: ManifestWriter | undefined;
  if (jobs.length > 0 || adopted > 0) {
    writer = await ManifestWriter.open(plan.manifestPath).catch((error: unknown) => {
      throw manifestUnusable(error);
    });
    ctx.onCleanup(() => writer!.close());
    for (const row of valid) {
      const entry = state.get(row)!;
      if (entry.action === 'adopt') {
        writer.append({ row: row.row, key: row.key, status: 'done', file: row.file, bytes: entry.bytes, attempts: 0, adopted: true }, false);
      }
    }
  }

  // Temp files a killed run left beside any of this shard's outputs, finished ones
  // included: a row killed between moving its file into place and removing the temp.
  await removeStaleParts(valid.map((row) => row.target));

  const started = Date.now();
  let ending: { interrupted?: boolean; stoppedWith?: number; stopError?: CliError } = {};
  if (jobs.length > 0) {
    // Each row in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
    setMaxListeners(concurrency * 4 + 10, ctx.signal);
    let progress: Progress | undefined;
    // A 429 pauses every row: they would only be refused too.
    const policy = persistentPolicy({ ...retries, onPause: (ms) => progress?.log(`rate limited (429): pausing all requests for ${formatDuration(ms, 100)}`) });
    const client = await ctx.client({ connections: concurrency, retry: policy });
    const { JpegFileDestination, saveImage } = await import('../jpeg-file.js');
    const metadata = options.metadata === false ? undefined : await import('../metadata.js');
    const { VERSION } = await import('../version.js');
    const fileOptions = (job: Job): JpegFileOptions => ({
      force: Boolean(options.force),
      // The same GPS EXIF and AI-generated note as `aerial generate` writes, added as the file is written.
      editor: metadata?.createMetadataSplicer({ request: job.plan.request, software: `aerial ${VERSION}` }),
      diskBufferBytes: DISK_BUFFER_BYTES,
    });
    const produce: RowProducer = asyncSetup
      ? await import('./async-rows.js').then((m) => m.asyncProducer(ctx, { client, setup: asyncSetup, fileOptions }))
      : (job, retry, signal) => {
          const destination = new JpegFileDestination(job.plan.target, fileOptions(job));
          const onAttempt = (attempt: Attempt) => {
            // The temp file opens while the request is on the wire, not once the image is arriving.
            destination.prepare();
            retry.onAttempt?.(attempt);
          };
          return saveImage(destination, (sink) => client.generateInto(job.plan.request, sink, { signal, retry: { ...retry, onAttempt } }));
        };
    progress = await createProgress(io, { intervalMs: progressIntervalMs });
    ctx.onCleanup(() => progress!.stop());
    const run = new RowRunner(jobs, writer!, produce, progress, ctx.signal, ctx.stopSignal);
    // The requests on the wire have been paid for: the first signal lets them finish and be recorded.
    ctx.finishInFlightOnStop({ count: () => run.inFlight(), noun: 'request', notice: (message) => progress.log(message) });
    io.info(`Generating ${jobs.length} image${jobs.length > 1 ? 's' : ''} with concurrency ${concurrency}${shardNote}…`);
    try {
      await run.run(concurrency);
      if (ctx.stopSignal.aborted) ending = { interrupted: true };
    } catch (error) {
      if (!ctx.signal.aborted) throw error;
      ending = { interrupted: true };
      run.markUnfinished('not finished: interrupted');
    } finally {
      progress.stop();
    }
    outcomes.push(...run.outcomes());
    if (run.stopError) ending = { ...ending, stoppedWith: run.stopError.exitCode, stopError: run.stopError };
  }

  // The lines are written already; this only waits for the last one to be on disk.
  await writer?.close().catch((error: Error) => io.warn(`the manifest may not be safely on disk: ${error.message}`));
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

function describeInvalid(rows: PlannedRow[]): string {
  const shown = rows.slice(0, 3).map((row) => row.error).join('; ');
  const more = rows.length > 3 ? `; and ${rows.length - 3} more (--dry-run lists them all)` : '';
  const hint = rows.some((row) => row.collision) ? '; nothing was sent' : '; nothing was sent (--skip-invalid runs the valid rows)';
  return `${rows.length} invalid row${rows.length > 1 ? 's' : ''}: ${shown}${more}${hint}`;
}


