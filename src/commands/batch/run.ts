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
import { basename, resolve } from 'node:path';
import { CliError, ExitCode, fileSystemProblem, InterruptedError, UsageError } from '../../lifecycle/errors.js';
import { PERSISTENT_RETRIES, persistentPolicy, type Attempt } from '../../api/retry.js';
import { WireLimiter } from '../../api/wire-limiter.js';
import type { Context } from '../../cli/context.js';
import { formatDuration } from '../../input/duration.js';
import { parseCount, parseRate } from '../../input/flags.js';
import type { JpegFileOptions } from '../../files/jpeg-file.js';
import { buildGenerationRequest, type SceneInput } from '../../input/scene-request.js';
import type { Settings } from '../../config/config.js';
import type { ListenPlan } from '../../webhook/async-generation.js';
import { BatchInput } from '../../batch/input.js';
import { inputError, shownPath } from '../../batch/input-text.js';
import { ManifestIndex, ManifestWriter } from '../../batch/manifest.js';
import { parseProgressInterval, parseRetryDelay } from '../shared/batch-options.js';
import { OutcomeLog } from '../../batch/outcomes.js';
import { parsePlanRecord, planRecord, samePlan } from '../../batch/plan-record.js';
import { VERSION } from '../../build-outputs/version.js';
import { plannedRows, RowPlanner, surveyBatch, type PlannedRow, type Survey, type ValidRow } from '../../batch/plan.js';
import { createProgress, type Progress } from '../../bulk/progress.js';
import { displayPath } from '../../files/file-names.js';
import { printDryRun, printJsonSummary, printSummary } from './print.js';
import type { ResumeTable } from '../../batch/resume.js';
import { RowDecisions } from '../../batch/row-decisions.js';
import { RowRunner, type Job, type RowProducer } from '../../batch/row-runner.js';
import { resolveShard, type Shard } from '../../batch/shard.js';
import { exitCodeOf } from '../../bulk/summary.js';
import { compileTemplate } from '../../batch/template.js';

export const DEFAULT_TEMPLATE = 'aerial-batch/{row}-{lat}_{lng}.jpg';
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 256;
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

/** The flags of a run, checked: everything that can be wrong with the command line is refused before the file is read. */
interface BatchFlags {
  concurrency: number;
  ratePerSecond: number | undefined;
  retries: { maxRetries: number; firstDelayMs: number; retryUnsafe: boolean };
  progressIntervalMs: number;
  shard: Shard | undefined;
  template: ReturnType<typeof compileTemplate>;
  /** --output-template as given, or the default. */
  templateSource: string;
  sceneDefaults: Settings['sceneDefaults'];
  asyncSetup: ListenPlan | undefined;
  /** The report's code, loaded only for a batch that asked for a report or GeoJSON. */
  outputs: typeof import('../../report/outputs.js') | undefined;
  reportPath: string | undefined;
  geojsonPath: string | undefined;
}

async function readFlags(ctx: Context, options: BatchOptions): Promise<BatchFlags> {
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
  if (shardChoice?.source) ctx.io.debug(`shard ${shard!.index}/${shard!.count} from ${shardChoice.source}`);
  const templateSource = options.outputTemplate ?? DEFAULT_TEMPLATE;
  const template = compileTemplate(templateSource);
  const sceneDefaults = ctx.settings().sceneDefaults;
  // The flags are checked once, against their own names, rather than once per row.
  buildGenerationRequest({ ...options.scene, lat: 0, lng: 0 }, sceneDefaults);
  const asyncSetup = await import('./async-rows.js').then((m) => m.parseAsyncFlags(options));
  const outputs = (options.report ?? options.geojson) !== undefined && !options.dryRun ? await import('../../report/outputs.js') : undefined;
  const reportPath = options.report === undefined || !outputs ? undefined : await outputs.checkOutputFile(options.report, '--report');
  const geojsonPath = options.geojson === undefined || !outputs ? undefined : await outputs.checkOutputFile(options.geojson, '--geojson');
  return { concurrency, ratePerSecond, retries, progressIntervalMs, shard, template, templateSource, sceneDefaults, asyncSetup, outputs, reportPath, geojsonPath };
}

/** How a run ended, beyond its rows' outcomes. */
interface Ending {
  interrupted?: boolean;
  stoppedWith?: number;
  stopError?: CliError;
}

