// `aerial list`: the account's image history, as a table or the API's page object.
import type { Command } from 'commander';
import { UsageError } from '../api/errors.js';
import type { ImageRecord, Page } from '../api/schema.js';
import type { ActionFactory } from '../cli.js';
import type { Context } from '../context.js';
import { printable } from '../printable.js';

interface ListOptions {
  page?: string;
  size?: string;
  sort?: string[];
  all?: boolean;
}

/** The list URLs are valid for two hours after the list response (spec, Limits). */
export const URL_LIFETIME_MS = 2 * 60 * 60 * 1000;
const ALL_PAGE_SIZE = 50;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function register(program: Command, action: ActionFactory): void {
  program
    .command('list')
    .alias('ls')
    .helpGroup('Images:')
    .description('list the images in your history')
    .option('--page <n>', 'zero-indexed page number (default 0)')
    .option('--size <n>', 'images per page, at least 1 (default 20)')
    .option('--sort <property,dir>', 'sort criterion such as createdAt,desc; repeatable', collect)
    .option('--all', 'walk every page and print all images')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial list
  $ aerial list --size 50 --sort createdAt,asc
  $ aerial list --all --json | jq -r '.content[].id'
  $ aerial list --json | jq '.content[] | select(.resolution == "UHD")'`,
    )
    .action(action<ListOptions>(runList));
}

export function parseWholeNumber(raw: string | undefined, flag: string, min: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} must be a whole number of at least ${min}; got '${raw}'`);
  const value = Number(raw);
  if (value < min || !Number.isSafeInteger(value)) {
    throw new UsageError(`${flag} must be a whole number of at least ${min}; got '${raw}'`);
  }
  return value;
}

export function parseSort(values: string[] | undefined): string[] | undefined {
  if (!values) return undefined;
  return values.map((value) => {
    const match = /^\s*([A-Za-z][A-Za-z0-9_.]*)\s*(?:,\s*(asc|desc)\s*)?$/i.exec(value);
    if (!match) throw new UsageError(`--sort must be property,asc or property,desc (e.g. createdAt,desc); got '${value}'`);
    return match[2] ? `${match[1]},${match[2].toLowerCase()}` : match[1]!;
  });
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
    ctx.io.info(
      result.totalElements === 0
        ? 'No images yet. Make one with: aerial generate --lat 48.8584 --lng 2.2945 -o eiffel.jpg'
        : `Page ${result.page} is past the end (${result.totalElements} images in ${result.totalPages} pages).`,
    );
    return;
  }
  ctx.io.out(await renderTable(ctx, result.content, retrievedAt));
  if (!options.all) {
    const next = result.page + 1 < result.totalPages ? ` — next: aerial list --page ${result.page + 1}` : '';
    ctx.io.info(ctx.io.style.dim(`Page ${result.page + 1} of ${Math.max(1, result.totalPages)} (${result.totalElements} images)${next}`));
  } else {
    ctx.io.info(ctx.io.style.dim(`${result.content.length} images`));
  }
}

/**
 * Every page as one page object (src/api/pages.ts decides when the walk ends);
 * ids seen twice (history shifting under us) are kept once.
 */
export async function fetchAllPages(ctx: Context, fetchPage: (page: number) => Promise<Page>): Promise<Page> {
  const { walkPages } = await import('../api/pages.js');
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

function formatExpiry(retrievedAt: number, now = Date.now()): string {
  const expires = new Date(retrievedAt + URL_LIFETIME_MS);
  const minutes = Math.round((expires.getTime() - now) / 60000);
  return `${expires.toISOString().slice(11, 16)}Z (${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m)`;
}

async function renderTable(ctx: Context, records: ImageRecord[], retrievedAt: number): Promise<string> {
  const { default: Table } = await import('cli-table3');
  const { style } = ctx.io;
  const table = new Table({
    head: ['ID', 'Created (UTC)', 'Res', 'Coordinates', 'URL expires'].map((h) => style.bold(h)),
    style: { head: [], border: ctx.io.color ? ['grey'] : [] },
  });
  const expiry = formatExpiry(retrievedAt);
  for (const record of records) {
    // Every cell the server controls goes through printable(): no escape codes or line breaks in the table.
    table.push([
      printable(record.id, 80),
      printable(record.createdAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ''), 40),
      printable(record.resolution, 20),
      `${record.coordinates.latitude.toFixed(4)}, ${record.coordinates.longitude.toFixed(4)}`,
      style.dim(expiry),
    ]);
  }
  return table.toString();
}
