// `aerial batch <file>`: plan every row, refuse bad input before anything is
// sent, skip what earlier runs finished, then generate the rest through one
// keep-alive pool with bounded concurrency, retries and a manifest.
//
// The rows are streamed, never held: a first pass checks every row and
// decides what each of this shard's rows needs (resume.ts), keeping a few
// bytes per row (and the first few hundred rows to send whole, so sending
// starts at once); a second pass sends the rest as workers come free; the summary
// reads the outcomes back from where they were written as they came. Memory
// stays flat from a hundred rows to millions.
import { setMaxListeners } from 'node:events';
import { basename, dirname, resolve } from 'node:path';
import { CliError, ExitCode, fileSystemProblem, InterruptedError, UsageError } from '../../process/errors.js';
import { PERSISTENT_RETRIES, persistentPolicy, WireLimiter, type Attempt } from '../../api/retry.js';
import type { Context } from '../../cli/context.js';
import { formatDuration } from '../../input/duration.js';
import { parseCount, parseRate } from '../../input/flags.js';
import type { JpegFileOptions } from '../../files/jpeg-file.js';
import { buildGenerationRequest, type SceneInput } from '../../input/scene-request.js';
import { RowArray } from '../../batch/compact.js';
import { FileSizes } from '../../batch/file-sizes.js';
import { StaleParts } from '../../batch/files.js';
import { BatchInput } from '../../batch/input.js';
import { inputError, shownPath } from '../../batch/input-text.js';
import { ManifestIndex, ManifestWriter } from '../../batch/manifest.js';
import { parseProgressInterval, parseRetryDelay } from '../shared/batch-options.js';
import { OutcomeLog } from '../../batch/outcomes.js';
import { plannedRows, RowPlanner, surveyBatch, type PlannedRow, type Survey, type SurveyOptions, type ValidRow } from '../../batch/plan.js';
import { createProgress, type Progress } from '../../batch/progress.js';
import { displayPath } from '../../files/file-names.js';
import { printDryRun, printJsonSummary, printSummary } from './print.js';
import { resumeBySize, resumeEntry, ResumeTable, type ResumeEntry } from '../../batch/resume.js';
import { RowRunner, type Job, type RowProducer } from '../../batch/row-runner.js';
import { resolveShard, type Shard } from '../../batch/shard.js';
import { exitCodeOf } from '../../batch/summary.js';
import { compileTemplate } from '../../batch/template.js';

export const DEFAULT_TEMPLATE = 'aerial-batch/{row}-{lat}_{lng}.jpg';
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 256;
/** Rows to send kept whole from the first pass (see `early`): a few hundred objects, whatever the batch's size. */
const EARLY_ROWS = 256;
/** Per row in flight: an HD image fits, so its connection is free as soon as it has arrived. */
const DISK_BUFFER_BYTES = 1024 * 1024;

export interface BatchOptions {
  format?: string;
  delimiter?: string;
  outputTemplate?: string;
  concurrency?: string;
  maxRetries?: string;
  retryDelay?: string;
  retryUnsafe?: boolean;
  manifest?: string;
  shard?: string;
  rate?: string;
  dryRun?: boolean;
  force?: boolean;
  /** --wait-for-lock: wait for another run of this batch to end rather than refuse. */
  waitForLock?: boolean;
  skipInvalid?: boolean;
  progressInterval?: string;
  /** false with --no-metadata. */
  metadata?: boolean;
  async?: boolean;
  listenHost?: string;
  listenPort?: string;
  publicUrl?: string;
  callbackTimeout?: string;
  /** --report: the HTML report's path. */
  report?: string;
  /** --geojson: the GeoJSON file's path. */
  geojson?: string;
  scene: SceneInput;
}

