// `aerial list`: the account's image history, as a table or the API's page object.
import type { Command } from 'commander';
import { UsageError } from '../../lifecycle/errors.js';
import type { Page } from '../../api/schema.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { parseWholeNumber } from '../../input/flags.js';
import { parseSort } from '../shared/list-sort.js';
import type { ListFilter, ListFilterOptions } from './filters.js';

interface ListOptions extends ListFilterOptions {
  page?: string;
  size?: string;
  sort?: string[];
  all?: boolean;
}

/** The terminal's width when it does not say. */
const DEFAULT_COLUMNS = 80;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export const registration: CommandRegistration = { name: 'list', aliases: ['ls'], register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Images:')
    .description('list the images in your history')
    .option('--page <n>', 'page number, counted from 0 (default 0)')
    .option('--size <n>', 'images per page, at least 1 (default 20)')
    .option('--sort <property,dir>', 'sort criterion such as createdAt,desc; repeatable', collect)
    .option('--all', 'walk every page and print all images')
    .option('--since <when>', 'only images made since then: a duration back from now (2h, 30m, 1h30m) or a date (2025-01-31, 2025-01-31T12:00Z)')
    .option('--until <when>', 'only images made before then, written as for --since')
    .option('--resolution <value>', 'only images of this resolution: HD, FHD, UHD')
    .option('--near <place>', 'only images near this point: "LAT,LNG" or a place name ("Lyon, FR")')
    .option('--within <km>', 'with --near: how near, in kilometres (default 10)')
    .option('--limit <n>', 'print at most n images, and ask for no page beyond them')
    .addHelpText(
      'after',
      `
On a terminal, a table as wide as the terminal: the URL expiry, the seconds, the
resolution, the time, the date and the coordinates give way in that order; ids
are always whole. Piped, one line per image with tab-separated fields and no
header: id, createdAt, resolution, latitude, longitude. --json prints the API's
page object. Pages count from 0, as --page does.

The service filters nothing: --since, --until, --resolution, --near and --limit
walk the history as --all does, and aerial filters each page as it arrives, in
constant memory. The walk stops at --limit, and, newest first (the order asked
for with --since unless --sort says otherwise), at the first image made before
--since.

Examples:
  $ aerial list --size 50 --sort createdAt,asc
  $ aerial list --all | cut -f1,4,5        # id, latitude, longitude
  $ aerial list --since 2h --near "48.8584,2.2945" --within 5 --limit 10
  $ aerial list --json | jq '.content[] | select(.resolution == "UHD")'`,
    )
    .action(action<ListOptions>(runList));
}

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const page = parseWholeNumber(options.page, '--page', 0);
  const size = parseWholeNumber(options.size, '--size', 1);
  const sort = parseSort(options.sort);
  const filter = await listFilter(ctx, options, sort);
  if (options.all && page !== undefined) throw new UsageError('--all walks every page; it cannot be combined with --page');
  if (filter.active && page !== undefined) throw new UsageError('--since, --until, --resolution, --near and --limit walk every page, as --all does; they cannot be combined with --page');

  const client = await ctx.client();
  if (options.all || filter.active) {
    const walkSort = filter.sort ?? sort;
    await listAll(ctx, (p, pageSize) => client.list({ page: p, size: pageSize, sort: walkSort }, { signal: ctx.signal }), size, filter);
    return;
  }
  const retrievedAt = Date.now();
  const result = await client.list({ page, size, sort }, { signal: ctx.signal });

  if (ctx.io.json) {
    ctx.io.outJson(result);
    return;
  }
  if (result.content.length === 0) {
    if (result.totalElements === 0) ctx.io.info(NO_IMAGES);
    else ctx.io.info(`--page ${result.page} is past the end: ${result.totalElements} images on ${pageRange(result.totalPages)}`);
    return;
  }
  const { renderTable, renderTsv } = await import('./table.js');
  const { io } = ctx;
  const width = io.stdoutIsTTY ? io.stdout.columns || DEFAULT_COLUMNS : Infinity;
  // Redacted before cells are cut to fit: a cut must not leave half a key behind (secrets.ts).
  const { redactValue } = await import('../../text/secrets.js');
  const shown = redactValue(result.content, io.redact);
  io.out(io.stdoutIsTTY ? renderTable(shown, { width, style: io.style, retrievedAt }) : renderTsv(shown));
  const [where, next] = pageFooter(result, { size, sort }, globalWords(ctx));
  // One line when it fits the terminal, the hint on its own line when not.
  const footer = next === undefined ? where : `${where}${where.length + next.length + 3 <= width ? ' — ' : '\n'}${next}`;
  io.info(io.style.dim(footer));
}

