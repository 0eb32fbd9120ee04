// `aerial export <dir>`: mirrors the account's whole history to disk through
// the temporary URLs of the list endpoint. Files are named by image id and
// written atomically; a file already there (a whole JPEG) is kept, so an
// interrupted export resumes. A URL that has expired (past its two hours, or
// refused with 403) is refreshed by listing again.
import { setMaxListeners } from 'node:events';
import { lstat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ApiError, CliError, ExitCode, InterruptedError, UsageError } from '../api/errors.js';
import type { GenAerialClient } from '../api/client.js';
import { walkPages } from '../api/pages.js';
import type { ImageRecord } from '../api/schema.js';
import { URL_LIFETIME_MS } from '../api/spec.js';
import type { Context } from '../context.js';
import { formatDuration } from '../duration.js';
import { MESSAGE_MAX, printable } from '../printable.js';
import { fitName, MAX_NAME_BYTES, nameTag, safeNamePart, separateNames, utf8Length } from '../file-names.js';
import { INDEX_NAME, removeStaleIndexTemps, writeIndex } from './export-index.js';
import { isCompleteJpeg, removeStaleParts } from './files.js';
import { parseCount } from '../flags.js';
import { parseProgressInterval, parseRetryDelay } from './options.js';
import { createProgress, type Progress, type ProgressCounts } from './progress.js';
import { decide, describeFailure, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { PauseGate, runPool } from './runner.js';
import { batchExitCode } from './summary.js';

/** A URL this close to expiry is refreshed first: a download started just before the deadline could be cut off. */
const EXPIRY_MARGIN_MS = 5 * 60 * 1000;
const PAGE_SIZE = 50;
/** Re-listings one image may cause before it is given up (a URL refused right after refreshing is not an expiry). */
const MAX_REFRESHES_PER_IMAGE = 2;

export interface ExportOptions {
  concurrency?: string;
  maxRetries?: string;
  retryDelay?: string;
  pageSize?: string;
  progressInterval?: string;
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
  record: ImageRecord;
  /** When the list response carrying this URL was requested (the 2 hours count from then). */
  listedAt: number;
}

/**
 * File name of an image: `<id>.jpg` when the id is a safe name that fits;
 * otherwise the id made safe, cut to fit and tagged with a hash of the id, so
 * that `<id>.jpg` never holds another id's image (a re-run trusts what it finds).
 * Ids are the service's; they are not trusted as paths.
 */
export function imageFileName(id: string): string {
  const safe = safeNamePart(id);
  return safe === id && utf8Length(`${id}.jpg`) <= MAX_NAME_BYTES ? `${id}.jpg` : taggedFileName(id, 0);
}

function taggedFileName(id: string, attempt: number): string {
  return fitName(safeNamePart(id), '.jpg', nameTag(id, attempt));
}

/** Every id's file name; ids whose names are one file where case does not count (macOS, Windows) are all tagged. */
export function imageFileNames(ids: Iterable<string>): Map<string, string> {
  return separateNames([...ids], imageFileName, taggedFileName, () => false);
}

/**
 * Every record of every page, walked with the retry rules (src/api/pages.ts
 * decides when the walk ends), into `into`: a walk that stops early leaves
 * there what it had listed. Ids seen twice (history shifting) are kept once.
 */
async function listEverything(
  client: GenAerialClient,
  pageSize: number,
  withRetries: <T>(what: string, fn: () => Promise<T>) => Promise<T>,
  signal: AbortSignal,
  into = new Map<string, Listed>(),
): Promise<Map<string, Listed>> {
  let listedAt = 0;
  const fetchPage = (page: number) => {
    listedAt = Date.now();
    // Oldest first: images created while the walk is under way land on later pages instead of shifting earlier ones.
    return withRetries(`list page ${page}`, () => client.list({ page, size: pageSize, sort: ['createdAt,asc'] }, { signal }));
  };
  for await (const { fresh } of walkPages(fetchPage)) for (const record of fresh) into.set(record.id, { record, listedAt });
  return into;
}

export async function runExport(ctx: Context, dirArg: string, options: ExportOptions): Promise<void> {
  const { io } = ctx;
  const concurrency = parseCount(options.concurrency, '--concurrency', 1, 256, 4);
  const pageSize = parseCount(options.pageSize, '--page-size', 1, 1000, PAGE_SIZE);
  // Downloads are GETs of stored images: retrying them never charges, so "unsafe" retries are fine here.
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxRetries: parseCount(options.maxRetries, '--max-retries', 0, 100, DEFAULT_RETRY_POLICY.maxRetries),
    baseDelayMs: parseRetryDelay(options.retryDelay),
    retryUnsafe: true,
  };
  const progressIntervalMs = parseProgressInterval(options.progressInterval);
  if (dirArg.trim() === '') throw new UsageError('export needs a directory to write into');
  const dir = resolve(dirArg);
  // Made if missing, and a file created there and removed: a read-only or full disk stops the export before it starts.
  const { checkOutputDirectory } = await import('../jpeg-file.js');
  await checkOutputDirectory(dir, INDEX_NAME, 'export');
  const indexPath = join(dir, INDEX_NAME);
  // Whatever stands where the index goes must be the index: found now, not after the downloads.
  const indexInfo = await lstat(indexPath).catch(() => undefined);
  if (indexInfo && !indexInfo.isFile()) throw new UsageError(`export: ${indexPath} is not a regular file; move it out of the way`);

  // Each download in flight listens for Ctrl-C on the one shared signal (request, stream pipeline, sleeps).
  setMaxListeners(concurrency * 4 + 10, ctx.signal);
  const client = await ctx.client({ connections: concurrency, maxRateLimitRetries: 0 });
  const gate = new PauseGate();
  const withRetries = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    for (let retry = 0; ; retry++) {
      await gate.wait(ctx.signal);
      try {
        return await fn();
      } catch (error) {
        if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
        const decision = decide(error, 'request', retry, policy);
        if (decision.action !== 'retry') throw decision.error;
        io.debug(`${what}: retrying in ${formatDuration(decision.delayMs)}`);
        if (decision.pauseAll) gate.pause(decision.delayMs);
        else await sleepFor(decision.delayMs, ctx.signal);
      }
    }
  };

  /** Rewrites the index from what is on disk; the way out when listing or downloading stops with an error. */
  const indexWhatIsThere = async (listing: Map<string, Listed>): Promise<void> => {
    const names = imageFileNames(listing.keys());
    const whole = new Set<string>();
    await runPool([...listing.keys()], 32, async (id) => {
      if ((await isCompleteJpeg(join(dir, names.get(id)!))).ok) whole.add(id);
    }, () => false);
    await writeIndex(indexPath, dir, listing, (id) => whole.has(id), (id) => names.get(id)!).catch((error: Error) => {
      io.warn(`${INDEX_NAME} could not be rewritten: ${error.message}`);
    });
  };

  const spinner = await io.spinner('Listing your images…');
  const listing = new Map<string, Listed>();
  try {
    await listEverything(client, pageSize, withRetries, ctx.signal, listing);
  } catch (error) {
    spinner.stop();
    // A walk the server will not let end (or any other failure) keeps the images already here indexed.
    if (!ctx.signal.aborted) await indexWhatIsThere(listing);
    throw error;
  }
  spinner.stop();

  // Ids that would share a file (made safe, cut, or differing only in case) are told apart by a hash.
  const names = imageFileNames(listing.keys());
  const fileOf = (id: string): string => join(dir, names.get(id)!);

  const outcomes = new Map<string, ExportOutcome>();
  await runPool([...listing.keys()], 32, async (id) => {
    const file = fileOf(id);
    const onDisk = await isCompleteJpeg(file);
    if (onDisk.ok) outcomes.set(id, { id, status: 'done', file, bytes: onDisk.bytes, previously: true, attempts: 0 });
  }, () => false);
  const pending = [...listing.keys()].filter((id) => !outcomes.has(id));
  await removeStaleParts(pending.map(fileOf));
  await removeStaleIndexTemps(dir);

  const previously = outcomes.size;
  if (previously > 0) io.info(`${previously} of ${listing.size} images already in ${dirArg}`);
  const refresher = new UrlRefresher(() => listEverything(client, pageSize, withRetries, ctx.signal), listing);

  let interrupted = false;
  const started = Date.now();
  if (pending.length > 0) {
    const progress = await createProgress(io, { intervalMs: progressIntervalMs, noun: 'images' });
    ctx.onCleanup(() => progress.stop());
    const counts: ProgressCounts = { total: pending.length, done: 0, failed: 0, retrying: 0 };
    const { writeJpegAtomically } = await import('../jpeg-file.js');
    io.info(`Downloading ${pending.length} image${pending.length > 1 ? 's' : ''} to ${dirArg} with concurrency ${concurrency}…`);
    let inFlight = 0;
    // The first signal starts no new download and lets those under way finish and be indexed.
    ctx.finishInFlightOnStop({ count: () => inFlight, noun: 'download', notice: (message) => progress.log(message) });
    const download = async (id: string): Promise<void> => {
      const file = fileOf(id);
      inFlight++;
      let outcome: ExportOutcome;
      try {
        outcome = await downloadOne(id, file, { client, refresher, gate, policy, progress, counts, signal: ctx.signal, stopSignal: ctx.stopSignal, write: writeJpegAtomically });
      } finally {
        inFlight--;
      }
      outcomes.set(id, outcome);
      if (outcome.status === 'done') counts.done++;
      else if (outcome.status === 'failed') counts.failed++;
      progress.update(counts);
    };
    let failure: unknown;
    try {
      progress.update(counts);
      await runPool(pending, concurrency, download, () => ctx.stopSignal.aborted);
      interrupted = ctx.stopSignal.aborted;
    } catch (error) {
      if (ctx.signal.aborted) interrupted = true;
      else failure = error;
    } finally {
      progress.stop();
    }
    if (failure !== undefined) {
      // A re-listing that failed (its paging, its key): what did download stays indexed.
      await indexWhatIsThere(listing);
      throw failure;
    }
  }

  // The index lists what is on disk: this run's listing plus earlier records of images
  // since deleted from the account (a backup keeps them). Rewritten whole, atomically.
  const indexed = await writeIndex(indexPath, dir, listing, (id) => outcomes.get(id)?.status === 'done', (id) => names.get(id)!);

  const all = [...outcomes.values()];
  const failed = all.filter((o) => o.status === 'failed');
  const gone = all.filter((o) => o.status === 'skipped');
  const downloaded = all.filter((o) => o.status === 'done' && !o.previously).length;
  if (io.json) {
    io.outJson({
      total: listing.size,
      succeeded: all.filter((o) => o.status === 'done').length,
      failed: failed.length,
      skipped: gone.length,
      downloaded,
      existing: previously,
      directory: dir,
      index: indexPath,
      indexed,
      rows: [...listing.keys()].map((id) => outcomes.get(id) ?? { id, status: 'skipped', file: fileOf(id), attempts: 0, error: 'not started: interrupted' }),
    });
  } else {
    const line = `${downloaded} downloaded, ${previously} already there${gone.length ? `, ${gone.length} deleted meanwhile` : ''}${failed.length ? `, ${failed.length} failed` : ''} — ${indexed} images in ${INDEX_NAME} (${formatDuration(Date.now() - started, 100)})`;
    if (failed.length === 0 && !interrupted) io.success(line);
    else {
      io.info(`${io.style.yellow('!')} ${line}`);
      for (const f of failed.slice(0, 20)) io.info(`  ${printable(f.id, 80)}: ${printable(f.error ?? 'failed', MESSAGE_MAX)}`);
    }
  }
  if (interrupted) throw new InterruptedError();
  // Images deleted between listing and download are not failures: there is nothing left to back up.
  const exitCode = batchExitCode(failed.map((o) => ({ row: 0, status: 'failed', attempts: o.attempts, exitCode: o.exitCode })));
  if (exitCode !== ExitCode.Ok) {
    throw new CliError(`${failed.length} of ${listing.size} images could not be downloaded; run the same command again to retry them`, exitCode as CliError['exitCode'], 'ExportIncomplete');
  }
}

