// `aerial batch status [file]`: one account of a batch whose shards ran on
// many machines. The manifests are read one line at a time; the batch file is
// planned as their plan records say the shards planned it (batch/plan-record.ts;
// for manifests written before those, with the flags given), so that every row
// has the key its shard recorded; and the rows are matched to the records
// (batch/shard-account.ts).
import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { CliError, UsageError } from '../../lifecycle/errors.js';
import type { Context } from '../../cli/context.js';
import type { BatchRowState } from './report-images.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';
import { buildGenerationRequest, type SceneDefaults, type SceneInput } from '../../input/scene-request.js';
import { DEFAULT_TEMPLATE, surveyOrRefuseEmpty } from './run.js';
import { BatchInput } from '../../batch/input.js';
import { manifestRecords } from '../../batch/manifest.js';
import { defaultManifestPath, plannedRows, RowPlanner, type PlannedRow } from '../../batch/plan.js';
import { displayPath } from '../../files/file-names.js';
import { ManifestSet, rowRanges, statusExitCode, StatusTally, type BatchStatusReport, type RowState } from '../../batch/shard-account.js';
import { compileTemplate } from '../../batch/template.js';
import { baseRequest, parsePlanRecord, planDifferences, recordedDefaults, requestDifferences, shownValue, wireValue, type ParsedPlan, type PlanRecord } from '../../batch/plan-record.js';
import { wirePath } from '../../scene/vocabulary.js';
import { inShard, type Shard } from '../../batch/shard.js';
import { detectFormat } from '../../batch/row-columns.js';
import { delimiterFlag, parseDelimiter } from '../../batch/csv-dialect.js';
import { flagName } from '../../api/enums.js';
import type { GenerationRequest } from '../../api/schema.js';

export interface BatchStatusOptions {
  format?: string;
  delimiter?: string;
  outputTemplate?: string;
  /** Paths or glob patterns, from every --manifest. */
  manifest?: string[];
  /** --report: the HTML report's path. */
  report?: string;
  /** --geojson: the GeoJSON file's path. */
  geojson?: string;
  scene: SceneInput;
}

/** Failed rows shown one per line before "… and N more". */
const FAILED_SHOWN = 20;

