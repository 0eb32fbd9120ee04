// `aerial export <dir>`: mirrors the account's whole history to disk through
// the temporary URLs of the list endpoint. The history is listed oldest first
// and each page's images are downloaded as it arrives, a few at a time (the
// walk waits while enough are queued), so the URLs are minutes old when used
// and the memory used does not grow with the history: what the export keeps
// of each image is on disk (the image itself, its record in the listing
// spool, spool.ts, its state in the ledger, ledger.ts, and its name's hash,
// names.ts). Files are named
// by image id and written atomically; a file already there (a whole JPEG) is
// kept, so an interrupted export resumes. A URL that has expired (past its two
// hours, or refused with 403) is refreshed by listing again.
import { setMaxListeners } from 'node:events';
import { lstat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CliError, ExitCode, InterruptedError, UsageError } from '../../lifecycle/errors.js';
import type { GenAerialClient } from '../../api/client.js';
import { persistentPolicy, PERSISTENT_RETRIES } from '../../api/retry.js';
import { walkPages } from '../../api/pages.js';
import { capYoungGeneration } from '../../lifecycle/young-generation.js';
import type { ImageRecord } from '../../api/schema.js';
import type { Context } from '../../cli/context.js';
import { formatDuration } from '../../input/duration.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';
import { redactValue } from '../../text/secrets.js';
import { takeExportLock } from './lock.js';
import { GEOJSON_NAME, INDEX_NAME, REPORT_NAME, removeStaleIndexTemps, StalePartFiles, writeIndex } from './index-file.js';
import { thumbnailDirFor, ThumbnailsAhead } from '../../report/thumbnails.js';
import { isCompleteJpeg } from '../../bulk/files.js';
import { parseCount } from '../../input/flags.js';
import { parseProgressInterval, parseRetryDelay } from '../shared/batch-options.js';
import { createProgress, type ProgressCounts } from '../../bulk/progress.js';
import { batchExitCode } from '../../bulk/summary.js';
import { DownloadQueue, downloadOne, UrlRefresher, type Listed, type SaveImage } from './downloads.js';
import { ExportNames } from './names.js';
import { ExportLedger, Saved } from './ledger.js';
import { ListingSpool, SPOOL_NAME } from './spool.js';

/** Listings the end-of-export check makes at most before it says it could not confirm the export whole. */
export const MAX_CHECK_LISTINGS = 3;

export interface ExportOptions {
  concurrency?: string;
  maxRetries?: string;
  retryDelay?: string;
  pageSize?: string;
  progressInterval?: string;
  /** --wait-for-lock: wait for another export into the directory to end rather than refuse. */
  waitForLock?: boolean;
  /** false with --no-metadata. */
  metadata?: boolean;
  /** false with --no-report: no index.html, thumbnails or index.geojson. */
  report?: boolean;
}

/**
 * The page sizes a walk asks for: --page-size as given, else large pages
 * (src/api/pages.ts), and once a walk has been granted a size, that size for
 * the walks after it (a service that refuses a size need not refuse it again).
 */
class PageSizes {
  constructor(private sizes: readonly number[] | undefined) {}
  get asked(): readonly number[] | undefined {
    return this.sizes;
  }
  granted(size: number): void {
    if (size > 0) this.sizes = [size];
  }
}

/** An image queued for download: its number in the ledger and its file. */
interface Job {
  id: string;
  ordinal: number;
  file: string;
}

/** What one walk of the history found. */
interface Walked {
  /** Images it listed that the directory lacked (queued for download). */
  missing: number;
  /** Stopped by the first signal before its last page. */
  stopped: boolean;
}