/** Pages are counted from 0 everywhere, as --page counts them: "pages 0–2". */
function pageRange(totalPages: number): string {
  return totalPages <= 1 ? 'page 0' : `pages 0–${totalPages - 1}`;
}

/** No filter: every record, the walk to its end. */
const NO_FILTER: ListFilter = { active: false, limitOnly: false, keeps: () => true, endsAt: () => false };

/** The filter the flags make; a place --near names is looked up (and said) now, before anything is sent. */
async function listFilter(ctx: Context, options: ListOptions, sort: string[] | undefined): Promise<ListFilter> {
  // A plain list loads none of it.
  const given = [options.since, options.until, options.resolution, options.near, options.within, options.limit].some((value) => value !== undefined);
  if (!given) return NO_FILTER;
  const { makeListFilter } = await import('./filters.js');
  let near: { lat: number; lng: number } | undefined;
  if (options.near !== undefined) {
    const [{ checkCoordinates, parseLocation }, gazetteer] = await Promise.all([import('../../input/scene-request.js'), import('../../input/gazetteer.js')]);
    if (gazetteer.looksLikeCoordinates(options.near)) {
      near = parseLocation(options.near, '--near');
      checkCoordinates(near.lat, near.lng, '--near latitude', '--near longitude');
    } else {
      const found = gazetteer.findPlace(options.near, '--near');
      ctx.io.info(gazetteer.placeNote(options.near, found));
      near = { lat: found.place.lat, lng: found.place.lng };
    }
  }
  return makeListFilter(options, near, sort);
}

/**
 * The global options given as flags that say where the listing comes from
 * (--sandbox, --base-url, --profile): a next-page hint without them would
 * list another history.
 */
function globalWords(ctx: Context): string[] {
  const { sandbox, baseUrl, profile } = ctx.globals;
  return [...(sandbox ? ['--sandbox'] : []), ...(baseUrl === undefined ? [] : ['--base-url', baseUrl]), ...(profile === undefined ? [] : ['--profile', profile])];
}

/** ["Page 0 of pages 0–2 (45 images)", "next: aerial list --page 1 --size 20"], in the numbers --page takes. */
function pageFooter(page: Page, asked: { size?: number; sort?: string[] }, globals: string[]): [string, string | undefined] {
  const where = page.totalPages <= 1 ? `Page ${page.page}, the only one` : `Page ${page.page} of ${pageRange(page.totalPages)}`;
  const more = page.page + 1 < page.totalPages;
  // The next page of the same listing: the flags that shape it come along, and those that say whose it is.
  const same = [...(asked.size === undefined ? [] : ['--size', String(asked.size)]), ...(asked.sort ?? []).flatMap((sort) => ['--sort', sort]), ...globals];
  const next = more ? `next: aerial list --page ${page.page + 1}${same.map((word) => ` ${shellWord(word)}`).join('')}` : undefined;
  return [`${where} (${page.totalElements} images)`, next];
}