export async function runBatchStatus(ctx: Context, path: string | undefined, options: BatchStatusOptions): Promise<void> {
  const { io } = ctx;
  const cwd = process.cwd();
  const ownDefaults = ctx.settings().sceneDefaults;
  // The flags are checked before anything is read, whatever the manifests then say.
  const givenTemplate = options.outputTemplate === undefined ? undefined : compileTemplate(options.outputTemplate);
  buildGenerationRequest({ ...options.scene, lat: 0, lng: 0 }, ownDefaults);
  const outputs = options.report === undefined && options.geojson === undefined ? undefined : await import('../../report/outputs.js');
  const reportPath = options.report === undefined ? undefined : await outputs!.checkOutputFile(options.report, '--report');
  const geojsonPath = options.geojson === undefined ? undefined : await outputs!.checkOutputFile(options.geojson, '--geojson');
  const manifestPaths = await findManifests(options.manifest, defaultManifestPath(givenTemplate ?? compileTemplate(DEFAULT_TEMPLATE), cwd));

  const manifests = new ManifestSet();
  const plans: ShardPlan[] = [];
  for (const manifestPath of manifestPaths) {
    const shown = displayPath(manifestPath);
    // The last plan record of each shard in the manifest (several shards may share one); a later one replaces an earlier.
    const byShard = new Map<string, PlanRecord>();
    let problem: string | undefined;
    const onPlan = (value: unknown) => {
      const parsed = value === undefined ? { ok: false as const, problem: 'it is torn (the line ends before the record does)' } : usablePlan(parsePlanRecord(value), ownDefaults);
      if (parsed.ok) byShard.set(shardLabel(parsed.record.shard), parsed.record);
      else problem ??= parsed.problem;
    };
    const summary = await manifests.add(shown, manifestRecords(manifestPath, { onPlan }));
    if (summary.records === 0 && byShard.size === 0) io.warn(`${summary.path} holds no manifest record`);
    if (byShard.size === 0 && problem) io.warn(`${summary.path}: its plan record is left aside: ${problem}`);
    for (const record of byShard.values()) plans.push({ manifest: shown, record });
  }
  const recorded = settlePlans(plans, ownDefaults);
  if (recorded) refuseContradictions(options, recorded, ownDefaults);

  // The batch file: as given, else where the shards' record says they read it.
  let file = path;
  if (file === undefined) {
    if (!recorded) {
      throw new UsageError('give status the batch file the shards ran: no manifest records it (written before manifests recorded their plan)');
    }
    if (recorded.batch.path === '-') throw new UsageError('the shards read their batch file from standard input; give it to status: aerial batch status <file> --manifest …');
    file = recorded.batch.path;
  }
  const settings = recorded?.settings;
  const input = await BatchInput.open(file, {
    format: options.format ?? settings?.format,
    delimiter: options.delimiter ?? settings?.delimiter,
    stdin: io.stdin,
  }).catch((error: unknown) => {
    if (path === undefined && error instanceof UsageError) throw new UsageError(`${error.message} (the path the manifests record); give status the batch file the shards ran`);
    throw error;
  });
  ctx.onCleanup(() => input.close());
  if (recorded) {
    const sha256 = await input.sha256();
    if (sha256 !== recorded.batch.sha256) {
      throw new UsageError(
        `${file === '-' ? 'standard input' : file} is not the batch file the shards ran: its sha256 is ${sha256.slice(0, 12)}…, the manifests record ${recorded.batch.sha256.slice(0, 12)}… (${recorded.batch.path}, ${recorded.batch.rows} row${recorded.batch.rows === 1 ? '' : 's'}); give status the file the shards ran`,
      );
    }
    // Said in words; --json says it as planFrom.
    if (!io.json) io.info(io.style.dim(`Planned as the manifests record: ${describeSettings(recorded)}`));
  }

  // Every row of every shard, planned as the shards planned theirs (names that clash told apart alike).
  const template = settings ? compileTemplate(settings.outputTemplate) : (givenTemplate ?? compileTemplate(DEFAULT_TEMPLATE));
  const planner = new RowPlanner({
    path: input.path,
    header: input.header,
    flags: settings ? settings.scene : options.scene,
    sceneDefaults: recorded ? recordedDefaults(recorded, ownDefaults) : ownDefaults,
    template,
    cwd,
  });
  const survey = await surveyOrRefuseEmpty(ctx, input, planner, {});
  const tally = new StatusTally(manifests);
  // Only for a report: every row, and where its image is.
  const shown = outputs ? { rows: [] as PlannedRow[], states: [] as BatchRowState[] } : undefined;
  for await (const row of plannedRows(input, planner, survey)) {
    const state = tally.add(row);
    if (shown) {
      shown.rows.push(row);
      shown.states.push(reportState(row, state, manifestPaths));
    }
  }
  const report = tally.finish();
  const shards = recorded ? shardCoverage(plans, report.missingRows) : undefined;

  if (io.json) io.outJson({ file, ...report, planFrom: recorded ? 'manifests' : 'flags', ...(shards ? { shards } : {}) });
  else printStatus(ctx, file, report, { recorded: recorded !== undefined, shards });
  // Written whether or not the batch is complete: a report of what is missing is when it helps most.
  if (shown) {
    const { writeBatchOutputs } = await import('./report-images.js');
    const written = await writeBatchOutputs(shown.rows, shown.states, {
      report: reportPath,
      geojson: geojsonPath,
      title: `aerial batch ${basename(file)}`,
      subtitle: `${file === '-' ? 'standard input' : displayPath(resolve(file))}: all shards, ${report.manifests.length} manifest${report.manifests.length === 1 ? '' : 's'}`,
      signal: ctx.stopSignal,
      redact: io.redact,
    });
    if (written.geojson) io.info(io.style.dim(`GeoJSON: ${displayPath(written.geojson)}`));
    if (written.report) io.info(io.style.dim(`Report: ${displayPath(written.report.path)}${outputs!.describeThumbnails(written.report)}`));
  }
  const exitCode = statusExitCode(report);
  if (exitCode !== 0) {
    const undone = report.failed + report.missing;
    const parts = [report.failed ? `${report.failed} failed` : '', report.missing ? `${report.missing} missing` : ''].filter(Boolean).join(', ');
    throw new CliError(
      `${undone} of ${report.total} row${report.total === 1 ? '' : 's'} not done (${parts}); re-run the shards that did not finish (each resumes from its manifest)`,
      exitCode as CliError['exitCode'],
      'BatchIncomplete',
    );
  }
}

