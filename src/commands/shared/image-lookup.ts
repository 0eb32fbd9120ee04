// Which images of the history the words a user typed name, for `view` and
// `delete`. The v1 interface has no lookup by id, so the list endpoint is
// walked (newest first, through api/pages.ts, within its bounds). A word is an
// image's whole id, or, as git, docker and gh take them, the start of exactly
// one image's id: `aerial delete 0f8c2b1e`. A start that several ids share is
// refused with the candidates (exit 2), since picking one would act on an image
// the user did not mean; a word that names no image is not found (exit 5), and
// one too short to start an id that is no whole id either is a usage error (exit 2).
import type { GenAerialClient } from '../../api/client.js';
import { walkPages, WALK_PAGE_SIZES } from '../../api/pages.js';
import type { ImageRecord } from '../../api/schema.js';
import { CliError, ExitCode, UsageError } from '../../lifecycle/errors.js';
import { printable } from '../../text/printable.js';

/** Shortest start of an id taken as a prefix (git's shortest abbreviation); shorter words must be whole ids. */
export const MIN_ID_PREFIX = 4;

/** Images per list request while looking. */
const LOOKUP_PAGE_SIZE = 50;

/** Candidates named when a prefix is ambiguous. */
const CANDIDATES_SHOWN = 5;

export interface LookupOptions {
  signal: AbortSignal;
  /** Said after "not found in your history (N images listed)", e.g. that no file of that name exists either. */
  notFoundNote?: string;
  /**
   * Look through the newest `within` images only, in pages as large as the
   * service grants (the MCP server's bounded look): what is not among them is
   * not found, and a start is unique among them. Default: the whole history.
   */
  within?: number;
}

/**
 * The record each of `words` names, keyed by the word. The walk stops as soon
 * as every word has met an image of that very id; a prefix needs the whole
 * listing, since only then is it known to be unique.
 */
export async function findImages(client: GenAerialClient, words: string[], options: LookupOptions): Promise<Map<string, ImageRecord>> {
  const wanted = [...new Set(words)];
  const wantedWhole = new Set(wanted);
  const exact = new Map<string, ImageRecord>();
  if (wanted.length === 0) return exact;
  // Prefixes by length, so that each record is looked up once per length rather than against every word.
  const prefixesByLength = new Map<number, Set<string>>();
  for (const word of wanted) {
    if (word.length < MIN_ID_PREFIX) continue;
    const same = prefixesByLength.get(word.length) ?? new Set<string>();
    same.add(word);
    prefixesByLength.set(word.length, same);
  }
  const byPrefix = new Map<string, { count: number; records: ImageRecord[] }>();
  let listed = 0;
  const { within } = options;
  const pages =
    within === undefined
      ? walkPages((page) => client.list({ page, size: LOOKUP_PAGE_SIZE, sort: ['createdAt,desc'] }, { signal: options.signal }))
      : walkPages((page, size) => client.list({ page, size, sort: ['createdAt,desc'] }, { signal: options.signal }), { sizes: WALK_PAGE_SIZES.map((size) => Math.min(size, within)) });
  for await (const { fresh: all } of pages) {
    const fresh = within === undefined ? all : all.slice(0, within - listed);
    listed += fresh.length;
    for (const record of fresh) {
      if (wantedWhole.has(record.id)) exact.set(record.id, record);
      for (const [length, prefixes] of prefixesByLength) {
        if (record.id.length <= length) continue;
        const start = record.id.slice(0, length);
        if (!prefixes.has(start)) continue;
        const matches = byPrefix.get(start) ?? { count: 0, records: [] };
        matches.count++;
        if (matches.records.length < CANDIDATES_SHOWN) matches.records.push(record);
        byPrefix.set(start, matches);
      }
    }
    if (exact.size === wanted.length || (within !== undefined && listed >= within)) break;
  }

  const found = new Map<string, ImageRecord>();
  const missing: string[] = [];
  for (const word of wanted) {
    const whole = exact.get(word);
    const matches = byPrefix.get(word);
    if (whole) found.set(word, whole);
    else if (matches?.count === 1) found.set(word, matches.records[0]!);
    else if (matches && matches.count > 1) throw ambiguous(word, matches.count, matches.records);
    else missing.push(word);
  }
  // A short word that is no whole id was never a start of one: a mistake of the command line (exit 2), not an image missing.
  const short = missing.filter((word) => word.length < MIN_ID_PREFIX);
  if (short.length > 0) {
    throw new UsageError(`${printable(short[0]!, 80)} is no image id, and too short for the start of one: give at least ${MIN_ID_PREFIX} characters (see aerial list)`, 'IdTooShort');
  }
  if (missing.length > 0) {
    const names = missing.slice(0, 3).map((word) => printable(word, 80)).join(', ');
    throw new CliError(
      `${missing.length === 1 ? 'image' : `${missing.length} images`} ${names}${missing.length > 3 ? ', …' : ''} not found in your history (${listed} image${listed === 1 ? '' : 's'} listed)${options.notFoundNote ? `; ${options.notFoundNote}` : ''}`,
      ExitCode.NotFound,
      'NotFound',
    );
  }
  return found;
}

function ambiguous(word: string, count: number, records: ImageRecord[]): UsageError {
  const shown = records.map((record) => printable(record.id, 80)).join(', ');
  return new UsageError(
    `${printable(word, 80)} is the start of ${count} image ids (${shown}${count > records.length ? ', …' : ''}); give more of the id`,
    'AmbiguousId',
  );
}
