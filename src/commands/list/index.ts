// `aerial list`: the account's image history, as a table or the API's page object.
import type { Command } from 'commander';
import { UsageError } from '../../process/errors.js';
import type { ImageRecord, Page } from '../../api/schema.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { parseWholeNumber } from '../../input/flags.js';
import { parseSort } from '../shared/list-sort.js';

interface ListOptions {
  page?: string;
  size?: string;
  sort?: string[];
  all?: boolean;
}

const ALL_PAGE_SIZE = 50;
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
    .addHelpText(
      'after',
      `
On a terminal, a table as wide as the terminal: the URL expiry, the seconds, the
resolution, the time, the date and the coordinates give way in that order; ids
are always whole. Piped, one line per image with tab-separated fields and no
header: id, createdAt, resolution, latitude, longitude. --json prints the API's
page object. Pages count from 0, as --page does.

Examples:
  $ aerial list
  $ aerial list --size 50 --sort createdAt,asc
  $ aerial list --all | cut -f1,4,5        # id, latitude, longitude
  $ aerial list --json | jq '.content[] | select(.resolution == "UHD")'`,
    )
    .action(action<ListOptions>(runList));
}

export async function runList(ctx: Context, options: ListOptions): Promise<void> {
  const page = parseWholeNumber(options.page, '--page', 0);
  const size = parseWholeNumber(options.size, '--size', 1);
  const sort = parseSort(options.sort);
  if (options.all && page !== undefined) throw new UsageError('--all walks every page; it cannot be combined with --page');

  const client = await ctx.client();
  const retrievedAt = Date.now();
  let result: Page;
  if (options.all) {
    result = await fetchAllPages(ctx, (p) => client.list({ page: p, size: size ?? ALL_PAGE_SIZE, sort }, { signal: ctx.signal }));
  } else {
    result = await client.list({ page, size, sort }, { signal: ctx.signal });
  }

  if (ctx.io.json) {
    ctx.io.outJson(result);
    return;
  }
  if (result.content.length === 0) {
    if (result.totalElements === 0) ctx.io.info('No images yet. Make one with: aerial generate --lat 48.8584 --lng 2.2945 -o eiffel.jpg');
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
  if (options.all) {
    io.info(io.style.dim(`${result.content.length} images`));
    return;
  }
  const [where, next] = pageFooter(result, { size, sort });
  // One line when it fits the terminal, the hint on its own line when not.
  const footer = next === undefined ? where : `${where}${where.length + next.length + 3 <= width ? ' — ' : '\n'}${next}`;
  io.info(io.style.dim(footer));
}

/** Pages are counted from 0 everywhere, as --page counts them: "pages 0–2". */
function pageRange(totalPages: number): string {
  return totalPages <= 1 ? 'page 0' : `pages 0–${totalPages - 1}`;
}

/** ["Page 0 of pages 0–2 (45 images)", "next: aerial list --page 1 --size 20"], in the numbers --page takes. */
function pageFooter(page: Page, asked: { size?: number; sort?: string[] }): [string, string | undefined] {
  const where = page.totalPages <= 1 ? `Page ${page.page}, the only one` : `Page ${page.page} of ${pageRange(page.totalPages)}`;
  const more = page.page + 1 < page.totalPages;
  // The next page of the same listing: the flags that shape it come along.
  const same = [...(asked.size === undefined ? [] : ['--size', String(asked.size)]), ...(asked.sort ?? []).flatMap((sort) => ['--sort', sort])];
  const next = more ? `next: aerial list --page ${page.page + 1}${same.map((word) => ` ${shellWord(word)}`).join('')}` : undefined;
  return [`${where} (${page.totalElements} images)`, next];
}

/** A word as a shell takes it back. */
function shellWord(word: string): string {
  return /^[\w.,:/@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Every page as one page object (src/api/pages.ts decides when the walk ends);
 * ids seen twice (history shifting under us) are kept once.
 */
export async function fetchAllPages(ctx: Context, fetchPage: (page: number) => Promise<Page>): Promise<Page> {
  const { walkPages } = await import('../../api/pages.js');
  const content: ImageRecord[] = [];
  let first: Page | undefined;
  let pages = 0;
  for await (const { index, page, fresh } of walkPages(fetchPage)) {
    first ??= page;
    pages++;
    for (const record of fresh) content.push(record);
    ctx.io.debug(`fetched page ${index + 1} of ${page.totalPages}`);
  }
  return { ...first!, content, page: 0, size: content.length, totalPages: pages, totalElements: Math.max(first!.totalElements, content.length) };
}
