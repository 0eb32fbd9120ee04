// What a batch prints: the --dry-run listing and the closing summary, human
// or --json. Both are written as they are read, row by row, so a batch of any
// length prints whole through a pipe of any speed.
import { displayPath } from '../../files/file-names.js';
import type { WireStats } from '../../api/wire-limiter.js';
import { ExitCode, UsageError } from '../../lifecycle/errors.js';
import type { Context } from '../../cli/context.js';
import { formatDuration } from '../../input/duration.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';
import type { OutcomeCounts, OutcomeLog } from '../../batch/outcomes.js';
import type { PlannedRow } from '../../batch/plan.js';

export interface DryRunCounts {
  total: number;
  valid: number;
  credits: number;
}

/** Prints the plan of the shard's rows, which `rows` yields in order; `counts` are of the same rows. */
export async function printDryRun(ctx: Context, rows: AsyncIterable<PlannedRow>, counts: DryRunCounts, manifestPath: string, shardNote: string): Promise<void> {
  const { io } = ctx;
  const invalid = counts.total - counts.valid;
  if (io.json) {
    const head = { total: counts.total, valid: counts.valid, invalid, credits: counts.credits, priceTable: 'sandbox', manifest: manifestPath };
    await io.outJsonStream(head, 'rows', jsonRows(rows));
  } else {
    let chunk = '';
    for await (const row of rows) {
      if (row.error) chunk += `${io.style.red('invalid')}  ${printable(row.error, MESSAGE_MAX)}\n`;
      else chunk += `${io.style.green('ok')}       row ${row.row}: ${row.request!.resolution} ${row.request!.coordinates.lat},${row.request!.coordinates.lng} → ${displayPath(row.target!)} (${row.credits} credit${row.credits === 1 ? '' : 's'})\n`;
      if (chunk.length >= 16 * 1024) {
        if (!(await io.outPart(chunk))) return;
        chunk = '';
      }
    }
    await io.outPart(chunk);
    io.info(
      `${counts.valid} valid, ${invalid} invalid${shardNote}; would cost ${counts.credits} credit${counts.credits === 1 ? '' : 's'} at the sandbox's prices (HD 1, FHD 2, UHD 4; the service does not publish its prices). Nothing was sent.`,
    );
  }
  if (invalid > 0) {
    throw new UsageError(`${invalid} invalid row${invalid > 1 ? 's' : ''} (listed above); nothing was sent`);
  }
}

async function* jsonRows(rows: AsyncIterable<PlannedRow>): AsyncGenerator<string> {
  for await (const row of rows) {
    yield JSON.stringify(row.error ? { row: row.row, valid: false, error: row.error } : { row: row.row, valid: true, file: row.target, credits: row.credits, request: row.request });
  }
}

export interface RunSummary {
  counts: OutcomeCounts;
  outcomes: OutcomeLog;
  elapsedMs: number;
  manifestPath: string;
  shardNote: string;
  /** What the requests met on the wire; none when nothing was sent. */
  wire?: WireStats;
}

/** The figures of the requests a run sent: how many, how fast, how many were refused with 429. */
export function requestFigures(summary: Pick<RunSummary, 'wire' | 'elapsedMs'>): { requests: number; rateLimited: number; seconds: number; requestsPerSecond: number } {
  const requests = summary.wire?.requests ?? 0;
  const seconds = Math.round(summary.elapsedMs) / 1000;
  return { requests, rateLimited: summary.wire?.rateLimited ?? 0, seconds, requestsPerSecond: seconds > 0 ? Math.round((requests / seconds) * 10) / 10 : 0 };
}

/** The --json summary: the counts, then every row's outcome in row order. */
export async function printJsonSummary(ctx: Context, summary: RunSummary): Promise<void> {
  const { total, succeeded, failed, skipped } = summary.counts;
  const head = { total, succeeded, failed, skipped, manifest: summary.manifestPath, ...requestFigures(summary) };
  await ctx.io.outJsonStream(head, 'rows', summary.outcomes.lines());
}

/**
 * A failed row as the summary lists it: "row 3 failed: <why>", or, for a row
 * the plan found invalid (its error already names it: "line 4 (row 3): …"),
 * "line 4 (row 3) is invalid: <why>", the row named once.
 */
export function failureLine(row: { row: number; error?: string; exitCode?: number; attempts: number }): string {
  const error = row.error ?? '';
  const named = new RegExp(`^((?:line \\d+ \\()?row ${row.row}\\)?): `).exec(error);
  if (named && row.attempts === 0 && row.exitCode === ExitCode.Usage) return `${named[1]} is invalid: ${printable(error.slice(named[0].length), MESSAGE_MAX)}`;
  return `row ${row.row} failed: ${printable(named ? error.slice(named[0].length) : error, MESSAGE_MAX)}`;
}

export function printSummary(ctx: Context, summary: RunSummary): void {
  const { io } = ctx;
  const { total, succeeded, failed, skipped, previously } = summary.counts;
  const generated = succeeded - previously;
  const parts = [`${generated} generated`];
  if (previously) parts.push(`${previously} already done`);
  const figures = requestFigures(summary);
  const sent = figures.requests > 0 ? `; ${figures.requests} request${figures.requests === 1 ? '' : 's'} at ${figures.requestsPerSecond}/s` : '';
  const refused = figures.rateLimited > 0 ? `, ${figures.rateLimited} rate limited (429)` : '';
  const line = `${succeeded} of ${total} rows done (${parts.join(', ')})${summary.shardNote} in ${formatDuration(summary.elapsedMs, 100)}${sent}${refused}`;
  if (failed === 0 && skipped === 0) {
    io.success(line);
  } else {
    io.info(`${io.style.yellow('!')} ${line}; ${failed} failed, ${skipped} skipped`);
    // A row's reason can quote a cell or a webhook's errorMessage.
    let shown = 0;
    for (const row of summary.outcomes.outcomes('failed')) {
      if (shown++ === 20) break;
      io.info(`  ${failureLine(row)}`);
    }
    if (failed > 20) io.info(`  … and ${failed - 20} more failed (--json lists every row)`);
    if (skipped > 0) {
      const first = summary.outcomes.outcomes('skipped').next().value;
      io.info(`  ${skipped} row${skipped > 1 ? 's' : ''} ${printable(first?.error ?? 'skipped', MESSAGE_MAX)}`);
    }
  }
  io.info(io.style.dim(`Manifest: ${displayPath(summary.manifestPath)}`));
}
