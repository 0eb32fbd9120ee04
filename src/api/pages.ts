// Walking every page of the list endpoint, for `list --all` and `export` (its
// first listing and every re-listing). How many pages there are is the
// server's word; this module decides how far to believe it. A walk ends
// normally at an empty page or at the last page the server announces, and
// stops with a PagingError when the server's pages cannot be true:
//   - a page brings no image that an earlier page did not already bring
//     (the same page served again, or a page number ignored);
//   - a page contradicts itself: its number is not the one asked for, it holds
//     more images than its size, or its page count is not its image count
//     divided by its size;
//   - the walk outgrows a hard cap on pages, images or bytes, so that time and
//     memory stay bounded whatever the server claims.
import { BadResponseError } from './errors.js';
import type { ImageRecord, Page } from './schema.js';

export interface WalkLimits {
  /** Requests one walk may send. */
  maxPages: number;
  /** Distinct images one walk may collect. */
  maxImages: number;
  /** Size of the collected records, as JSON: records may carry fields of any size. */
  maxBytes: number;
}

/**
 * A walk's records are held, and `list --all --json` prints them as one
 * document: at these caps its peak RSS stays near 700 MB (measured with half
 * a million records, and with records padded to the byte cap), inside the
 * default heap of a machine with 2 GB. 20,000 pages bounds the requests.
 */
export const WALK_LIMITS: WalkLimits = { maxPages: 20_000, maxImages: 500_000, maxBytes: 256 * 1024 * 1024 };

export interface WalkedPage {
  /** The page number asked for (from 0). */
  index: number;
  page: Page;
  /** The page's records that no earlier page brought, in page order. */
  fresh: ImageRecord[];
}

const UNTRUSTED = "the service's paging cannot be trusted";
const TOO_LARGE = 'the listing is too large to walk';

/** The server's paging cannot be followed to an end (untrustworthy, or past the caps); what was collected before it stays the caller's. */
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
 * Yields each page with its new records. Stops, by returning, at an empty page
 * or the last announced page; by throwing PagingError as the header says.
 * Errors of `fetchPage` itself pass through unchanged.
 */
export async function* walkPages(fetchPage: (index: number) => Promise<Page>, limits: WalkLimits = WALK_LIMITS): AsyncGenerator<WalkedPage> {
  const seen = new Set<string>();
  let bytes = 0;
  // A walk goes on only while index + 1 < totalPages <= maxPages: at most maxPages requests.
  for (let index = 0; ; index++) {
    const page = await fetchPage(index);
    const problem = pageContradiction(page, index);
    if (problem) throw new PagingError(`${UNTRUSTED}: ${problem}`, index, seen.size);
    if (page.totalElements > limits.maxImages) {
      throw new PagingError(`${TOO_LARGE}: it claims ${page.totalElements} images, more than the ${limits.maxImages} one walk collects`, index, seen.size);
    }
    if (page.totalPages > limits.maxPages) {
      throw new PagingError(`${TOO_LARGE}: it claims ${page.totalPages} pages, more than the ${limits.maxPages} one walk reads`, index, seen.size);
    }
    const fresh: ImageRecord[] = [];
    for (const record of page.content) {
      if (seen.has(record.id)) continue;
      seen.add(record.id);
      fresh.push(record);
      bytes += JSON.stringify(record).length;
    }
    if (page.content.length > 0 && fresh.length === 0) {
      throw new PagingError(`${UNTRUSTED}: page ${index} brought no image that earlier pages had not`, index, seen.size - fresh.length);
    }
    if (seen.size > limits.maxImages) {
      throw new PagingError(`${TOO_LARGE}: it holds more than ${limits.maxImages} images, the most one walk collects`, index, seen.size - fresh.length);
    }
    if (bytes > limits.maxBytes) {
      throw new PagingError(`${TOO_LARGE}: its records exceed ${Math.round(limits.maxBytes / 1024 / 1024)} MiB, the most one walk holds`, index, seen.size - fresh.length);
    }
    yield { index, page, fresh };
    if (page.content.length === 0 || index + 1 >= page.totalPages) return;
  }
}
