// Walking every page of the list endpoint, for `list --all`, `export` (its
// first listing and every re-listing) and the id lookups of `delete`. How many
// pages there are is the server's word; this module decides how far to
// believe it. Pages are handed on as they come: nothing here grows with the
// history, so a walk of millions of images runs in the memory of a few pages.
//
// The walk asks for large pages (the first of `sizes` the service takes; the
// spec shows no maximum) and then follows the size the service grants, as its
// first answer says. It ends normally at an empty page or at the last page the
// server announces, and stops with a PagingError when the server's pages
// cannot be true:
//   - a page brings no image that the pages just before it did not already
//     bring (the same page served again, or a page number ignored);
//   - a page contradicts itself or the walk: its number is not the one asked
//     for, it holds more images than its size, its page count is not its image
//     count divided by its size, or its size is not the one granted;
//   - the listing claims more than a walk believes (maxImages, or more pages
//     than maxPages at the granted size), or grows while it is walked by more
//     than a history gains in that time (pages that never end).
// What is guaranteed about repeats: an id is handed on once when it comes
// back within `window` ids (two pages at least) of where it was first seen (a history that shifts
// while it is walked repeats the last records of a page at the top of the
// next). An id a server repeats further apart than that is not remembered;
// the walk is still bounded by the caps above. Remembering every id would
// cost about 100 bytes an image (100 MB a million), which is what this walk
// exists not to do.
import { ApiError, BadResponseError } from './errors.js';
import type { ImageRecord, Page } from './schema.js';

export interface WalkLimits {
  /** A listing that claims more images than this is not believed: no account holds that many. */
  maxImages: number;
  /** Requests one walk may send, whatever size the service grants. */
  maxPages: number;
  /** Images a listing may gain while it is walked, beyond its first page's claim: this many at least… */
  minGrowth: number;
  /** …or this share of that claim, when more. */
  growthShare: number;
  /** Ids remembered (those of the latest pages) to tell a repeated page or a record that slid onto the next one. */
  window: number;
}

/**
 * None of these bounds memory (a walk holds a few pages whatever they say):
 * they bound the time a lying server can keep a walk going. 100 million
 * images is a hundred times the largest history measured (docs/performance.md);
 * a million requests is a million images at a page size of 1. A history
 * grows by what its owner makes while it is walked: a tenth of it, or 1,000
 * images, is far past that. 20,000 ids (a few MB) span 20 pages of 1,000.
 */
export const WALK_LIMITS: WalkLimits = { maxImages: 100_000_000, maxPages: 1_000_000, minGrowth: 1_000, growthShare: 0.1, window: 20_000 };

/** The size a walk asks for first (the spec shows no maximum; Spring Data's own default cap is 2,000), and then the spec's default when that is refused. */
export const WALK_PAGE_SIZES: readonly number[] = [1000, 100, 20];

export interface WalkOptions {
  /** Page sizes to ask for, in order: the next is tried when the service refuses the first page at one (400). Default WALK_PAGE_SIZES. */
  sizes?: readonly number[];
  limits?: WalkLimits;
}

export interface WalkedPage {
  /** The page number asked for (from 0). */
  index: number;
  page: Page;
  /** The page's records that the pages just before it did not bring, in page order. */
  fresh: ImageRecord[];
}

const UNTRUSTED = "the service's paging cannot be trusted";
const TOO_LARGE = 'the listing is too large to walk';

/** The server's paging cannot be followed to an end (untrustworthy, or past the caps); what was handed on before it stays the caller's. */
export class PagingError extends BadResponseError {
  constructor(reason: string, readonly pagesRead: number, readonly imagesRead: number) {
    super(
      `${reason}; stopped after ${pagesRead} page${pagesRead === 1 ? '' : 's'} (${imagesRead} image${imagesRead === 1 ? '' : 's'})`,
      reason.startsWith(TOO_LARGE) ? 'ListingTooLarge' : 'InconsistentPaging',
    );
  }
}

