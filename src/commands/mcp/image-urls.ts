// The temporary URLs of the history's images that this server has seen
// listed (list_images, resources/list, the lookup after a generation), so
// that an image read as a resource is fetched at once while its URL lives,
// however far back in the history the assistant found it. The v1 interface
// has no lookup by id: without one of these, a read looks through the newest
// images only. Bounded: the oldest seen are forgotten first.
import { URL_LIFETIME_MS } from '../../api/spec.js';

/** How many images are remembered (a few MB at most). */
const REMEMBERED = 10_000;
/** A URL is not used this close to its end: the download itself takes time. */
const MARGIN_MS = 5 * 60_000;

export class SeenImageUrls {
  private readonly seen = new Map<string, { url: string; listedAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records listed just now, each by its id. */
  remember(records: ReadonlyArray<{ id: string; url: string }>): void {
    const listedAt = this.now();
    for (const { id, url } of records) {
      this.seen.delete(id);
      this.seen.set(id, { url, listedAt });
    }
    for (const id of this.seen.keys()) {
      if (this.seen.size <= REMEMBERED) break;
      this.seen.delete(id);
    }
  }

  /** The URL of `id` while it can still be used, else undefined. */
  urlOf(id: string): string | undefined {
    const entry = this.seen.get(id);
    if (!entry) return undefined;
    if (this.now() - entry.listedAt < URL_LIFETIME_MS - MARGIN_MS) return entry.url;
    this.seen.delete(id);
    return undefined;
  }

  forget(id: string): void {
    this.seen.delete(id);
  }
}