/** A well-formed record whose settings also plan: its template compiles and its flags and defaults make a request. */
function usablePlan(parsed: ParsedPlan, ownDefaults: SceneDefaults): ParsedPlan {
  if (!parsed.ok) return parsed;
  try {
    compileTemplate(parsed.record.settings.outputTemplate);
    baseRequest(parsed.record.settings.scene, recordedDefaults(parsed.record, ownDefaults));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { ok: false, problem: `its settings do not plan a row: ${error.message}` };
  }
  return parsed;
}

/** One shard's plan record, and the manifest it was read from. */
interface ShardPlan {
  manifest: string;
  record: PlanRecord;
}

function shardLabel(shard: Shard | undefined): string {
  return shard ? `${shard.index}/${shard.count}` : 'all';
}

function whose(plan: ShardPlan): string {
  return `${printable(plan.manifest, 200)}${plan.record.shard ? ` (shard ${shardLabel(plan.record.shard)})` : ''}`;
}

/**
 * The plan the manifests record, or undefined when none records one (they
 * were written before the record was, and status plans with its flags as it
 * always did). Manifests that disagree on anything that makes a row's key, or
 * on the batch file, are refused, naming the first two and what differs: an
 * account over two plans would call one's rows missing.
 */
function settlePlans(plans: ShardPlan[], ownDefaults: SceneDefaults): PlanRecord | undefined {
  const first = plans[0];
  if (!first) return undefined;
  for (const other of plans.slice(1)) {
    const differences = planDifferences(first.record, other.record, ownDefaults);
    if (differences.length === 0) continue;
    const side = (pick: 'a' | 'b') => differences.map((difference) => `${difference.setting} ${printable(difference[pick], 200)}`).join(', ');
    throw new UsageError(
      `the manifests record different settings: ${whose(other)} ran with ${side('b')}, ${whose(first)} with ${side('a')}; status accounts for one batch: re-run the odd shard with the others' settings, or give status only the manifests of one batch`,
    );
  }
  return first.record;
}

/** Flags given to status that would plan the rows otherwise than the manifests record: refused, naming the flag. */
function refuseContradictions(options: BatchStatusOptions, recorded: PlanRecord, ownDefaults: SceneDefaults): void {
  const { settings } = recorded;
  const refuse = (given: string, ran: string) => {
    throw new UsageError(`${given} contradicts the manifests, whose shards ran with ${ran}; leave it out: status plans the rows as the manifests record`);
  };
  if (options.outputTemplate !== undefined && options.outputTemplate !== settings.outputTemplate) {
    refuse(`--output-template ${options.outputTemplate}`, `--output-template ${settings.outputTemplate}`);
  }
  if (options.format !== undefined && detectFormat('', '', options.format) !== settings.format) refuse(`--format ${options.format}`, `--format ${settings.format}`);
  if (options.delimiter !== undefined && parseDelimiter(options.delimiter) !== (settings.delimiter ?? ',')) {
    refuse(`--delimiter ${options.delimiter}`, delimiterFlag(settings.delimiter ?? ','));
  }
  const defaults = recordedDefaults(recorded, ownDefaults);
  const ran = baseRequest(settings.scene, defaults);
  const asked = baseRequest({ ...settings.scene, ...options.scene }, defaults);
  const [field] = requestDifferences(asked, ran);
  if (field !== undefined) {
    const value = (request: GenerationRequest) => shownValue(wireValue(request, wirePath(field)!));
    refuse(`--${flagName(field)} ${value(asked)}`, `--${flagName(field)} ${value(ran)}`);
  }
}