/** What makes a page impossible on its own, or undefined when it adds up. */
export function pageContradiction(page: Page, index: number): string | undefined {
  const { totalElements, totalPages, size } = page;
  const count = page.content.length;
  if (page.page !== index) return `asked for page ${index}, got page ${page.page}`;
  if (totalElements < 0 || totalPages < 0 || size < 0) return `page ${index} has a negative count`;
  if (count > size) return `page ${index} holds ${count} images but its size is ${size}`;
  if (size === 0) return totalElements === 0 ? undefined : `page ${index} has size 0 for ${totalElements} images`;
  const expected = Math.ceil(totalElements / size);
  // An empty listing may call itself one page or none (Spring Data says 0, others 1).
  if (totalPages !== expected && !(totalElements === 0 && totalPages <= 1)) {
    return `page ${index} says ${totalPages} pages of ${size} for ${totalElements} images, which is ${expected} page${expected === 1 ? '' : 's'}`;
  }
  return undefined;
}

/**
 * The latest ids seen, `limit` of them at least (and at most twice that), as
 * hashes of 63 bits (FNV-1a's 32, and 31 of Java's string hash) in
 * open-addressed tables of numbers rather than a set of the strings: a set that forgot one id as it learnt another cost a tenth of a
 * walk's time, and kept every id it held alive through the young
 * generation's collections. Two tables take turns: ids go into the current
 * one; when it holds `limit`, the older one is emptied and becomes the
 * current. An id is remembered for at least `limit` ids after it. Two ids
 * with the same hash are taken for one (a record passed over as a repeat):
 * about once in 10^9 walks of a million records at the default window.
 */
export class RecentIds {
  private current: IdTable;
  private older: IdTable;
  constructor(private readonly limit: number) {
    this.current = new IdTable(limit);
    this.older = new IdTable(limit);
  }

  /** Whether `id` is among them; it is, from now on. */
  seen(id: string): boolean {
    // Both halves of the hash in one pass over the id: FNV-1a, and the multiply-by-31 hash of Java's strings.
    let high = 0x811c9dc5;
    let low = id.length;
    for (let i = 0; i < id.length; i++) {
      const unit = id.charCodeAt(i);
      high = Math.imul(high ^ unit, 0x01000193);
      low = (Math.imul(low, 31) + unit) | 0;
    }
    // (0, 0) marks a free slot: no hash is that.
    low |= 1;
    if (this.current.has(high, low) || this.older.has(high, low)) return true;
    if (this.current.count >= this.limit) {
      const emptied = this.older;
      emptied.clear();
      this.older = this.current;
      this.current = emptied;
    }
    this.current.add(high, low);
    return false;
  }
}

/** Up to `capacity` hashes, in two 32-bit halves, probed linearly; (0, 0) marks a free slot. */
class IdTable {
  private readonly highs: Int32Array;
  private readonly lows: Int32Array;
  private readonly mask: number;
  private readonly shift: number;
  count = 0;
  constructor(capacity: number) {
    // At most half full: probes stay short.
    let bits = 4;
    while (2 ** bits < capacity * 2) bits++;
    this.highs = new Int32Array(2 ** bits);
    this.lows = new Int32Array(2 ** bits);
    this.mask = 2 ** bits - 1;
    this.shift = 32 - bits;
  }

  /** A hash's first slot: the top bits of its product with 2^32/φ, which depend on all of its bits (ids that differ in their last digit land far apart). */
  private slotOf(high: number): number {
    return Math.imul(high, 0x9e3779b1) >>> this.shift;
  }

  has(high: number, low: number): boolean {
    for (let slot = this.slotOf(high); ; slot = (slot + 1) & this.mask) {
      const h = this.highs[slot]!;
      const l = this.lows[slot]!;
      if (h === high && l === low) return true;
      if (h === 0 && l === 0) return false;
    }
  }