/** A word as a shell takes it back. */
function shellWord(word: string): string {
  return /^[\w.,:/@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * `list --all`: every page, written as it arrives (src/api/pages.ts decides
 * when the walk ends and which records are new), so the memory used does not
 * grow with the history. Each write waits for stdout to take it: a slow
 * reader holds the walk back rather than the process holding the output.
 * --json writes one page object holding every record, its counts after the
 * records (they are known only then); a walk that stops part-way leaves what
 * was written, a document no JSON parser takes for whole.
 */
async function listAll(ctx: Context, fetchPage: (page: number, size: number) => Promise<Page>, size: number | undefined, filter: ListFilter): Promise<void> {
  const { walkPages, WALK_PAGE_SIZES } = await import('../../api/pages.js');
  const { redactValue } = await import('../../text/secrets.js');
  const { io } = ctx;
  let first: Page | undefined;
  let count = 0;
  let pages = 0;
  // A walk of millions would otherwise grow V8's young generation to its largest (lifecycle/young-generation.ts).
  const { capYoungGeneration } = await import('../../lifecycle/young-generation.js');
  const holdYoungGeneration = capYoungGeneration();
  /** What the filter keeps of a page's new records, and whether the listing ends with them (a bound, or the limit reached). */
  function matching(fresh: Page['content']): { kept: Page['content']; ended: boolean } {
    const kept: Page['content'] = [];
    for (const record of fresh) {
      if (filter.endsAt(record)) return { kept, ended: true };
      if (!filter.keeps(record)) continue;
      kept.push(record);
      if (filter.limit !== undefined && count + kept.length >= filter.limit) return { kept, ended: true };
    }
    return { kept, ended: false };
  }

  /** The records of every page as they come; `first` once the first page is in. */
  async function* records() {
    // The size given is asked for as it is; without one, the walk asks for large pages (no larger than a limit alone needs).
    const sizes = size !== undefined ? [size] : filter.limitOnly ? [...new Set([Math.min(filter.limit!, WALK_PAGE_SIZES[0]!), ...WALK_PAGE_SIZES.filter((s) => s < filter.limit!)])] : undefined;
    for await (const { index, page, fresh } of walkPages(fetchPage, sizes ? { sizes } : {})) {
      first ??= page;
      holdYoungGeneration();
      pages++;
      io.debug(`fetched page ${index + 1} of ${page.totalPages} (${page.size} a page)`);
      // Unfiltered, a page's new records are all kept, as they are.
      const { kept, ended } = filter.active ? matching(fresh) : { kept: fresh, ended: false };
      count += kept.length;
      if (kept.length > 0) yield kept;
      // Leaving the walk sends no further request.
      if (ended) return;
    }
  }

  if (io.json) {
    // A page's records at a time: the terminal searches each page's text for the key once, and redacts the
    // records as data only when it is there (terminal.ts).
    await io.outJsonStream({}, 'content', records(), () => {
      const { content: _, ...rest } = first ?? { content: [] };
      // Filtered, the listing is what was kept; an empty history may give no first page at all.
      const totalElements = filter.active ? count : Math.max(first?.totalElements ?? 0, count);
      return { ...redactValue(rest, io.redact), totalElements, totalPages: pages, page: 0, size: count };
    });
    return;
  }
  const { renderTsv, StreamingTable } = await import('./table.js');
  const table = io.stdoutIsTTY ? new StreamingTable({ width: io.stdout.columns || DEFAULT_COLUMNS, style: io.style, retrievedAt: Date.now() }) : undefined;
  for await (const fresh of records()) {
    // Redacted before cells are cut to fit: a cut must not leave half a key behind (secrets.ts).
    const shown = redactValue(fresh, io.redact);
    if (!(await io.outPart(table ? table.render(shown) : renderTsv(shown)))) return;
  }
  if (count === 0) io.info(filter.active ? 'No images match.' : NO_IMAGES);
  else io.info(io.style.dim(`${count} image${count === 1 ? '' : 's'}`));
}

const NO_IMAGES = 'No images yet. Make one with: aerial generate --lat 48.8584 --lng 2.2945 -o eiffel.jpg';
