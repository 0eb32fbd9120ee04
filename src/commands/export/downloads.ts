// The downloads of `aerial export`: a queue that runs a few at a time while
// the listing goes on (the walk waits when enough are queued), each image
// saved through the image path with its metadata, and fresh URLs for the
// images whose URL expired or was refused.
import { ImageUrlRefusedError } from '../../api/errors.js';
import { asCliError, CliError, ExitCode } from '../../lifecycle/errors.js';
import type { GenAerialClient } from '../../api/client.js';
import type { ImageSink, ReceivedImage } from '../../api/image-download.js';
import { NotRetriedError, type RetryHooks } from '../../api/retry.js';
import type { ImageRecord } from '../../api/schema.js';
import { URL_LIFETIME_MS } from '../../api/spec.js';
import type { WrittenJpeg } from '../../files/jpeg-file.js';
import type { Progress, ProgressCounts } from '../../bulk/progress.js';
import { describeFailure } from '../../bulk/summary.js';

/** A URL this close to expiry is refreshed first: a download started just before the deadline could be cut off. */
const EXPIRY_MARGIN_MS = 5 * 60 * 1000;
/** Re-listings one image may cause before it is given up (a URL refused right after refreshing is not an expiry). */
const MAX_REFRESHES_PER_IMAGE = 2;

export interface Listed {
  readonly record: ImageRecord;
  /** When the list response carrying this URL was requested (the 2 hours count from then). */
  listedAt: number;
}

export interface ExportOutcome {
  id: string;
  status: 'done' | 'failed' | 'skipped';
  file: string;
  bytes?: number;
  attempts: number;
  error?: string;
  exitCode?: number;
  /** Stopped by a signal before it ended. */
  notFinished?: boolean;
}

/**
 * `work` for each item pushed, `concurrency` at a time, in the order pushed.
 * The walk that pushes waits (until()) while enough items wait to start: the
 * images between the listing and their download are a few pages, not the
 * history. Once stopped (a first signal, or a job that threw), no further
 * item starts; those waiting are dropped. The first error a job throws is
 * kept in `failure`.
 */
export class DownloadQueue<T> {
  private waiting: T[] = [];
  private head = 0;
  private running = 0;
  private stopped = false;
  failure: unknown;
  private wakeups: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly work: (item: T) => Promise<void>,
  ) {}

  /** Items waiting to start. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /** Items under way. */
  get active(): number {
    return this.running;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  push(item: T): void {
    if (this.stopped) return;
    this.waiting.push(item);
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.waiting = [];
    this.head = 0;
    this.wake();
  }

  /** Resolves once `condition` holds, checked whenever an item ends or the queue stops. */
  async until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => this.wakeups.push(resolve));
  }

  /** Resolves once no more than `count` items wait to start (or the queue stopped). */
  roomFor(count: number): Promise<void> {
    return this.until(() => this.stopped || this.queued <= count);
  }

  /** Resolves once every item has ended (those dropped by a stop do not count). */
  drain(): Promise<void> {
    return this.until(() => this.running === 0 && this.queued === 0);
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.head < this.waiting.length) {
      const item = this.waiting[this.head++]!;
      // Started items leave the array now and then, so it holds only those waiting.
      if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      this.running++;
      this.work(item)
        .catch((error: unknown) => {
          if (this.failure === undefined) this.failure = error;
          this.stop();
        })
        .finally(() => {
          this.running--;
          this.pump();
          this.wake();
        });
    }
  }

  private wake(): void {
    const wakeups = this.wakeups;
    this.wakeups = [];
    for (const wake of wakeups) wake();
  }
}

/**
 * Fresh URLs for the images waiting for their download (`listing`: only
 * those, a few pages' worth), by listing everything again and keeping the
 * records of those images. Concurrent downloads that find their URL expired
 * share one re-listing rather than each walking every page.
 */
export class UrlRefresher {
  private inFlight?: Promise<void>;
  private generation = 0;

  constructor(
    /** The fresh records of the images in `wanted` that the history still holds. */
    private readonly relist: (wanted: ReadonlySet<string>) => Promise<Map<string, Listed>>,
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
        // The images waiting when the re-listing starts: one queued while it runs was listed fresh.
        const wanted = new Set(this.listing.keys());
        const fresh = await this.relist(wanted);
        for (const id of wanted) {
          const listed = fresh.get(id);
          if (!listed) this.listing.delete(id);
          else if (this.listing.has(id)) this.listing.set(id, listed);
        }
        this.generation++;
      } finally {
        this.inFlight = undefined;
      }
    })();
    await this.inFlight;
  }
}

/** Saves the image of `record` into `file`, atomically, as served with its metadata added (jpeg-file.ts). */
export type SaveImage = (file: string, record: ImageRecord, transfer: (sink: ImageSink) => Promise<ReceivedImage>) => Promise<WrittenJpeg>;

export interface DownloadDeps {
  client: GenAerialClient;
  refresher: UrlRefresher;
  progress: Progress;
  counts: ProgressCounts;
  signal: AbortSignal;
  /** Once aborted, no new request (a retry, a re-listing) is started. */
  stopSignal: AbortSignal;
  save: SaveImage;
}

const NOT_FINISHED: Omit<ExportOutcome, 'id' | 'file' | 'attempts'> = { status: 'skipped', error: 'not finished: interrupted', notFinished: true };

/**
 * Downloads one image into `file`. The client retries the download under
 * export's policy; a URL refused as expired or revoked is refreshed by
 * listing again (shared with the other downloads) and tried once more.
 */
export async function downloadOne(id: string, file: string, deps: DownloadDeps): Promise<ExportOutcome> {
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
      progress.log(`image ${id} failed: ${reason}`, { inSummary: true });
      return { id, status: 'failed', file, attempts, error: reason, exitCode: failure.exitCode };
    }
  }
}
