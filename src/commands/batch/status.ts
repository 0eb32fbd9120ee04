// `aerial batch status <file>`: one account of a batch whose shards ran on
// many machines. The batch file is planned with the flags the shards used (so
// every row has the key its shard recorded), the manifests are read one line
// at a time, and the rows are matched to them (batch/shard-account.ts).
import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { CliError, UsageError } from '../../process/errors.js';
import type { Context } from '../../cli/context.js';
import type { BatchRowState } from './report-images.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';
import { buildGenerationRequest, type SceneInput } from '../../input/scene-request.js';
import { DEFAULT_TEMPLATE, surveyOrRefuseEmpty } from './run.js';
import { BatchInput } from '../../batch/input.js';
import { manifestRecords } from '../../batch/manifest.js';
import { defaultManifestPath, plannedRows, RowPlanner, type PlannedRow } from '../../batch/plan.js';
import { displayPath } from '../../files/file-names.js';
import { ManifestSet, rowRanges, statusExitCode, StatusTally, type BatchStatusReport, type RowState } from '../../batch/shard-account.js';
import { compileTemplate } from '../../batch/template.js';

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

export async function runBatchStatus(ctx: Context, path: string, options: BatchStatusOptions): Promise<void> {
  const { io } = ctx;
  const cwd = process.cwd();
  const template = compileTemplate(options.outputTemplate ?? DEFAULT_TEMPLATE);
  const sceneDefaults = ctx.settings().sceneDefaults;
  buildGenerationRequest({ ...options.scene, lat: 0, lng: 0 }, sceneDefaults);
  const outputs = options.report === undefined && options.geojson === undefined ? undefined : await import('../../report/outputs.js');
  const reportPath = options.report === undefined ? undefined : await outputs!.checkOutputFile(options.report, '--report');
  const geojsonPath = options.geojson === undefined ? undefined : await outputs!.checkOutputFile(options.geojson, '--geojson');
  const manifestPaths = await findManifests(options.manifest, defaultManifestPath(template, cwd));

  const manifests = new ManifestSet();
  for (const manifestPath of manifestPaths) {
    const summary = await manifests.add(displayPath(manifestPath), manifestRecords(manifestPath));
    if (summary.records === 0) io.warn(`${summary.path} holds no manifest record`);
  }

  // Every row of every shard, planned as the shards planned theirs (names that clash told apart alike).
  const input = await BatchInput.open(path, { format: options.format, delimiter: options.delimiter, stdin: io.stdin });
  ctx.onCleanup(() => input.close());
  const planner = new RowPlanner({ path: input.path, header: input.header, flags: options.scene, sceneDefaults, template, cwd });
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

  if (io.json) io.outJson({ file: path, ...report });
  else printStatus(ctx, path, report);
  // Written whether or not the batch is complete: a report of what is missing is when it helps most.
  if (shown) {
    const { writeBatchOutputs } = await import('./report-images.js');
    const written = await writeBatchOutputs(shown.rows, shown.states, {
      report: reportPath,
      geojson: geojsonPath,
      title: `aerial batch ${basename(path)}`,
      subtitle: `${path === '-' ? 'standard input' : displayPath(resolve(path))}: all shards, ${report.manifests.length} manifest${report.manifests.length === 1 ? '' : 's'}`,
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

function printStatus(ctx: Context, path: string, report: BatchStatusReport): void {
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
      `${count(report.unmatchedRecords, 'manifest record')} match no row of ${name}: rows edited since, or shards run with other flags; give status the --output-template and scene flags the shards used`,
    );
  }
}
