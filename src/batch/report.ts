// What a batch prints: the --dry-run listing and the closing summary (human;
// --json output is assembled by the caller).
import { relative } from 'node:path';
import { UsageError } from '../errors.js';
import type { Context } from '../context.js';
import { formatDuration } from '../duration.js';
import { MESSAGE_MAX, printable } from '../printable.js';
import type { BatchPlan } from './plan.js';
import type { BatchSummary } from './summary.js';

export function displayPath(path: string): string {
  const fromCwd = relative(process.cwd(), path);
  return fromCwd && !fromCwd.startsWith('..') ? fromCwd : path;
}

export function printDryRun(ctx: Context, plan: BatchPlan, shardNote: string): void {
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
      if (row.error) io.out(`${io.style.red('invalid')}  ${printable(row.error, MESSAGE_MAX)}`);
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

export function printSummary(ctx: Context, summary: BatchSummary, elapsedMs: number, manifestPath: string, shardNote: string): void {
  const { io } = ctx;
  const previously = summary.rows.filter((r) => r.previously).length;
  const generated = summary.succeeded - previously;
  const parts = [`${generated} generated`];
  if (previously) parts.push(`${previously} already done`);
  const line = `${summary.succeeded} of ${summary.total} rows done (${parts.join(', ')})${shardNote} in ${formatDuration(elapsedMs, 100)}`;
  if (summary.failed === 0 && summary.skipped === 0) {
    io.success(line);
  } else {
    io.info(`${io.style.yellow('!')} ${line}; ${summary.failed} failed, ${summary.skipped} skipped`);
    const failed = summary.rows.filter((r) => r.status === 'failed');
    // A row's reason can quote a cell or a webhook's errorMessage.
    for (const row of failed.slice(0, 20)) io.info(`  row ${row.row} failed: ${printable(row.error ?? '', MESSAGE_MAX)}`);
    if (failed.length > 20) io.info(`  … and ${failed.length - 20} more failed (--json lists every row)`);
    const skipped = summary.rows.filter((r) => r.status === 'skipped');
    if (skipped.length > 0) io.info(`  ${skipped.length} row${skipped.length > 1 ? 's' : ''} ${printable(skipped[0]!.error ?? 'skipped', MESSAGE_MAX)}`);
  }
  io.info(io.style.dim(`Manifest: ${displayPath(manifestPath)}`));
}