/** The recorded settings in a line: the template, the scene flags, the shard count. */
function describeSettings(recorded: PlanRecord): string {
  const { settings } = recorded;
  const flags = Object.entries(settings.scene).map(([field, value]) => `--${flagName(field)} ${Array.isArray(value) ? value.join(';') : String(value)}`);
  const shards = recorded.shard ? `; ${recorded.shard.count} shard${recorded.shard.count === 1 ? '' : 's'}` : '';
  return printable(`--output-template ${settings.outputTemplate}${flags.length ? ` ${flags.join(' ')}` : ''}${shards}`, 500);
}

/**
 * The shards no manifest records and whose rows are missing (undefined when
 * some manifest ran every row): a runner that never ran, or whose manifest
 * was not given. A shard whose rows are all done (by an earlier version that
 * wrote no plan record), or that has no rows, is not one.
 */
function shardCoverage(plans: ShardPlan[], missingRows: number[]): { count: number; missing: number[] } | undefined {
  if (plans.some((plan) => !plan.record.shard)) return undefined;
  const count = plans[0]!.record.shard!.count;
  const seen = new Set(plans.map((plan) => plan.record.shard!.index));
  const unseen = new Set<number>();
  for (const row of missingRows) {
    const index = ((row - 1) % count) + 1;
    if (!seen.has(index)) unseen.add(index);
  }
  return { count, missing: [...unseen].sort((a, b) => a - b) };
}

/**
 * A row as the report shows it. A done row's image is looked for beside the
 * manifest that recorded it (an artifact downloaded with its images), then
 * where the template puts it here.
 */
function reportState(row: PlannedRow, state: RowState, manifestPaths: string[]): BatchRowState {
  if (state.state === 'done') {
    const beside = resolve(dirname(manifestPaths[state.record.manifest]!), state.record.file);
    const file = existsSync(beside) || !row.target || !existsSync(row.target) ? beside : row.target;
    return { row: row.row, status: 'done', file };
  }
  if (state.state === 'failed') return { row: row.row, status: 'failed', file: row.target, error: state.error };
  return { row: row.row, status: 'skipped', file: row.target, error: state.inFlight ? 'missing: in flight when its shard stopped' : 'missing: no shard finished it' };
}

/**
 * The manifest files --manifest names, each once (by real path), in the order
 * given and, within a pattern, sorted. A path that is not there, or a pattern
 * that matches nothing, is refused: a gate that read fewer manifests than the
 * shards wrote would call their rows missing.
 */
async function findManifests(patterns: string[] | undefined, defaultPath: string): Promise<string[]> {
  if (!patterns || patterns.length === 0) {
    const found = await regularFile(defaultPath);
    if (found === 'missing') {
      throw new UsageError(`no manifest at ${displayPath(defaultPath)} (the batch's default place); give the shards' manifests with --manifest <path or glob>`);
    }
    if (found !== 'file') throw new UsageError(`the manifest ${displayPath(defaultPath)} ${found}`);
    return [defaultPath];
  }
  const { glob, isDynamicPattern } = await import('tinyglobby');
  const seen = new Set<string>();
  const paths: string[] = [];
  for (const pattern of patterns) {
    let matches: string[];
    if (isDynamicPattern(pattern)) {
      matches = (await glob(pattern, { absolute: true, onlyFiles: true, dot: true, expandDirectories: false })).sort();
      if (matches.length === 0) throw new UsageError(`--manifest ${pattern} matches no file`);
    } else {
      const found = await regularFile(pattern);
      if (found === 'missing') throw new UsageError(`--manifest ${pattern}: no such file`);
      if (found !== 'file') throw new UsageError(`--manifest ${pattern} ${found}`);
      matches = [resolve(pattern)];
    }
    for (const match of matches) {
      const real = await realpath(match);
      if (seen.has(real)) continue;
      seen.add(real);
      paths.push(match);
    }
  }
  return paths;
}

