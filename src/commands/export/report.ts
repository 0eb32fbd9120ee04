// The report of an export (index.html, its thumbnails in index.thumbnails/)
// and its GeoJSON, both made from the index on disk, a record at a time: at
// the end of an export, or later with `aerial export --report-only <dir>`
// (after `--no-report`, or to make them again).
import { lstat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Context } from '../../cli/context.js';
import { formatDuration } from '../../input/duration.js';
import { UsageError } from '../../lifecycle/errors.js';
import { redactValue } from '../../text/secrets.js';
import { takeExportLock } from './lock.js';
import { GEOJSON_NAME, INDEX_NAME, readIndexRecords, REPORT_NAME, removeStaleIndexTemps } from './index-file.js';

/** The export options that only a download uses: --report-only refuses them rather than pass over them. */
const DOWNLOAD_OPTIONS = [
  ['concurrency', '--concurrency'],
  ['maxRetries', '--max-retries'],
  ['retryDelay', '--retry-delay'],
  ['pageSize', '--page-size'],
  ['progressInterval', '--progress-interval'],
] as const;

/**
 * `aerial export --report-only <dir>`: the report and the GeoJSON of the
 * export in `dir`, from its index alone. Nothing is sent (no key is needed);
 * the export's lock is taken, so an export under way into `dir` is not
 * reported half-way (refused, or waited for with --wait-for-lock).
 */
export async function runReportOnly(
  ctx: Context,
  dirArg: string,
  options: { report?: boolean; metadata?: boolean; waitForLock?: boolean } & Partial<Record<(typeof DOWNLOAD_OPTIONS)[number][0], string>>,
): Promise<void> {
  const { io } = ctx;
  if (options.report === false) throw new UsageError('--report-only makes the report that --no-report leaves out; give one of them, not both');
  for (const [key, flag] of DOWNLOAD_OPTIONS) {
    if (options[key] !== undefined) throw new UsageError(`--report-only makes the report from the index alone and downloads nothing; it cannot be combined with ${flag}`);
  }
  if (options.metadata === false) throw new UsageError('--report-only makes the report from the index alone and downloads nothing; it cannot be combined with --no-metadata');
  if (dirArg.trim() === '') throw new UsageError('export --report-only needs the directory of an export');
  const dir = resolve(dirArg);
  const indexPath = join(dir, INDEX_NAME);
  const index = await lstat(indexPath).catch(() => undefined);
  if (!index?.isFile()) {
    throw new UsageError(`--report-only: ${dirArg} holds no ${INDEX_NAME} (${index ? 'something else stands in its place' : 'no export was made into it'}); run aerial export ${dirArg} first`, 'NoExportIndex');
  }
  for (const name of [REPORT_NAME, GEOJSON_NAME]) {
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info && !info.isFile()) throw new UsageError(`export --report-only: ${join(dir, name)} is not a regular file; move it out of the way`);
  }
  const started = Date.now();
  await takeExportLock(ctx, dir, `aerial export --report-only ${dirArg}`, Boolean(options.waitForLock));
  await removeStaleIndexTemps(dir);
  const made = await writeExportReport(ctx, dir, indexPath);
  if (io.json) {
    io.outJson({ directory: dir, index: indexPath, report: join(dir, REPORT_NAME), geojson: join(dir, GEOJSON_NAME), images: made.images, thumbnails: { made: made.made, reused: made.reused, failed: made.failed } });
    return;
  }
  io.success(`${REPORT_NAME} and ${GEOJSON_NAME} of ${made.images} image${made.images === 1 ? '' : 's'} in ${dirArg}: ${made.made} thumbnails made, ${made.reused} reused (${formatDuration(Date.now() - started, 100)})`);
}

/** What was made: how many images the report shows, and its thumbnails' tally. */
export interface ExportReport {
  images: number;
  made: number;
  reused: number;
  failed: number;
}

/** Writes index.geojson and index.html in `dir` from `indexPath`; warns of images without a thumbnail. */
export async function writeExportReport(ctx: Context, dir: string, indexPath: string): Promise<ExportReport> {
  const { io } = ctx;
  const { exportReportImage } = await import('../../report/export-images.js');
  let images = 0;
  const indexImages = async function* () {
    images = 0;
    for await (const record of readIndexRecords(indexPath)) {
      const image = exportReportImage(dir, record);
      images++;
      yield { ...redactValue(image, io.redact), file: image.file };
    }
  };
  const { writeGeoJsonStream } = await import('../../report/geojson.js');
  await writeGeoJsonStream(indexImages(), join(dir, GEOJSON_NAME));
  const { describeThumbnails } = await import('../../report/outputs.js');
  const { writeReportStream } = await import('../../report/report.js');
  const written = await writeReportStream(indexImages, join(dir, REPORT_NAME), { title: 'aerial export', subtitle: dir, signal: ctx.stopSignal });
  io.debug(`report: ${written.path}: ${written.thumbnails.made} thumbnails made, ${written.thumbnails.reused} reused`);
  if (written.thumbnails.failed.length > 0) io.warn(`${REPORT_NAME}${describeThumbnails(written)}`);
  return { images, made: written.thumbnails.made, reused: written.thumbnails.reused, failed: written.thumbnails.failed.length };
}