  add(high: number, low: number): void {
    let slot = this.slotOf(high);
    for (; ; slot = (slot + 1) & this.mask) {
      const h = this.highs[slot]!;
      const l = this.lows[slot]!;
      if (h === high && l === low) return;
      if (h === 0 && l === 0) break;
    }
    this.highs[slot] = high;
    this.lows[slot] = low;
    this.count++;
  }

  clear(): void {
    this.highs.fill(0);
    this.lows.fill(0);
    this.count = 0;
  }
}

/**
 * The first page, at the first of `sizes` the service takes: a 400 answer
 * (a size past the service's maximum, refused rather than cut) tries the next.
 */
async function firstPage(fetchPage: (index: number, size: number) => Promise<Page>, sizes: readonly number[]): Promise<Page> {
  for (let i = 0; ; i++) {
    try {
      return await fetchPage(0, sizes[i]!);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 400 && i + 1 < sizes.length)) throw error;
    }
  }
}

/**
 * Yields each page with its new records. Stops, by returning, at an empty page
 * or the last announced page; by throwing PagingError as the header says.
 * Errors of `fetchPage` itself pass through unchanged. `fetchPage` is asked
 * for a size: the caller sends it (the walk follows what the service grants).
 */
export async function* walkPages(fetchPage: (index: number, size: number) => Promise<Page>, options: WalkOptions = {}): AsyncGenerator<WalkedPage> {
  const limits = options.limits ?? WALK_LIMITS;
  const sizes = options.sizes?.length ? options.sizes : WALK_PAGE_SIZES;
  let recent = new RecentIds(limits.window);
  let handedOn = 0;
  let granted = 0;
  let pageBudget = 0;
  let believed = 0;
  // A walk goes on only while index + 1 < totalPages <= pageBudget: at most pageBudget requests.
  for (let index = 0; ; index++) {
    const page = index === 0 ? await firstPage(fetchPage, sizes) : await fetchPage(index, granted);
    const problem = pageContradiction(page, index) ?? (index > 0 && page.size !== granted ? `page ${index} has size ${page.size}, but page 0 granted ${granted}` : undefined);
    if (problem) throw new PagingError(`${UNTRUSTED}: ${problem}`, index, handedOn);
    if (page.totalElements > limits.maxImages) {
      throw new PagingError(`${TOO_LARGE}: it claims ${page.totalElements} images, more than the ${limits.maxImages} one walk believes`, index, handedOn);
    }
    if (index === 0) {
      granted = page.size;
      // The first claim, and what the history may gain while it is walked, at the size granted.
      believed = page.totalElements + Math.max(limits.minGrowth, Math.ceil(page.totalElements * limits.growthShare));
      pageBudget = Math.min(limits.maxPages, Math.ceil(believed / Math.max(1, granted)));
      // Two pages at least, whatever the size granted: a page served again is always recognised.
      recent = new RecentIds(Math.max(limits.window, 2 * granted));
    }
    if (page.totalPages > limits.maxPages) {
      throw new PagingError(`${TOO_LARGE}: it claims ${page.totalPages} pages of ${page.size}, more than the ${limits.maxPages} one walk reads`, index, handedOn);
    }
    if (page.totalPages > pageBudget) {
      throw new PagingError(`${TOO_LARGE}: it grew to ${page.totalElements} images while it was walked, past the ${believed} one walk follows`, index, handedOn);
    }
    const fresh: ImageRecord[] = [];
    for (const record of page.content) {
      if (!recent.seen(record.id)) fresh.push(record);
    }
    if (page.content.length > 0 && fresh.length === 0) {
      throw new PagingError(`${UNTRUSTED}: page ${index} brought no image that earlier pages had not`, index, handedOn);
    }
    handedOn += fresh.length;
    yield { index, page, fresh };
    if (page.content.length === 0 || index + 1 >= page.totalPages) return;
  }
}