async function regularFile(path: string): Promise<'file' | 'missing' | string> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  if (!info) return 'missing';
  if (info.isDirectory()) return 'is a directory; name the manifest file, or a glob such as dir/**/*.jsonl';
  if (!info.isFile()) return 'is not a regular file';
  return 'file';
}

function printStatus(ctx: Context, path: string, report: BatchStatusReport, plan: { recorded: boolean; shards?: { count: number; missing: number[] } }): void {
  const { io } = ctx;
  const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
  const name = path === '-' ? 'standard input' : displayPath(resolve(path));
  io.out(`${name}: ${count(report.total, 'row')}, ${count(report.manifests.length, 'manifest')}`);
  const width = String(report.total).length;
  const figure = (label: string, n: number, note = '') => io.out(`  ${label.padEnd(9)} ${String(n).padStart(width)}${note ? `  ${note}` : ''}`);
  figure('done', report.done, report.duplicated ? `(${report.duplicated} of them done more than once)` : '');
  figure('failed', report.failed);
  figure('missing', report.missing, report.inFlightRows.length ? `(${report.inFlightRows.length} in flight when their shard stopped)` : '');
  figure('429s', report.rateLimited, 'rate-limit answers met by the shards');
  if (report.failedRows.length > 0) {
    io.out('Failed:');
    for (const row of report.failedRows.slice(0, FAILED_SHOWN)) {
      // A failure quotes a server's message or a cell of the file.
      const where = row.manifest ? ` (${printable(row.manifest, 200)})` : '';
      io.out(`  row ${row.row}: ${printable(row.error, MESSAGE_MAX)}${where}`);
    }
    if (report.failedRows.length > FAILED_SHOWN) io.out(`  … and ${report.failedRows.length - FAILED_SHOWN} more (--json lists every row)`);
  }
  if (report.missingRows.length > 0) io.out(`Missing: rows ${rowRanges(report.missingRows)}`);
  for (const index of plan.shards?.missing ?? []) {
    const rows = report.missingRows.filter((row) => inShard(row, { index, count: plan.shards!.count }));
    io.out(`No manifest of shard ${index}/${plan.shards!.count}: its ${rows.length === 1 ? `row ${rows[0]} is` : `rows ${rowRanges(rows)} are`} missing`);
  }
  if (report.inFlightRows.length > 0) io.out(`In flight when their shard stopped (the service may have charged for them): rows ${rowRanges(report.inFlightRows)}`);
  if (report.duplicatedRows.length > 0) {
    io.out(`Done more than once: rows ${rowRanges(report.duplicatedRows.map((row) => row.row))}; do the shards overlap?`);
  }
  io.out('Manifests:');
  for (const manifest of report.manifests) {
    const parts = [`${manifest.done} done`, `${manifest.failed} failed`];
    if (manifest.inFlight) parts.push(`${manifest.inFlight} in flight`);
    parts.push(`${manifest.rateLimited} 429s`);
    io.out(`  ${printable(manifest.path, 500)}: ${parts.join(', ')}`);
  }
  if (report.unmatchedRecords > 0) {
    io.warn(
      plan.recorded
        ? `${count(report.unmatchedRecords, 'manifest record')} match no row of ${name}: records of an earlier run with other settings, or rows edited since`
        : `${count(report.unmatchedRecords, 'manifest record')} match no row of ${name}: rows edited since, or shards run with other flags; give status the --output-template and scene flags the shards used`,
    );
  }
}