export async function runBatch(ctx: Context, path: string, options: BatchOptions): Promise<void> {
  const { io } = ctx;
  // Everything that can be wrong with the command line is refused before the file is read.
  const concurrency = parseCount(options.concurrency, '--concurrency', 1, MAX_CONCURRENCY, DEFAULT_CONCURRENCY);
  const ratePerSecond = parseRate(options.rate, '--rate');
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
  // The report's code loads only for a batch that asked for one.
  const outputs = (options.report ?? options.geojson) !== undefined && !options.dryRun ? await import('../../report/outputs.js') : undefined;
  const reportPath = options.report === undefined || !outputs ? undefined : await outputs.checkOutputFile(options.report, '--report');
  const geojsonPath = options.geojson === undefined || !outputs ? undefined : await outputs.checkOutputFile(options.geojson, '--geojson');

  const input = await BatchInput.open(path, { format: options.format, delimiter: options.delimiter, stdin: io.stdin });
  ctx.onCleanup(() => input.close());
  const planner = new RowPlanner({
    path: input.path,
    header: input.header,
    flags: options.scene,
    sceneDefaults,
    template,
    manifestPath: options.manifest,
    cwd: process.cwd(),
    inputDigests: !options.dryRun,
  });

  if (options.dryRun) {
    const survey = await surveyOrRefuseEmpty(ctx, input, planner, { shard });
    const { rows: total, valid, credits } = survey.shard;
    return printDryRun(ctx, plannedRows(input, planner, survey, { shard, keys: false }), { total, valid, credits }, planner.manifestPath, shardNote(shard, survey));
  }

  // A manifest path that cannot hold a file is the user's to fix: --manifest, or the outputs' directory it defaults to.
  const manifestUnusable = (error: unknown): unknown => {
    const problem = fileSystemProblem(error);
    if (!problem) return error;
    return new UsageError(
      options.manifest !== undefined
        ? `--manifest ${options.manifest}: ${problem}`
        : `the manifest's place beside the outputs, ${displayPath(planner.manifestPath)}, is unusable: ${problem}; pass --manifest to put it elsewhere`,
    );
  };
  // Read before the rows, to decide each row as it is checked; a problem with it is reported after theirs.
  let manifestProblem: unknown;
  let lockProblem: unknown;
  // One run of this batch (of this shard) at a time, taken before the manifest is read: a run that waited
  // reads what the other one recorded. A path where no lock can be made is the manifest's problem.
  const { batchLockPath, batchLocksMeet, takeRunLock } = await import('../../batch/run-lock.js');
  const lock = await takeRunLock({
    path: batchLockPath(planner.manifestPath, shard),
    meets: batchLocksMeet(planner.manifestPath, shard),
    command: `aerial batch ${path === '-' ? '-' : basename(path)}${shard ? ` --shard ${shard.index}/${shard.count}` : ''}`,
    other: 'another run of this batch',
    wait: Boolean(options.waitForLock),
    signal: ctx.signal,
    display: displayPath,
    onWait: (message) => io.info(message),
  }).catch((error: unknown) => {
    // Said after the outputs' own problems, as the manifest writer's would be: a directory that takes no files is the template's to fix first.
    if (!fileSystemProblem(error)) throw error;
    lockProblem = manifestUnusable(error);
    return undefined;
  });
  if (lock) ctx.onCleanup(() => lock.release());
  const manifest = await ManifestIndex.read(planner.manifestPath).catch((error: unknown) => {
    manifestProblem = manifestUnusable(error);
    return new ManifestIndex();
  });
  const force = Boolean(options.force);
  const resume = new ResumeTable();
  // Rows an earlier run finished are recorded as the first pass meets them: the send pass does not plan them again.
  const outcomes = new OutcomeLog(input.rowsAtMost, shard);
  ctx.onCleanup(() => outcomes.close());
  const forget = (row: number) => {
    if (outcomes.has(row)) outcomes.forget(row);
  };
  // Temp files a killed run left beside any of this shard's outputs, finished ones
  // included: a row killed between moving its file into place and removing the temp.
  const staleParts = new StaleParts();
  // Per output directory, the longest name a pending row will write there.
  const longestName = new Map<string, string>();
  // The first rows to send, kept from the first pass as they were planned, so that sending starts
  // without waiting for the second pass to reach them (a resumed batch's first pending row may be its last).
  const early = new Map<number, ValidRow>();
  let recalled = 0;
  /** Records a decided row; a pending one's name counts towards the longest its directory must take. */
  const settle = (row: number, target: string, entry: ResumeEntry): void => {
    resume.set(row, target, entry);
    staleParts.add(target);
    if (entry.action === 'done') outcomes.record({ row, status: 'done', file: target, bytes: entry.bytes, attempts: 0, previously: true });
    if (entry.action !== 'pending') return;
    const dir = dirname(target);
    const name = basename(target);
    if (Buffer.byteLength(name) > Buffer.byteLength(longestName.get(dir) ?? '')) longestName.set(dir, name);
  };
  // Recalled rows are decided as their files' sizes come back from another thread.
  const recordedBytes = new RowArray((n) => new Float64Array(n));
  const sizes = new FileSizes((row, target, size) => {
    const bytes = recordedBytes.get(row);
    const entry = resumeBySize(target, { status: 'done', bytes: bytes < 0 ? undefined : bytes }, size, force);
    if (entry.action === 'done') recalled++;
    settle(row, target, entry);
  });
  ctx.onCleanup(() => sizes.close());
  // A row an earlier run finished from these very inputs is taken from the manifest without being
  // planned again (what most of a long resumed batch is); any other row is planned in full.
  const recall: SurveyOptions['recall'] = (row, digest, mine) => {
    const memory = manifest.recall(row.row, digest);
    if (!memory) return undefined;
    const target = planner.targetOf(memory.file);
    if (!mine) return target;
    if (memory.last?.status !== 'done') return undefined;
    recordedBytes.set(row.row, memory.last.bytes ?? -1);
    sizes.look(row.row, target);
    return target;
  };
  const survey = await surveyOrRefuseEmpty(ctx, input, planner, {
    shard,
    // Without a manifest there is nothing to recall, and no digest to work out in this pass.
    recall: manifest.size > 0 ? recall : undefined,
    firstPassDone: () => sizes.settled(),
    onRow: (row: ValidRow) => {
      // Told again when its name changed after the pass: decided again.
      forget(row.row);
      early.delete(row.row);
      const entry = resumeEntry(row.target, manifest.get(row.key), force);
      settle(row.row, row.target, entry);
      if (entry.action === 'pending' && early.size < EARLY_ROWS) early.set(row.row, row);
    },
    onDropped: (row) => {
      forget(row);
      early.delete(row);
    },
  });
  const note = shardNote(shard, survey);
  if (recalled > 0) io.debug(`${recalled} row${recalled > 1 ? 's' : ''} taken as done from the manifest's record of ${recalled > 1 ? 'their' : 'its'} inputs, without planning ${recalled > 1 ? 'them' : 'it'} again`);

  // Every shard refuses the same file: a typo in another runner's row is still a typo in this batch.
  // --skip-invalid lets bad rows fail alone; clashing names would still lose images, so they always stop the batch.
  if (survey.invalid > 0 && (!options.skipInvalid || survey.collisions)) throw new UsageError(describeInvalid(survey));
  if (manifestProblem) throw manifestProblem;

  // A directory where an image must go would fail that row after it was paid for: refused now, --force or not.
  const blocked = resume.refusals('blocked');
  if (blocked.count > 0) {
    throw new UsageError(
      `${blocked.count} output path${blocked.count > 1 ? 's are directories' : ' is a directory'} (first: row ${blocked.first!.row}, ${displayPath(blocked.first!.target)}); change --output-template or move ${blocked.count > 1 ? 'them' : 'it'}`,
    );
  }
  const conflicts = resume.refusals('conflict');
  if (conflicts.count > 0) {
    const { count, first } = conflicts;
    throw new UsageError(
      `${count} output file${count > 1 ? 's' : ''} already exist${count > 1 ? '' : 's'} and ${count > 1 ? 'were' : 'was'} not written by this batch (first: row ${first!.row}, ${displayPath(first!.target)}); pass --force to overwrite, or change --output-template`,
    );
  }

  let pending = 0;
  let inFlightBefore = 0;
  let adopted = 0;
  for (let row = shard?.index ?? 1; row <= survey.rows; row += shard?.count ?? 1) {
    const entry = resume.get(row);
    if (!entry || survey.names.duplicateOf(row)) continue;
    if (entry.action === 'pending') {
      pending++;
      if (entry.wasInFlight) inFlightBefore++;
    } else if (entry.action === 'adopt') adopted++;
  }
  const previously = survey.shard.valid - pending;
  if (inFlightBefore > 0) {
    io.warn(
      `${inFlightBefore} row${inFlightBefore > 1 ? 's were' : ' was'} in flight when an earlier run stopped; the service may already have generated (and charged for) ${inFlightBefore > 1 ? 'them' : 'it'}, and ${inFlightBefore > 1 ? 'they are' : 'it is'} sent again`,
    );
  }
  if (previously > 0) io.info(`${previously} row${previously > 1 ? 's' : ''} already done by an earlier run (manifest ${displayPath(planner.manifestPath)})`);

  // The outputs' directories before the manifest: a path that cannot be one, or where no file can be
  // created (read-only, full, no permission, names too long), stops the batch with nothing sent.
  const { checkOutputDirectory } = await import('../../files/jpeg-file.js');
  for (const [dir, name] of longestName) await checkOutputDirectory(dir, name, '--output-template');
  if (lockProblem) throw lockProblem;
  let writer: ManifestWriter | undefined;
  if (pending > 0 || adopted > 0) {
    writer = await ManifestWriter.open(planner.manifestPath, io.redact).catch((error: unknown) => {
      throw manifestUnusable(error);
    });
    ctx.onCleanup(() => writer!.close());
  }
  await staleParts.sweep();

  /** The second pass: rows with nothing to send are recorded as they are met, the others handed to the workers. */
  async function* jobs(): AsyncGenerator<Job> {
    for (const row of [...early.values()].sort((a, b) => a.row - b.row)) yield { plan: row, resume: resume.get(row.row)! };
    for await (const row of plannedRows(input, planner, survey, { shard, settled: (row) => outcomes.has(row) || early.has(row) })) {
      if (row.error) {
        outcomes.record({ row: row.row, status: 'failed', attempts: 0, error: row.error, exitCode: ExitCode.Usage });
        continue;
      }
      const valid = row as ValidRow;
      const entry = resume.get(row.row)!;
      if (entry.action === 'adopt') {
        writer!.append({ row: row.row, key: valid.key, status: 'done', file: valid.file, bytes: entry.bytes, attempts: 0, adopted: true, input: valid.input }, false);
      }
      if (entry.action === 'done' || entry.action === 'adopt') {
        outcomes.record({ row: row.row, status: 'done', file: valid.target, bytes: entry.bytes, attempts: 0, previously: true, adopted: entry.action === 'adopt' || undefined });
        continue;
      }
      yield { plan: valid, resume: entry };
    }
  }

  const started = Date.now();
  let ending: { interrupted?: boolean; stoppedWith?: number; stopError?: CliError } = {};
  let wire: WireLimiter | undefined;
  let run: RowRunner | undefined;
  if (pending > 0) {
    // Each row in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
    setMaxListeners(concurrency * 4 + 10, ctx.signal);
    let progress: Progress | undefined;
    wire = new WireLimiter(concurrency, { ratePerSecond });
    const room = wire;
    // The in-flight limit as the progress lines last told it: a pause names it only when it changed.
    let toldLimit = concurrency;
    // A 429 pauses every row, and halves the requests on the wire: they would only be refused too.
    const policy = persistentPolicy({
      ...retries,
      wire,
      onPause: (ms) => {
        const limit = room.limit;
        const change = limit === toldLimit ? '' : `; at most ${limit} in flight from now on`;
        toldLimit = limit;
        progress?.log(`rate limited (429): pausing all requests for ${formatDuration(ms, 100)}${change}`);
      },
    });
    const client = await ctx.client({ connections: concurrency, retry: policy });
    const { JpegFileDestination, saveImage } = await import('../../files/jpeg-file.js');
    const metadata = options.metadata === false ? undefined : await import('../../files/image-metadata.js');
    const { VERSION } = await import('../../bundle/version.js');
    const fileOptions = (job: Job): JpegFileOptions => ({
      force,
      // The same GPS EXIF and AI-generated note as `aerial generate` writes, added as the file is written.
      editor: metadata?.createMetadataSplicer({ request: job.plan.request, software: `aerial ${VERSION}`, redact: io.redact }),
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
    run = new RowRunner({ manifest: writer!, produce, progress, outcomes, signal: ctx.signal, stopSignal: ctx.stopSignal });
    // The requests on the wire have been paid for: the first signal lets them finish and be recorded.
    ctx.finishInFlightOnStop({ count: () => room.inFlight, noun: 'request', notice: (message) => progress.log(message) });
    const paced = ratePerSecond === undefined ? '' : ` at most ${formatRate(ratePerSecond)}`;
    io.info(`Generating ${pending} image${pending > 1 ? 's' : ''} with concurrency ${concurrency}${paced}${note}…`);
    try {
      // Twice as many rows under way as requests on the wire: one sent and one finishing its file, per slot.
      await run.run(jobs(), pending, concurrency * 2);
      if (ctx.stopSignal.aborted) ending = { interrupted: true };
    } catch (error) {
      if (!ctx.signal.aborted) throw error;
      ending = { interrupted: true };
    } finally {
      progress.stop();
    }
    if (run.stopError) ending = { ...ending, stoppedWith: run.stopError.exitCode, stopError: run.stopError };
  } else {
    // Nothing to send: the rows are recorded as they are (done before, or invalid).
    for await (const _job of jobs()) throw new Error('a row to send was not counted');
  }
  const counts = outcomes.complete(survey.shard.rows, (row) => run?.unfinished({ row }) ?? { row, status: 'skipped', attempts: 0, error: 'not started' });
  const elapsedMs = Date.now() - started;

  // The lines are written already; this only waits for the last one to be on disk.
  await writer?.close().catch((error: Error) => io.warn(`the manifest may not be safely on disk: ${error.message}`));
  const summary = { counts, outcomes, elapsedMs, manifestPath: planner.manifestPath, shardNote: note, wire: wire?.stats };
  const exitCode = exitCodeOf(counts.exitCodes, ending);
  if (io.json) await printJsonSummary(ctx, summary);
  else printSummary(ctx, summary);
  // The report and the GeoJSON show failed rows too; an interrupted batch (its thumbnails can take a while) writes neither.
  // They show every row of the shard, so they hold them all: the one part of a batch whose memory grows with it.
  if (outputs && (reportPath || geojsonPath) && !ending.interrupted) {
    const rows: PlannedRow[] = [];
    for await (const row of plannedRows(input, planner, survey, { shard, keys: false })) rows.push(row);
    const { writeBatchOutputs } = await import('./report-images.js');
    const written = await writeBatchOutputs(rows, [...outcomes.outcomes()], {
      report: reportPath,
      geojson: geojsonPath,
      title: `aerial batch ${basename(path)}`,
      subtitle: `${path === '-' ? 'standard input' : displayPath(resolve(path))}${note}`,
      signal: ctx.stopSignal,
      redact: io.redact,
    });
    if (written.geojson) io.info(io.style.dim(`GeoJSON: ${displayPath(written.geojson)}`));
    if (written.report) io.info(io.style.dim(`Report: ${displayPath(written.report.path)}${outputs.describeThumbnails(written.report)}`));
  }
  if (ending.interrupted) throw new InterruptedError();
  if (exitCode !== ExitCode.Ok) {
    const reason = ending.stopError ? `; stopped early: ${ending.stopError.code} — ${ending.stopError.message}` : '';
    const undone = counts.failed + counts.skipped;
    throw new CliError(
      `${undone} of ${counts.total} row${counts.total > 1 ? 's' : ''} did not succeed${reason}; re-run the same command to retry them`,
      exitCode as CliError['exitCode'],
      ending.stopError?.code ?? 'BatchIncomplete',
    );
  }
}

/** The first pass; a file without rows is refused, and columns that nothing uses are named. */
export async function surveyOrRefuseEmpty(
  ctx: Context,
  input: BatchInput,
  planner: RowPlanner,
  options: Parameters<typeof surveyBatch>[2],
): Promise<Survey> {
  const survey = await surveyBatch(input, planner, options);
  if (survey.rows === 0) {
    throw inputError(input.path, undefined, `has no rows${input.format === 'csv' ? ' under its header row' : ''}: nothing to generate`);
  }
  if (survey.unusedColumns.length > 0) {
    const columns = survey.unusedColumns.map((column) => `'${column}'`).join(', ');
    const many = survey.unusedColumns.length > 1;
    ctx.io.warn(`${shownPath(input.path)}: ${input.format === 'csv' ? 'column' : 'key'}${many ? 's' : ''} ${columns} set${many ? '' : 's'} no scene field and --output-template does not use ${many ? 'them' : 'it'}: ignored`);
  }
  return survey;
}

function shardNote(shard: Shard | undefined, survey: Survey): string {
  return shard ? ` (shard ${shard.index}/${shard.count}: ${survey.shard.rows} of ${survey.rows} rows)` : '';
}

/** 2/s, 30/m: as --rate was written, in the unit that reads best. */
function formatRate(perSecond: number): string {
  return perSecond >= 1 ? `${Math.round(perSecond * 100) / 100}/s` : `${Math.round(perSecond * 6000) / 100}/m`;
}

function describeInvalid(survey: Survey): string {
  const count = survey.invalid;
  const shown = survey.firstErrors.join('; ');
  const more = count > survey.firstErrors.length ? `; and ${count - survey.firstErrors.length} more (--dry-run lists them all)` : '';
  const hint = survey.collisions ? '; nothing was sent' : '; nothing was sent (--skip-invalid runs the valid rows)';
  return `${count} invalid row${count > 1 ? 's' : ''}: ${shown}${more}${hint}`;
}