export async function runExport(ctx: Context, dirArg: string, options: ExportOptions): Promise<void> {
  const { io } = ctx;
  const concurrency = parseCount(options.concurrency, '--concurrency', 1, 256, 4);
  // Without --page-size, the walk asks for large pages and follows what the service grants.
  const pageSize = options.pageSize === undefined ? undefined : parseCount(options.pageSize, '--page-size', 1, 1000, 1000);
  const sizes = new PageSizes(pageSize === undefined ? undefined : [pageSize]);
  // Lists and downloads of stored images: repeating them never charges (retry.ts knows), so retryUnsafe changes nothing.
  const policy = persistentPolicy({
    maxRetries: parseCount(options.maxRetries, '--max-retries', 0, 100, PERSISTENT_RETRIES.maxRetries),
    firstDelayMs: parseRetryDelay(options.retryDelay),
    retryUnsafe: false,
  });
  const progressIntervalMs = parseProgressInterval(options.progressInterval);
  if (dirArg.trim() === '') throw new UsageError('export needs a directory to write into');
  const dir = resolve(dirArg);
  // Made if missing, and a file created there and removed: a read-only or full disk stops the export before it starts.
  const { checkOutputDirectory } = await import('../../files/jpeg-file.js');
  await checkOutputDirectory(dir, INDEX_NAME, 'export');
  // One export into a directory at a time: another would sweep this one's downloads as a dead run's temp files.
  await takeExportLock(ctx, dir, `aerial export ${dirArg}`, Boolean(options.waitForLock));
  const indexPath = join(dir, INDEX_NAME);
  // Whatever stands where the index, the report and the GeoJSON go must be them: found now, not after the downloads.
  for (const name of [INDEX_NAME, REPORT_NAME, GEOJSON_NAME]) {
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info && !info.isFile()) throw new UsageError(`export: ${join(dir, name)} is not a regular file; move it out of the way`);
  }
  // Safe under the lock: no other export is writing into this directory.
  const spool = await ListingSpool.create(join(dir, SPOOL_NAME));
  ctx.onCleanup(() => spool.remove());
  const staleParts = await StalePartFiles.find(dir);
  await removeStaleIndexTemps(dir);

  // --no-report: the index and the images only (the report can be made later with --report-only).
  const report = options.report !== false;
  const thumbnailsAhead = report ? new ThumbnailsAhead(dir, thumbnailDirFor(join(dir, REPORT_NAME))) : undefined;
  ctx.stopSignal.addEventListener('abort', () => thumbnailsAhead?.stop(), { once: true });

  const ledger = ExportLedger.create(dir);
  ctx.onCleanup(() => ledger.remove());
  const names = ExportNames.create(dir, io.redact);
  ctx.onCleanup(() => names.remove());

  /** The index lines of the images on disk, from the spool; `onDisk` says which (the ledger, or the disk itself). */
  const indexLines = async function* (onDisk: (ordinal: number, line: string) => Promise<boolean>) {
    let ordinal = 0;
    for await (const line of spool.read()) if (await onDisk(ordinal++, line)) yield line;
  };
  const saved = async (ordinal: number) => ledger.isSaved(ordinal);
  const wholeOnDisk = async (_ordinal: number, line: string) => {
    const { file } = JSON.parse(line) as { file: string };
    return (await isCompleteJpeg(join(dir, file))).ok;
  };

  /**
   * Rewrites index.jsonl with the images on disk, then, at the end of an
   * export that ran its course, from the same records the report (index.html,
   * thumbnails in index.thumbnails/) and index.geojson. An export interrupted
   * or stopped by an error leaves them as the last whole export wrote them:
   * making thumbnails can take a while, and a signal asks for an end.
   */
  const writeIndexes = async (report: boolean): Promise<number> => {
    // The thumbnails made during the downloads are all in before the report looks for them.
    await thumbnailsAhead?.drain();
    const count = await writeIndex(indexPath, dir, indexLines(saved), (id) => ledger.has(id), (file) => names.taken(file), io.redact);
    if (!report) return count;
    const { writeExportReport } = await import('./report.js');
    await writeExportReport(ctx, dir, indexPath);
    return count;
  };

  /** Rewrites the index from what is on disk; the way out when listing or downloading stops with an error. */
  const indexWhatIsThere = async (): Promise<void> => {
    await writeIndex(indexPath, dir, indexLines(wholeOnDisk), (id) => ledger.has(id), (file) => names.taken(file), io.redact).catch((error: Error) => {
      io.warn(`${INDEX_NAME} could not be rewritten: ${error.message}`);
    });
  };

  // Each download in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
  setMaxListeners(concurrency * 4 + 10, ctx.signal);
  const client = await ctx.client({ connections: concurrency, retry: policy });

  // The images queued or being downloaded, with the listing their URL came from: a few pages' worth.
  const waiting = new Map<string, Listed>();
  const refresher = new UrlRefresher((wanted) => relist(client, sizes, wanted, ctx.signal), waiting);

  const progress = await createProgress(io, { intervalMs: progressIntervalMs, noun: 'images' });
  ctx.onCleanup(() => progress.stop());
  const counts: ProgressCounts = { total: 0, done: 0, failed: 0, retrying: 0 };
  const { JpegFileDestination, saveImage } = await import('../../files/jpeg-file.js');
  const metadata = options.metadata === false ? undefined : await import('../../files/image-metadata.js');
  const { VERSION } = await import('../../build-outputs/version.js');
  // The same GPS EXIF and AI-generated note as `aerial generate` writes, from what the listing says of the image.
  const editorFor = (record: ImageRecord) => {
    const scene = metadata?.sceneOfRecord(record);
    if (!metadata || !scene) return undefined;
    const created = Date.parse(record.createdAt);
    return metadata.createMetadataSplicer({
      request: scene,
      software: `aerial ${VERSION}`,
      createdAt: Number.isNaN(created) ? null : new Date(created),
      redact: io.redact,
    });
  };
  const save: SaveImage = (file, record, transfer) => saveImage(new JpegFileDestination(file, { force: true, editor: editorFor(record) }), transfer);

  const queue = new DownloadQueue<Job>(concurrency, async ({ id, ordinal, file }) => {
    try {
      // The first signal starts no new download: those not begun keep no outcome.
      if (ctx.stopSignal.aborted) return;
      const outcome = await downloadOne(id, file, { client, refresher, progress, counts, signal: ctx.signal, stopSignal: ctx.stopSignal, save });
      if (outcome.status === 'done') {
        ledger.set(ordinal, Saved.Downloaded, outcome.attempts, outcome.bytes);
        counts.done++;
        // Its thumbnail now, on a core the downloads leave idle, rather than after every download.
        await thumbnailsAhead?.push(file);
      } else if (outcome.status === 'failed') {
        ledger.set(ordinal, Saved.Failed, outcome.attempts, 0, { id, error: outcome.error ?? 'failed', exitCode: outcome.exitCode, attempts: outcome.attempts });
        counts.failed++;
      } else ledger.set(ordinal, outcome.notFinished ? Saved.NotFinished : Saved.Deleted, outcome.attempts);
      progress.update(counts);
    } finally {
      waiting.delete(id);
    }
  });
  // The first signal starts no new download and lets those under way finish and be indexed.
  ctx.stopSignal.addEventListener('abort', () => queue.stop(), { once: true });
  ctx.finishInFlightOnStop({ count: () => queue.active, noun: 'download', notice: (message) => progress.log(message) });

  /**
   * One walk of the history (1 the listing, 2… the check's): the images each
   * page brings are numbered and named when first listed (their record goes
   * to the spool), looked for on disk, and queued for download when the
   * directory lacks them. The walk waits while a page's worth is queued.
   */
  // A long run's steady allocation would grow V8's young generation to its largest (lifecycle/young-generation.ts).
  const holdYoungGeneration = capYoungGeneration();
  const walkHistory = async (walk: number, signal: AbortSignal): Promise<Walked> => {
    let listedAt = 0;
    const fetchPage = (page: number, size: number) => {
      listedAt = Date.now();
      // Oldest first: images created while the walk is under way land on later pages instead of shifting earlier ones.
      return client.list({ page, size, sort: ['createdAt,asc'] }, { signal });
    };
    let missing = 0;
    for await (const { index, page, fresh } of walkPages(fetchPage, { sizes: sizes.asked })) {
      if (index === 0) sizes.granted(page.size);
      if (index === 0 && walk === 1) {
        ledger.reserve(page.totalElements);
        names.reserve(page.totalElements);
      }
      holdYoungGeneration();
      const met: Array<{ record: ImageRecord; ordinal: number }> = [];
      const firstListed: ImageRecord[] = [];
      for (const record of fresh) {
        const { ordinal, first, again } = ledger.meet(record.id, walk);
        // A page repeating images this walk already listed, further back than the walk remembers.
        if (again) continue;
        if (first) firstListed.push(record);
        met.push({ record, ordinal });
      }
      names.name(firstListed.map((record) => record.id));
      for (const record of firstListed) await spool.append(JSON.stringify(redactValue({ ...record, file: names.of(record.id) } as Record<string, unknown>, io.redact)));
      for (const { record, ordinal } of met) {
        const name = names.of(record.id);
        const file = join(dir, name);
        const onDisk = await isCompleteJpeg(file);
        if (onDisk.ok) {
          ledger.found(ordinal, onDisk.bytes);
          await thumbnailsAhead?.push(file);
          continue;
        }
        missing++;
        await staleParts.removeFor(name);
        waiting.set(record.id, { record, listedAt });
        queue.push({ id: record.id, ordinal, file });
        counts.total++;
      }
      progress.update(counts);
      if (ctx.stopSignal.aborted || queue.failure !== undefined) return { missing, stopped: ctx.stopSignal.aborted };
      await queue.roomFor(Math.max(page.size, concurrency));
      if (ctx.stopSignal.aborted || queue.failure !== undefined) return { missing, stopped: ctx.stopSignal.aborted };
    }
    return { missing, stopped: false };
  };

  /** A walk and the downloads it queued, to their end; a failure of either is thrown once what did download is indexed. */
  const walkAndDownload = async (walk: number, signal: AbortSignal): Promise<Walked> => {
    let walked: Walked | undefined;
    let failure: unknown;
    try {
      walked = await walkHistory(walk, signal);
    } catch (error) {
      failure = error;
    }
    // What was queued before a walk failed is still fetched: those images were listed.
    await queue.drain();
    failure ??= queue.failure;
    const stopped = ctx.stopSignal.aborted || ctx.signal.aborted;
    if (failure !== undefined && !stopped) {
      progress.stop();
      // The thumbnails under way are finished, not cut off half-written as the process ends.
      thumbnailsAhead?.stop();
      await thumbnailsAhead?.drain();
      await indexWhatIsThere();
      throw failure;
    }
    return { missing: walked?.missing ?? 0, stopped: stopped || (walked?.stopped ?? true) };
  };

  const started = Date.now();
  let interrupted = (await walkAndDownload(1, ctx.signal)).stopped;
  const existing = ledger.tally()[Saved.Existing];
  if (existing > 0) io.info(`${existing} of ${ledger.size} images already in ${dirArg}`);

  // The check: the history is listed again and whatever that listing shows and the directory lacks is
  // fetched. A walk while images are deleted passes over some (the pages shift under it); a walk is shown
  // to have missed nothing by the next one still listing every image it listed (a walk can only skip
  // an image when one it has already listed is deleted meanwhile). So it goes on until a listing is
  // confirmed that way, at most MAX_CHECK_LISTINGS times.
  let checkListings = 0;
  let missed = 0;
  let confirmed = false;
  while (!interrupted && ledger.failures.size === 0 && checkListings < MAX_CHECK_LISTINGS) {
    if (ctx.stopSignal.aborted) {
      interrupted = true;
      break;
    }
    checkListings++;
    const walk = checkListings + 1;
    const { missing, stopped } = await walkAndDownload(walk, AbortSignal.any([ctx.signal, ctx.stopSignal]));
    if (stopped) {
      interrupted = true;
      break;
    }
    const vanished = ledger.vanishedSince(walk);
    io.debug(`check listing ${checkListings}: ${missing} not saved, ${vanished ? 'some images of the previous listing deleted since' : 'every image of the previous listing still there'}`);
    if (missing > 0) {
      missed += missing;
      io.info(`The check listing found ${missing} image${missing > 1 ? 's' : ''} not saved (added meanwhile, or passed over as the history changed) and fetched them`);
    }
    if (!vanished) {
      confirmed = true;
      break;
    }
  }

  progress.stop();
  // The index lists what is on disk: every image listed during this export plus earlier records
  // of images since deleted from the account (a backup keeps them). Rewritten whole, atomically.
  const indexed = await writeIndexes(report && !interrupted);

  const tally = ledger.tally();
  const failed = [...ledger.failures.values()];
  const gone = tally[Saved.Deleted] + tally[Saved.NotFinished];
  const downloaded = tally[Saved.Downloaded];
  const unconfirmed = !interrupted && failed.length === 0 && !confirmed;
  if (io.json) {
    // The rows from the spool, a record at a time, written as stdout takes them.
    const rows = async function* () {
      let ordinal = 0;
      for await (const line of spool.read()) yield JSON.stringify(redactValue(summaryRow(JSON.parse(line) as { id: string; file: string }, ordinal++), io.redact));
    };
    const summaryRow = ({ id, file: name }: { id: string; file: string }, ordinal: number) => {
      const file = join(dir, name);
      const attempts = ledger.attempts(ordinal);
      switch (ledger.state(ordinal)) {
        case Saved.Existing:
          return { id, status: 'done', file, bytes: ledger.bytes(ordinal), previously: true, attempts: 0 };
        case Saved.Downloaded:
          return { id, status: 'done', file, bytes: ledger.bytes(ordinal), attempts };
        case Saved.Failed: {
          const failure = ledger.failures.get(ordinal);
          return { id, status: 'failed', file, attempts, error: failure?.error, exitCode: failure?.exitCode };
        }
        case Saved.Deleted:
          return { id, status: 'skipped', file, attempts, error: 'deleted from the account since the listing' };
        case Saved.NotFinished:
          return { id, file, attempts, status: 'skipped', error: 'not finished: interrupted' };
        default:
          return { id, status: 'skipped', file, attempts: 0, error: 'not started: interrupted' };
      }
    };
    await io.outJsonStream(
      {
        total: ledger.size,
        succeeded: tally[Saved.Downloaded] + tally[Saved.Existing],
        failed: failed.length,
        skipped: gone,
        downloaded,
        existing: tally[Saved.Existing],
        directory: dir,
        index: indexPath,
        // None written with --no-report.
        report: report ? join(dir, REPORT_NAME) : null,
        geojson: report ? join(dir, GEOJSON_NAME) : null,
        indexed,
        check: { listings: checkListings, missed, confirmed },
      },
      'rows',
      rows(),
    );
  } else {
    const found = missed ? `, ${missed} found by the check` : '';
    const line = `${downloaded} downloaded, ${tally[Saved.Existing]} already there${found}${gone ? `, ${gone} deleted meanwhile` : ''}${failed.length ? `, ${failed.length} failed` : ''} — ${indexed} images in ${INDEX_NAME} (${formatDuration(Date.now() - started, 100)})`;
    if (failed.length === 0 && !interrupted && !unconfirmed) io.success(line);
    else {
      io.info(`${io.style.yellow('!')} ${line}`);
      for (const f of failed.slice(0, 20)) io.info(`  ${printable(io.redact(f.id), 80)}: ${printable(io.redact(f.error), MESSAGE_MAX)}`);
    }
  }
  await spool.remove();
  ledger.remove();
  names.remove();
  if (interrupted) throw new InterruptedError();
  // Images deleted between listing and download are not failures: there is nothing left to back up.
  const exitCode = batchExitCode(failed.map((o) => ({ row: 0, status: 'failed', attempts: o.attempts, exitCode: o.exitCode })));
  if (exitCode !== ExitCode.Ok) {
    const ids = failed.slice(0, 3).map((f) => printable(f.id, 60)).join(', ');
    throw new CliError(
      `${failed.length} of ${ledger.size} images could not be downloaded (${ids}${failed.length > 3 ? ', …' : ''}); run the same command again to retry them`,
      exitCode as CliError['exitCode'],
      'ExportIncomplete',
    );
  }
  if (unconfirmed) {
    throw new CliError(
      `images were deleted while each of ${checkListings + 1} listings was walked, so one passed over by a shifting page cannot be ruled out (every image the last listing showed is saved); run the same command again once the history is quieter`,
      ExitCode.Server,
      'ExportUnconfirmed',
    );
  }
}

/**
 * Every page again (src/api/pages.ts decides when the walk ends), keeping the
 * records of the images in `wanted` only: fresh URLs for the downloads that
 * wait, and, by their absence, which of them were deleted meanwhile.
 */
async function relist(client: GenAerialClient, sizes: PageSizes, wanted: ReadonlySet<string>, signal: AbortSignal): Promise<Map<string, Listed>> {
  const found = new Map<string, Listed>();
  let listedAt = 0;
  const fetchPage = (page: number, size: number) => {
    listedAt = Date.now();
    return client.list({ page, size, sort: ['createdAt,asc'] }, { signal });
  };
  for await (const { index, page, fresh } of walkPages(fetchPage, { sizes: sizes.asked })) {
    if (index === 0) sizes.granted(page.size);
    for (const record of fresh) if (wanted.has(record.id)) found.set(record.id, { record, listedAt });
    if (found.size === wanted.size) break;
  }
  return found;
}
