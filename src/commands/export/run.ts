// `aerial export <dir>`: mirrors the account's whole history to disk through
// the temporary URLs of the list endpoint. Files are named by image id and
// written atomically; a file already there (a whole JPEG) is kept, so an
// interrupted export resumes. A URL that has expired (past its two hours, or
// refused with 403) is refreshed by listing again.
import { setMaxListeners } from 'node:events';
import { lstat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ImageUrlRefusedError } from '../../api/errors.js';
import { asCliError, CliError, ExitCode, InterruptedError, UsageError } from '../../process/errors.js';
import type { GenAerialClient } from '../../api/client.js';
import type { ImageSink, ReceivedImage } from '../../api/image-download.js';
import { NotRetriedError, PERSISTENT_RETRIES, persistentPolicy, type RetryHooks } from '../../api/retry.js';
import { walkPages } from '../../api/pages.js';
import type { ImageRecord } from '../../api/schema.js';
import { URL_LIFETIME_MS } from '../../api/spec.js';
import type { Context } from '../../cli/context.js';
import type { WrittenJpeg } from '../../files/jpeg-file.js';
import { formatDuration } from '../../input/duration.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';
import { fitName, MAX_NAME_BYTES, nameTag, safeNamePart, separateNames, utf8Length } from '../../files/file-names.js';
import { GEOJSON_NAME, INDEX_NAME, readIndexRecords, REPORT_NAME, removeStaleIndexTemps, writeIndex } from './index-file.js';
import { isCompleteJpeg, removeStaleParts } from '../../batch/files.js';
import { parseCount } from '../../input/flags.js';
import { parseProgressInterval, parseRetryDelay } from '../shared/batch-options.js';
import { createProgress, type Progress, type ProgressCounts } from '../../batch/progress.js';
import { describeFailure } from '../../batch/row-runner.js';
import type { Redact } from '../../text/secrets.js';
import { batchExitCode } from '../../batch/summary.js';

/** A URL this close to expiry is refreshed first: a download started just before the deadline could be cut off. */
const EXPIRY_MARGIN_MS = 5 * 60 * 1000;
/** Re-listings one image may cause before it is given up (a URL refused right after refreshing is not an expiry). */
const MAX_REFRESHES_PER_IMAGE = 2;
/** Files looked at on disk at once (whether an image is already there, whole). */
const DISK_CHECKS = 32;

/** `work` for each of `items`, `limit` at a time: a promise per task under way, not one per item (a history of 100,000). */
async function eachAtOnce<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

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
}

export interface ExportOutcome {
  id: string;
  status: 'done' | 'failed' | 'skipped';
  file: string;
  bytes?: number;
  /** Already on disk from an earlier export. */
  previously?: boolean;
  attempts: number;
  error?: string;
  exitCode?: number;
}

interface Listed {
  readonly record: ImageRecord;
  /** When the list response carrying this URL was requested (the 2 hours count from then). */
  listedAt: number;
}

/**
 * A listed record held as its JSON text, parsed again when it is used (a
 * download, the index): one flat string of a few hundred bytes rather than an
 * object of a dozen properties, for every image of the history.
 */
class ListedRecord implements Listed {
  private readonly json: string;
  constructor(record: ImageRecord, readonly listedAt: number) {
    this.json = JSON.stringify(record);
  }
  get record(): ImageRecord {
    return JSON.parse(this.json) as ImageRecord;
  }
}

/**
 * File name of an image: `<id>.jpg` when the id is a safe name that fits;
 * otherwise the id made safe, cut to fit and tagged with a hash of the id, so
 * that `<id>.jpg` never holds another id's image (a re-run trusts what it finds).
 * Ids are the service's; they are not trusted as paths, and an id that holds
 * a secret is named redacted (secrets.ts), told apart by its hash.
 */
export function imageFileName(id: string, redact: Redact = (text) => text): string {
  const safe = safeNamePart(id);
  return safe === id && redact(id) === id && utf8Length(`${id}.jpg`) <= MAX_NAME_BYTES ? `${id}.jpg` : taggedFileName(id, 0, redact);
}

function taggedFileName(id: string, attempt: number, redact: Redact = (text) => text): string {
  return fitName(safeNamePart(redact(id)), '.jpg', nameTag(id, attempt));
}

/**
 * Every id's file name; ids whose names are one file where case does not count
 * (macOS, Windows) are all tagged, except an id that already has a name
 * (`named`): it keeps it, and the others are the ones tagged. An id holding a
 * secret is named redacted (`redact`), told apart by its hash.
 */