async function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  const { sleep } = await import('../api/client.js');
  await sleep(ms, signal);
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

interface DownloadDeps {
  client: GenAerialClient;
  refresher: UrlRefresher;
  gate: PauseGate;
  policy: RetryPolicy;
  progress: Progress;
  counts: ProgressCounts;
  signal: AbortSignal;
  /** Once aborted, no new request (a retry, a re-listing) is started. */
  stopSignal: AbortSignal;
  write: typeof import('../jpeg-file.js').writeJpegAtomically;
}

const NOT_FINISHED: Omit<ExportOutcome, 'id' | 'file' | 'attempts'> = { status: 'skipped', error: 'not finished: interrupted' };

async function downloadOne(id: string, file: string, deps: DownloadDeps): Promise<ExportOutcome> {
  const { refresher, signal, stopSignal } = deps;
  let refreshes = 0;
  let attempts = 0;
  for (let retry = 0; ; ) {
    await deps.gate.wait(stopSignal).catch(() => {});
    if (signal.aborted) throw signal.reason;
    if (stopSignal.aborted) return { id, file, attempts, ...NOT_FINISHED };
    let listed = refresher.current(id);
    if (listed && refresher.expired(listed)) {
      await refresher.refresh(refresher.version);
      listed = refresher.current(id);
    }
    if (!listed) return { id, status: 'skipped', file, attempts, error: 'deleted from the account since the listing' };
    const version = refresher.version;
    attempts++;
    try {
      const image = await deps.client.fetchImage(listed.record.url, { signal });
      // Written as served: an export is a copy of the stored image, byte for byte.
      const written = await deps.write(image.body, file, { force: true, signal, expectedLength: image.contentLength });
      return { id, status: 'done', file, bytes: written.bytes, attempts };
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      // 403 (and 401/404/410) from a signed URL: expired or revoked; a fresh listing says which.
      const status = error instanceof ApiError ? error.status : undefined;
      if (status !== undefined && [401, 403, 404, 410].includes(status) && refreshes < MAX_REFRESHES_PER_IMAGE) {
        refreshes++;
        await refresher.refresh(version);
        continue;
      }
      const decision = status === 403 || status === 401 ? { action: 'fail' as const, error: error as CliError } : decide(error, 'response', retry, deps.policy);
      if (decision.action === 'retry') {
        retry++;
        deps.counts.retrying++;
        deps.progress.update(deps.counts);
        try {
          if (decision.pauseAll) deps.gate.pause(decision.delayMs);
          else await sleepFor(decision.delayMs, stopSignal).catch(() => {});
        } finally {
          deps.counts.retrying--;
        }
        continue;
      }
      const reason = describeFailure(decision.error, attempts);
      deps.progress.log(`image ${id} failed: ${reason}`);
      return { id, status: 'failed', file, attempts, error: reason, exitCode: decision.error.exitCode };
    }
  }
}