export async function runBatch(ctx: Context, path: string, options: BatchOptions): Promise<void> {
  const { io } = ctx;
  const flags = await readFlags(ctx, options);
  const { shard } = flags;

  const input = await BatchInput.open(path, { format: options.format, delimiter: options.delimiter, stdin: io.stdin });
  ctx.onCleanup(() => input.close());
  const planner = new RowPlanner({
    path: input.path,
    header: input.header,
    flags: options.scene,
    sceneDefaults: flags.sceneDefaults,
    template: flags.template,
    manifestPath: options.manifest,
    cwd: process.cwd(),
    inputDigests: !options.dryRun,
  });

  if (options.dryRun) {
    const survey = await surveyOrRefuseEmpty(ctx, input, planner, { shard });
    const { rows: total, valid, credits } = survey.shard;
    return printDryRun(ctx, plannedRows(input, planner, survey, { shard, keys: false }), { total, valid, credits }, planner.manifestPath, shardNote(shard, survey));
  }

  const manifestUnusable = (error: unknown) => unusableManifest(error, options.manifest, planner.manifestPath);
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

  const outcomes = new OutcomeLog(input.rowsAtMost, shard);
  ctx.onCleanup(() => outcomes.close());
  const decisions = new RowDecisions(manifest, planner, outcomes, Boolean(options.force));
  ctx.onCleanup(() => decisions.close());
  const survey = await surveyOrRefuseEmpty(ctx, input, planner, decisions.surveyOptions(shard));
  const note = shardNote(shard, survey);
  const { recalled } = decisions;
  if (recalled > 0) io.debug(`${recalled} row${recalled > 1 ? 's' : ''} taken as done from the manifest's record of ${recalled > 1 ? 'their' : 'its'} inputs, without planning ${recalled > 1 ? 'them' : 'it'} again`);

  // Every shard refuses the same file: a typo in another runner's row is still a typo in this batch.
  // --skip-invalid lets bad rows fail alone; clashing names would still lose images, so they always stop the batch.
  if (survey.invalid > 0 && (!options.skipInvalid || survey.collisions)) throw new UsageError(describeInvalid(survey));
  if (manifestProblem) throw manifestProblem;
  refuseBlockedOutputs(decisions.resume);

  const { pending, inFlightBefore, adopted } = decisions.count(survey, shard);
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
  for (const [dir, name] of decisions.longestName) await checkOutputDirectory(dir, name, '--output-template');
  if (lockProblem) throw lockProblem;
  let writer: ManifestWriter | undefined;
  if (pending > 0 || adopted > 0) {
    writer = await ManifestWriter.open(planner.manifestPath, io.redact).catch((error: unknown) => {
      throw manifestUnusable(error);
    });
    ctx.onCleanup(() => writer!.close());
    // What the rows were planned from, once per manifest (again only when a run plans them otherwise): status plans them from it.
    const plan = planRecord({
      version: VERSION,
      batch: { path, sha256: await input.sha256(), rows: survey.rows },
      outputTemplate: flags.templateSource,
      format: input.format,
      delimiter: input.separator,
      scene: options.scene,
      sceneDefaults: flags.sceneDefaults,
      shard,
    });
    const last = parsePlanRecord(manifest.lastPlan);
    if (!(last.ok && samePlan(last.record, plan))) writer.appendPlan(plan);
  }
  await decisions.staleParts.sweep();

  /** The second pass: rows with nothing to send are recorded as they are met, the others handed to the workers. */
  async function* jobs(): AsyncGenerator<Job> {
    for (const row of [...decisions.early.values()].sort((a, b) => a.row - b.row)) yield { plan: row, resume: decisions.resume.get(row.row)! };
    for await (const row of plannedRows(input, planner, survey, { shard, settled: (row) => outcomes.has(row) || decisions.early.has(row) })) {
      if (row.error) {
        outcomes.record({ row: row.row, status: 'failed', attempts: 0, error: row.error, exitCode: ExitCode.Usage });
        continue;
      }
      const valid = row as ValidRow;
      const entry = decisions.resume.get(row.row)!;
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
  let sent: SentRows = { ending: {} };
  if (pending > 0) {
    sent = await sendRows(ctx, { flags, options, jobs: jobs(), pending, writer: writer!, outcomes, note });
  } else {
    // Nothing to send: the rows are recorded as they are (done before, or invalid).
    for await (const _job of jobs()) throw new Error('a row to send was not counted');
  }
  const { ending, run, wire } = sent;
  const counts = outcomes.complete(survey.shard.rows, (row) => run?.unfinished({ row }) ?? { row, status: 'skipped', attempts: 0, error: 'not started' });
  const elapsedMs = Date.now() - started;

  // The lines are written already; this only waits for the last one to be on disk.
  await writer?.close().catch((error: Error) => io.warn(`the manifest may not be safely on disk: ${error.message}`));
  const summary = { counts, outcomes, elapsedMs, manifestPath: planner.manifestPath, shardNote: note, wire: wire?.stats };
  const exitCode = exitCodeOf(counts.exitCodes, ending);
  if (io.json) await printJsonSummary(ctx, summary);
  else printSummary(ctx, summary);
  // The report and the GeoJSON show failed rows too; an interrupted batch (its thumbnails can take a while) writes neither.
  if (flags.outputs && (flags.reportPath || flags.geojsonPath) && !ending.interrupted) {
    await writeOutputs(ctx, { flags, path, note, rows: plannedRows(input, planner, survey, { shard, keys: false }), outcomes });
  }
  if (ending.interrupted) throw new InterruptedError();
  if (exitCode !== ExitCode.Ok) {
    const reason = ending.stopError ? `; stopped early: ${ending.stopError.code} — ${ending.stopError.message}` : '';
    const undone = counts.failed + counts.skipped;
    // Invalid rows (--skip-invalid) fail again at every run until the file is fixed: a re-run retries only the others.
    const invalid = Math.min(survey.shard.rows - survey.shard.valid, undone);
    const file = path === '-' ? 'the input' : displayPath(path);
    const next =
      invalid === undone
        ? `; ${invalid === 1 ? 'it is invalid' : 'they are invalid'}: fix ${invalid === 1 ? 'it' : 'them'} in ${file} (a re-run cannot)`
        : invalid > 0
          ? `; re-run the same command to retry the ${undone - invalid} that can be, after fixing the ${invalid} invalid in ${file}`
          : '; re-run the same command to retry them';
    throw new CliError(
      `${undone} of ${counts.total} row${counts.total > 1 ? 's' : ''} did not succeed${reason}${next}`,
      exitCode as CliError['exitCode'],
      ending.stopError?.code ?? 'BatchIncomplete',
    );
  }
}

/** A manifest path that cannot hold a file is the user's to fix: --manifest, or the outputs' directory it defaults to. */
function unusableManifest(error: unknown, flag: string | undefined, manifestPath: string): unknown {
  const problem = fileSystemProblem(error);
  if (!problem) return error;
  return new UsageError(
    flag !== undefined
      ? `--manifest ${flag}: ${problem}`
      : `the manifest's place beside the outputs, ${displayPath(manifestPath)}, is unusable: ${problem}; pass --manifest to put it elsewhere`,
  );
}

/** Refuses outputs a run would fail on after paying for them: a directory in the way (--force or not), or a file this batch did not write. */
function refuseBlockedOutputs(resume: ResumeTable): void {
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
}

/** What sending left: how it ended, the runner (for rows it did not finish) and the wire's counts. */
interface SentRows {
  ending: Ending;
  run?: RowRunner;
  wire?: WireLimiter;
}

interface SendPlan {
  flags: BatchFlags;
  options: BatchOptions;
  jobs: AsyncIterator<Job>;
  pending: number;
  writer: ManifestWriter;
  outcomes: OutcomeLog;
  note: string;
}

/** Sends the pending rows through one client, under the batch's retry policy, wire limit and progress display. */
async function sendRows(ctx: Context, { flags, options, jobs, pending, writer, outcomes, note }: SendPlan): Promise<SentRows> {
  const { io } = ctx;
  const { concurrency, ratePerSecond } = flags;
  // Each row in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
  setMaxListeners(concurrency * 4 + 10, ctx.signal);
  let progress: Progress | undefined;
  const wire = new WireLimiter(concurrency, { ratePerSecond });
  // The in-flight limit as the progress lines last told it: a pause names it only when it changed.
  let toldLimit = concurrency;
  // The sending rate as the progress lines last told it (--rate, or none).
  let toldRate = ratePerSecond === undefined ? undefined : formatRate(ratePerSecond);
  // A 429 pauses every row, halves the requests on the wire and cuts the sending rate: they would only be refused too.
  const policy = persistentPolicy({
    ...flags.retries,
    wire,
    onPause: (ms) => {
      const limit = wire.limit;
      const change = limit === toldLimit ? '' : `; at most ${limit} in flight from now on`;
      toldLimit = limit;
      const rate = wire.sendRate.rate === undefined ? undefined : formatRate(wire.sendRate.rate);
      const paced = rate === toldRate || rate === undefined ? '' : `; sending at most ${rate}`;
      toldRate = rate;
      progress?.log(`rate limited (429): pausing all requests for ${formatDuration(ms, 100)}${change}${paced}`);
    },
  });
  const client = await ctx.client({ connections: concurrency, retry: policy });
  const { JpegFileDestination, saveImage } = await import('../../files/jpeg-file.js');
  const metadata = options.metadata === false ? undefined : await import('../../files/image-metadata.js');
  const force = Boolean(options.force);
  const fileOptions = (job: Job): JpegFileOptions => ({
    force,
    // The same GPS EXIF and AI-generated note as `aerial generate` writes, added as the file is written.
    editor: metadata?.createMetadataSplicer({ request: job.plan.request, software: `aerial ${VERSION}`, redact: io.redact }),
    diskBufferBytes: DISK_BUFFER_BYTES,
  });
  const produce: RowProducer = flags.asyncSetup
    ? await import('./async-rows.js').then((m) => m.asyncProducer(ctx, { client, setup: flags.asyncSetup!, fileOptions }))
    : (job, retry, signal) => {
        const destination = new JpegFileDestination(job.plan.target, fileOptions(job));
        const onAttempt = (attempt: Attempt) => {
          // The temp file opens while the request is on the wire, not once the image is arriving.
          destination.prepare();
          retry.onAttempt?.(attempt);
        };
        return saveImage(destination, (sink) => client.generateInto(job.plan.request, sink, { signal, retry: { ...retry, onAttempt } }));
      };
  progress = await createProgress(io, { intervalMs: flags.progressIntervalMs });
  ctx.onCleanup(() => progress!.stop());
  const run = new RowRunner({ manifest: writer, produce, progress, outcomes, signal: ctx.signal, stopSignal: ctx.stopSignal });
  // The requests sent have been paid for: the first signal lets them finish, their images be saved and recorded.
  ctx.finishInFlightOnStop({ count: () => run.paidForRows, noun: 'request', notice: (message) => progress.log(message) });
  const paced = ratePerSecond === undefined ? '' : ` at most ${formatRate(ratePerSecond)}`;
  io.info(`Generating ${pending} image${pending > 1 ? 's' : ''} with concurrency ${concurrency}${paced}${note}…`);
  let ending: Ending = {};
  try {
    // Twice as many rows under way as requests on the wire: one sent and one finishing its file, per slot.
    await run.run(jobs, pending, concurrency * 2);
    if (ctx.stopSignal.aborted) ending = { interrupted: true };
  } catch (error) {
    if (!ctx.signal.aborted) throw error;
    ending = { interrupted: true };
  } finally {
    progress.stop();
  }
  if (run.stopError) ending = { ...ending, stoppedWith: run.stopError.exitCode, stopError: run.stopError };
  return { ending, run, wire };
}

/**
 * --report and --geojson. They show every row of the shard, so they hold them
 * all: the one part of a batch whose memory grows with it.
 */
async function writeOutputs(
  ctx: Context,
  { flags, path, note, rows, outcomes }: { flags: BatchFlags; path: string; note: string; rows: AsyncIterable<PlannedRow>; outcomes: OutcomeLog },
): Promise<void> {
  const { io } = ctx;
  const planned: PlannedRow[] = [];
  for await (const row of rows) planned.push(row);
  const { writeBatchOutputs } = await import('./report-images.js');
  const written = await writeBatchOutputs(planned, [...outcomes.outcomes()], {
    report: flags.reportPath,
    geojson: flags.geojsonPath,
    title: `aerial batch ${basename(path)}`,
    subtitle: `${path === '-' ? 'standard input' : displayPath(resolve(path))}${note}`,
    signal: ctx.stopSignal,
    redact: io.redact,
  });
  if (written.geojson) io.info(io.style.dim(`GeoJSON: ${displayPath(written.geojson)}`));
  if (written.report) io.info(io.style.dim(`Report: ${displayPath(written.report.path)}${flags.outputs!.describeThumbnails(written.report)}`));
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