export function imageFileNames(
  ids: Iterable<string>,
  named: (id: string) => string | undefined = () => undefined,
  redact: Redact = (text) => text,
): Map<string, string> {
  return separateNames(
    [...ids],
    (id) => named(id) ?? imageFileName(id, redact),
    (id, attempt) => taggedFileName(id, attempt, redact),
    (id) => named(id) !== undefined,
  );
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

/**
 * Every record of every page (src/api/pages.ts decides when the walk ends;
 * the client retries each page under export's policy), into `into`: a walk
 * that stops early leaves there what it had listed. Ids seen twice (history
 * shifting) are kept once.
 */
async function listEverything(client: GenAerialClient, sizes: PageSizes, signal: AbortSignal, into = new Map<string, Listed>()): Promise<Map<string, Listed>> {
  let listedAt = 0;
  const fetchPage = (page: number, size: number) => {
    listedAt = Date.now();
    // Oldest first: images created while the walk is under way land on later pages instead of shifting earlier ones.
    return client.list({ page, size, sort: ['createdAt,asc'] }, { signal });
  };
  for await (const { index, page, fresh } of walkPages(fetchPage, { sizes: sizes.asked })) {
    if (index === 0) sizes.granted(page.size);
    for (const record of fresh) into.set(record.id, new ListedRecord(record, listedAt));
  }
  return into;
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
  const { EXPORT_LOCK_NAME, takeRunLock } = await import('../../batch/run-lock.js');
  const lock = await takeRunLock({
    path: join(dir, EXPORT_LOCK_NAME),
    command: `aerial export ${dirArg}`,
    other: 'another export into this directory',
    wait: Boolean(options.waitForLock),
    signal: ctx.signal,
    display: (path) => path,
    onWait: (message) => io.info(message),
  });
  ctx.onCleanup(() => lock.release());
  const indexPath = join(dir, INDEX_NAME);
  // Whatever stands where the index, the report and the GeoJSON go must be them: found now, not after the downloads.
  for (const name of [INDEX_NAME, REPORT_NAME, GEOJSON_NAME]) {
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info && !info.isFile()) throw new UsageError(`export: ${join(dir, name)} is not a regular file; move it out of the way`);
  }

  /**
   * Rewrites index.jsonl with the images on disk, then, at the end of an
   * export that ran its course, from the same records the report (index.html,
   * thumbnails in index.thumbnails/) and index.geojson. An export interrupted
   * or stopped by an error leaves them as the last whole export wrote them:
   * making thumbnails can take a while, and a signal asks for an end.
   */
  const writeIndexes = async (listing: Map<string, Listed>, done: (id: string) => boolean, names: Map<string, string>, report: boolean): Promise<number> => {
    const count = await writeIndex(indexPath, dir, listing, done, (id) => names.get(id)!, io.redact);
    if (!report) return count;
    // Both read back from the index just written, a record at a time, rather than from records held in memory.
    const { exportReportImage } = await import('../../report/export-images.js');
    const { redactValue } = await import('../../text/secrets.js');
    const indexImages = async function* () {
      for await (const record of readIndexRecords(indexPath)) {
        const image = exportReportImage(dir, record);
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
    return count;
  };

  // Each download in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
  setMaxListeners(concurrency * 4 + 10, ctx.signal);
  const client = await ctx.client({ connections: concurrency, retry: policy });

  // Every record listed during this export, the latest of each: what the index is written from (an
  // image downloaded and then deleted from the account stays backed up, and indexed).
  const known = new Map<string, Listed>();
  const remember = (walk: Map<string, Listed>): Map<string, Listed> => {
    for (const [id, listed] of walk) known.set(id, listed);
    nameNewIds();
    return walk;
  };
  // Names are given as ids are first listed and kept for the run; an id listed later that would
  // share a file with one already named (made safe, cut, differing only in case) is the one tagged.
  const names = new Map<string, string>();
  const nameNewIds = (): void => {
    const fresh = [...known.keys()].filter((id) => !names.has(id));
    if (fresh.length === 0) return;
    const separated = imageFileNames([...names.keys(), ...fresh], (id) => names.get(id), io.redact);
    for (const id of fresh) names.set(id, separated.get(id)!);
  };
  const fileOf = (id: string): string => join(dir, names.get(id)!);

  /** Rewrites the index from what is on disk; the way out when listing or downloading stops with an error. */
  const indexWhatIsThere = async (listing: Map<string, Listed>): Promise<void> => {
    const fileNames = imageFileNames(listing.keys(), (id) => names.get(id), io.redact);
    const whole = new Set<string>();
    await eachAtOnce([...listing.keys()], DISK_CHECKS, async (id) => {
      if ((await isCompleteJpeg(join(dir, fileNames.get(id)!))).ok) whole.add(id);
    });
    await writeIndex(indexPath, dir, listing, (id) => whole.has(id), (id) => fileNames.get(id)!, io.redact).catch((error: Error) => {
      io.warn(`${INDEX_NAME} could not be rewritten: ${error.message}`);
    });
  };

  const spinner = await io.spinner('Listing your images…');
  const listing = new Map<string, Listed>();
  try {
    await listEverything(client, sizes, ctx.signal, listing);
  } catch (error) {
    spinner.stop();
    // A walk the server will not let end (or any other failure) keeps the images already here indexed.
    if (!ctx.signal.aborted) await indexWhatIsThere(remember(listing));
    throw error;
  }
  spinner.stop();
  remember(listing);
  // The first walk's images, before any re-listing for expired URLs changes `listing`: the check proves this walk.
  const firstWalk = new Set(listing.keys());

  const outcomes = new Map<string, ExportOutcome>();
  /** Looks on disk for the images of `ids` not yet looked at: a whole file there is kept. */
  const lookOnDisk = (ids: string[]): Promise<unknown> =>
    eachAtOnce(ids, DISK_CHECKS, async (id) => {
      const file = fileOf(id);
      const onDisk = await isCompleteJpeg(file);
      if (onDisk.ok) outcomes.set(id, { id, status: 'done', file, bytes: onDisk.bytes, previously: true, attempts: 0 });
    });
  await lookOnDisk([...listing.keys()]);
  const pending = [...listing.keys()].filter((id) => !outcomes.has(id));
  // Safe under the lock: no other export is writing into this directory.
  await removeStaleParts(pending.map(fileOf));
  await removeStaleIndexTemps(dir);

  const previously = outcomes.size;
  if (previously > 0) io.info(`${previously} of ${listing.size} images already in ${dirArg}`);
  const refresher = new UrlRefresher(async () => remember(await listEverything(client, sizes, ctx.signal)), listing);

  let interrupted = false;
  const started = Date.now();
  let progress: Progress | undefined;
  const counts: ProgressCounts = { total: 0, done: 0, failed: 0, retrying: 0 };
  let inFlight = 0;
  /** Downloads `ids` (none of them on disk); says whether the first signal stopped it. A failure of the run itself is thrown, after indexing what is there. */
  const downloadAll = async (ids: string[]): Promise<boolean> => {
    const bar = await createProgress(io, { intervalMs: progressIntervalMs, noun: 'images' });
    if (!progress) {
      ctx.onCleanup(() => progress?.stop());
      // The first signal starts no new download and lets those under way finish and be indexed.
      ctx.finishInFlightOnStop({ count: () => inFlight, noun: 'download', notice: (message) => (progress ?? bar).log(message) });
    }
    progress = bar;
    Object.assign(counts, { total: ids.length, done: 0, failed: 0, retrying: 0 });
    const { JpegFileDestination, saveImage } = await import('../../files/jpeg-file.js');
    const metadata = options.metadata === false ? undefined : await import('../../files/image-metadata.js');
    const { VERSION } = await import('../../bundle/version.js');
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
    const download = async (id: string): Promise<void> => {
      const file = fileOf(id);
      inFlight++;
      let outcome: ExportOutcome;
      try {
        outcome = await downloadOne(id, file, { client, refresher, progress: bar, counts, signal: ctx.signal, stopSignal: ctx.stopSignal, save });
      } finally {
        inFlight--;
      }
      outcomes.set(id, outcome);
      if (outcome.status === 'done') counts.done++;
      else if (outcome.status === 'failed') counts.failed++;
      bar.update(counts);
    };
    let failure: unknown;
    let stopped = false;
    try {
      bar.update(counts);
      // `concurrency` workers taking the next id in turn: a promise per download under way, not one per image.
      let next = 0;
      const errors: unknown[] = [];
      const worker = async (): Promise<void> => {
        while (next < ids.length) {
          const id = ids[next++]!;
          // The first signal starts no new download: those not begun are left out of the outcomes.
          if (ctx.stopSignal.aborted) continue;
          try {
            await download(id);
          } catch (error) {
            errors.push(error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
      if (errors.length > 0) throw errors[0];
      stopped = ctx.stopSignal.aborted;
    } catch (error) {
      if (ctx.signal.aborted) stopped = true;
      else failure = error;
    } finally {
      bar.stop();
    }
    if (failure !== undefined) {
      // A re-listing that failed (its paging, its key): what did download stays indexed.
      await indexWhatIsThere(known);
      throw failure;
    }
    return stopped;
  };

  if (pending.length > 0) {
    io.info(`Downloading ${pending.length} image${pending.length > 1 ? 's' : ''} to ${dirArg} with concurrency ${concurrency}…`);
    interrupted = await downloadAll(pending);
  }

  // The check: the history is listed again and whatever that listing shows and the directory lacks is
  // fetched. A walk while images are deleted passes over some (the pages shift under it); a walk is shown
  // to have missed nothing by the next one still listing every image it listed (a walk can only skip
  // an image when one it has already listed is deleted meanwhile). So it goes on until a listing is
  // confirmed that way, at most MAX_CHECK_LISTINGS times.
  let checkListings = 0;
  let missed = 0;
  let confirmed = false;
  let previousWalk = firstWalk;
  const failedSoFar = () => [...outcomes.values()].some((o) => o.status === 'failed');
  while (!interrupted && !failedSoFar() && checkListings < MAX_CHECK_LISTINGS) {
    if (ctx.stopSignal.aborted) {
      interrupted = true;
      break;
    }
    checkListings++;
    let walk: Map<string, Listed>;
    try {
      walk = remember(await listEverything(client, sizes, AbortSignal.any([ctx.signal, ctx.stopSignal])));
    } catch (error) {
      if (ctx.stopSignal.aborted) {
        interrupted = true;
        break;
      }
      await indexWhatIsThere(known);
      throw error;
    }
    refresher.replace(walk);
    const unseen = [...walk.keys()].filter((id) => !outcomes.has(id));
    await lookOnDisk(unseen);
    const missing = [...walk.keys()].filter((id) => outcomes.get(id)?.status !== 'done');
    const vanished = [...previousWalk].some((id) => !walk.has(id));
    io.debug(`check listing ${checkListings}: ${walk.size} images, ${missing.length} not saved, ${vanished ? 'some images of the previous listing deleted since' : 'every image of the previous listing still there'}`);
    if (missing.length > 0) {
      missed += missing.length;
      io.info(`The check listing found ${missing.length} image${missing.length > 1 ? 's' : ''} not saved (added meanwhile, or passed over as the history changed); downloading…`);
      interrupted = await downloadAll(missing);
    }
    if (!vanished) {
      confirmed = true;
      break;
    }
    previousWalk = new Set(walk.keys());
  }

  // The index lists what is on disk: every record listed during this export plus earlier records
  // of images since deleted from the account (a backup keeps them). Rewritten whole, atomically.
  const indexed = await writeIndexes(known, (id) => outcomes.get(id)?.status === 'done', names, !interrupted);

  const all = [...outcomes.values()];
  const failed = all.filter((o) => o.status === 'failed');
  const gone = all.filter((o) => o.status === 'skipped');
  const downloaded = all.filter((o) => o.status === 'done' && !o.previously).length;
  const unconfirmed = !interrupted && failed.length === 0 && !confirmed;
  if (io.json) {
    io.outJson({
      total: known.size,
      succeeded: all.filter((o) => o.status === 'done').length,
      failed: failed.length,
      skipped: gone.length,
      downloaded,
      existing: previously,
      directory: dir,
      index: indexPath,
      report: join(dir, REPORT_NAME),
      geojson: join(dir, GEOJSON_NAME),
      indexed,
      check: { listings: checkListings, missed, confirmed },
      rows: [...known.keys()].map((id) => outcomes.get(id) ?? { id, status: 'skipped', file: fileOf(id), attempts: 0, error: 'not started: interrupted' }),
    });
  } else {
    const found = missed ? `, ${missed} found by the check` : '';
    const line = `${downloaded} downloaded, ${previously} already there${found}${gone.length ? `, ${gone.length} deleted meanwhile` : ''}${failed.length ? `, ${failed.length} failed` : ''} — ${indexed} images in ${INDEX_NAME} (${formatDuration(Date.now() - started, 100)})`;
    if (failed.length === 0 && !interrupted && !unconfirmed) io.success(line);
    else {
      io.info(`${io.style.yellow('!')} ${line}`);
      for (const f of failed.slice(0, 20)) io.info(`  ${printable(io.redact(f.id), 80)}: ${printable(io.redact(f.error ?? 'failed'), MESSAGE_MAX)}`);
    }
  }
  if (interrupted) throw new InterruptedError();
  // Images deleted between listing and download are not failures: there is nothing left to back up.
  const exitCode = batchExitCode(failed.map((o) => ({ row: 0, status: 'failed', attempts: o.attempts, exitCode: o.exitCode })));
  if (exitCode !== ExitCode.Ok) {
    const ids = failed.slice(0, 3).map((f) => printable(f.id, 60)).join(', ');
    throw new CliError(
      `${failed.length} of ${known.size} images could not be downloaded (${ids}${failed.length > 3 ? ', …' : ''}); run the same command again to retry them`,
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
 * Fresh URLs by listing everything again. Concurrent downloads that find their
 * URL expired share one re-listing rather than each walking every page.
 */
export class UrlRefresher {
  private inFlight?: Promise<void>;
  private generation = 0;

  constructor(
    private readonly relist: () => Promise<Map<string, Listed>>,
    private readonly listing: Map<string, Listed>,
    private readonly now: () => number = Date.now,
  ) {}

  current(id: string): Listed | undefined {
    return this.listing.get(id);
  }

  /** A counter that changes with every completed re-listing. */
  get version(): number {
    return this.generation;
  }

  expired(listed: Listed): boolean {
    return this.now() >= listed.listedAt + URL_LIFETIME_MS - EXPIRY_MARGIN_MS;
  }

  /** Takes a listing made elsewhere (the end-of-export check) as the fresh one. */
  replace(fresh: Map<string, Listed>): void {
    for (const id of [...this.listing.keys()]) if (!fresh.has(id)) this.listing.delete(id);
    for (const [id, listed] of fresh) this.listing.set(id, listed);
    this.generation++;
  }

  /** Re-lists unless a re-listing finished since `seenVersion` (then its URLs are already fresh). */
  async refresh(seenVersion: number): Promise<void> {
    if (this.generation !== seenVersion) return;
    this.inFlight ??= (async () => {
      try {
        const fresh = await this.relist();
        for (const id of [...this.listing.keys()]) if (!fresh.has(id)) this.listing.delete(id);
        for (const [id, listed] of fresh) this.listing.set(id, listed);
        this.generation++;
      } finally {
        this.inFlight = undefined;
      }
    })();
    await this.inFlight;
  }
}

/** Saves the image of `record` into `file`, atomically, as served with its metadata added (jpeg-file.ts). */
type SaveImage = (file: string, record: ImageRecord, transfer: (sink: ImageSink) => Promise<ReceivedImage>) => Promise<WrittenJpeg>;

interface DownloadDeps {
  client: GenAerialClient;
  refresher: UrlRefresher;
  progress: Progress;
  counts: ProgressCounts;
  signal: AbortSignal;
  /** Once aborted, no new request (a retry, a re-listing) is started. */
  stopSignal: AbortSignal;
  save: SaveImage;
}

const NOT_FINISHED: Omit<ExportOutcome, 'id' | 'file' | 'attempts'> = { status: 'skipped', error: 'not finished: interrupted' };

/**
 * Downloads one image into `file`. The client retries the download under
 * export's policy; a URL refused as expired or revoked is refreshed by
 * listing again (shared with the other downloads) and tried once more.
 */
async function downloadOne(id: string, file: string, deps: DownloadDeps): Promise<ExportOutcome> {
  const { refresher, signal, stopSignal, counts, progress } = deps;
  let attempts = 0;
  const retry: RetryHooks = {
    stopSignal,
    onAttempt: () => void attempts++,
    onRetry: () => {
      counts.retrying++;
      progress.update(counts);
      return () => void counts.retrying--;
    },
  };
  for (let refreshes = 0; ; refreshes++) {
    if (stopSignal.aborted) return { id, file, attempts, ...NOT_FINISHED };
    let listed = refresher.current(id);
    if (listed && refresher.expired(listed)) {
      await refresher.refresh(refresher.version);
      listed = refresher.current(id);
    }
    if (!listed) return { id, status: 'skipped', file, attempts, error: 'deleted from the account since the listing' };
    const version = refresher.version;
    const { record } = listed;
    const { url } = record;
    try {
      const written = await deps.save(file, record, (sink) => deps.client.downloadInto(url, sink, { signal, retry }));
      return { id, status: 'done', file, bytes: written.bytes, attempts };
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (error instanceof NotRetriedError) return { id, file, attempts, ...NOT_FINISHED };
      // Expired or revoked (past its two hours, or refused): a fresh listing says which.
      if (error instanceof ImageUrlRefusedError && refreshes < MAX_REFRESHES_PER_IMAGE) {
        await refresher.refresh(version);
        continue;
      }
      const failure = asCliError(error) ?? new CliError(String(error), ExitCode.Unexpected, 'Unexpected');
      const reason = describeFailure(failure, attempts);
      progress.log(`image ${id} failed: ${reason}`);
      return { id, status: 'failed', file, attempts, error: reason, exitCode: failure.exitCode };
    }
  }
}
