// How `aerial list` shows images. On a terminal: a table that fits the
// terminal's width, its columns narrowed or dropped by priority, ids always
// whole; this file chooses the columns and their widths, and cli-table3 draws
// them, borderless, two spaces apart, as gh and kubectl draw theirs. `list
// --all` prints its table page by page, in the columns and widths fitted to
// the first page (StreamingTable), each page drawn as it comes. Piped: one
// plain tab-separated line per image, as gh does, so cut and awk get fields,
// not borders. Every cell the server controls goes through printable(): no
// escape codes, tabs or line breaks reach the output.
import Table from 'cli-table3';
import stringWidth from 'string-width';
import type { ImageRecord } from '../../api/schema.js';
import { URL_LIFETIME_MS } from '../../api/spec.js';
import type { Style } from '../../terminal/terminal.js';
import { printable } from '../../text/printable.js';

/** Between columns. */
const GAP = '  ';

/**
 * The fields of one piped line, in order: id, createdAt as the service sent it,
 * resolution, latitude, longitude.
 */
export function imageFields(record: ImageRecord): string[] {
  return [
    printable(record.id, Infinity),
    printable(record.createdAt, 80),
    printable(record.resolution, 20),
    String(record.coordinates.latitude),
    String(record.coordinates.longitude),
  ];
}

/** One tab-separated line per image, no header, no colour. */
export function renderTsv(records: readonly ImageRecord[]): string {
  return records.map((record) => `${imageFields(record).join('\t')}\n`).join('');
}

interface Variant {
  header: string;
  cell: (record: ImageRecord) => string;
}

type ColumnName = 'id' | 'created' | 'res' | 'coordinates' | 'expires';

/** createdAt as 2030-01-01T12:34:56.789Z, cut to `length` characters with the T as a space; anything else as sent. */
function created(length: number) {
  return (record: ImageRecord): string => {
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?/.exec(record.createdAt);
    return iso ? iso[0].replace('T', ' ').slice(0, length) : printable(record.createdAt, 25);
  };
}

function expiry(retrievedAt: number, now: number): string {
  const expires = new Date(retrievedAt + URL_LIFETIME_MS);
  const minutes = Math.max(0, Math.round((expires.getTime() - now) / 60000));
  return `${expires.toISOString().slice(11, 16)}Z (${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m)`;
}

/** Each column's forms, widest first. */
function columns(retrievedAt: number, now: number): Record<ColumnName, Variant[]> {
  return {
    id: [{ header: 'ID', cell: (record) => printable(record.id, Infinity) }],
    created: [
      { header: 'Created (UTC)', cell: created(19) },
      { header: 'Created (UTC)', cell: created(16) },
      { header: 'Date (UTC)', cell: created(10) },
    ],
    res: [{ header: 'Res', cell: (record) => printable(record.resolution, 20) }],
    coordinates: [
      { header: 'Coordinates', cell: (record) => `${record.coordinates.latitude.toFixed(4)}, ${record.coordinates.longitude.toFixed(4)}` },
    ],
    // The same for every row of one listing: the first to go.
    expires: [{ header: 'URL expires', cell: () => expiry(retrievedAt, now) }],
  };
}

/**
 * What gives way, in order, until the table fits: the URL expiry, the seconds,
 * the resolution, the time of day, the date, the coordinates. The id never does.
 */
const GIVING_WAY: ReadonlyArray<[ColumnName, 'narrow' | 'drop']> = [
  ['expires', 'drop'],
  ['created', 'narrow'],
  ['res', 'drop'],
  ['created', 'narrow'],
  ['created', 'drop'],
  ['coordinates', 'drop'],
];
const ORDER: readonly ColumnName[] = ['id', 'created', 'res', 'coordinates', 'expires'];

/** The widest cell of a column in this form, header included. */
function columnWidth(variant: Variant, records: readonly ImageRecord[]): number {
  // A loop, not Math.max(...cells): a table of a few hundred thousand rows would overflow the call stack.
  let width = stringWidth(variant.header);
  for (const record of records) width = Math.max(width, stringWidth(variant.cell(record)));
  return width;
}

export interface TableOptions {
  /** The terminal's width in columns. */
  width: number;
  style: Style;
  /** When the list was requested: its URLs expire two hours later. */
  retrievedAt: number;
  now?: number;
}

/** The columns a table shows, in which form, and how wide: fitted to some records, then kept for more. */
interface Layout {
  columns: Array<{ variant: Variant; width: number }>;
}

/**
 * The columns and forms that fit `records` into a terminal `width` columns
 * wide: what gives way does so by GIVING_WAY until the table fits.
 */
function fitLayout(records: readonly ImageRecord[], options: TableOptions): Layout {
  const forms = columns(options.retrievedAt, options.now ?? Date.now());
  const chosen = new Map<ColumnName, number>(ORDER.map((name) => [name, 0]));
  const widths = new Map<string, number>();
  const layout = (): Array<{ variant: Variant; width: number }> =>
    ORDER.filter((name) => chosen.has(name)).map((name) => {
      const key = `${name}/${chosen.get(name)}`;
      const variant = forms[name][chosen.get(name)!]!;
      if (!widths.has(key)) widths.set(key, columnWidth(variant, records));
      return { variant, width: widths.get(key)! };
    });
  const widthOf = (laid: Array<{ width: number }>) => laid.reduce((sum, column) => sum + column.width, 0) + GAP.length * (laid.length - 1);

  for (const [name, step] of GIVING_WAY) {
    if (widthOf(layout()) <= options.width) break;
    if (step === 'drop') chosen.delete(name);
    else chosen.set(name, chosen.get(name)! + 1);
  }
  return { columns: layout() };
}

/**
 * Draws rows of cells in the layout's columns, borderless. A cell wider than
 * its column (a longer id on a later page, say) widens its column in these
 * rows rather than being cut: ids stay whole.
 */
function draw(cellRows: string[][], layout: Layout): string {
  const colWidths = layout.columns.map(({ width }, c) => {
    let widest = width;
    for (const cells of cellRows) widest = Math.max(widest, stringWidth(cells[c]!));
    return widest;
  });
  const table = new Table({ chars: BORDERLESS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 }, colWidths, wordWrap: false });
  table.push(...cellRows);
  // cli-table3 pads the last column too: a line ends where its text does.
  return table
    .toString()
    .split('\n')
    .map((line) => `${line.trimEnd()}\n`)
    .join('');
}

function header(layout: Layout, style: Style): string {
  return style.bold(draw([layout.columns.map(({ variant }) => variant.header)], layout).slice(0, -1)) + '\n';
}

function rows(records: readonly ImageRecord[], layout: Layout): string {
  return records.length === 0 ? '' : draw(records.map((record) => layout.columns.map(({ variant }) => variant.cell(record))), layout);
}

/** No borders, no rules: columns apart by GAP, as gh and kubectl draw theirs. */
const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: GAP,
};

/**
 * The table for a terminal `width` columns wide: a header row and one row per
 * image, no line wider than the terminal unless an id alone is.
 */
export function renderTable(records: readonly ImageRecord[], options: TableOptions): string {
  const layout = fitLayout(records, options);
  return header(layout, options.style) + rows(records, layout);
}

/**
 * A table written page by page, as `list --all` walks: the first page decides
 * the columns and their widths (and brings the header), later pages keep
 * them, so nothing is held back to be measured. A later cell wider than its
 * column (a longer id, say) widens that column on its own page: ids stay whole.
 */
export class StreamingTable {
  private layout?: Layout;
  constructor(private readonly options: TableOptions) {}

  /** The lines of `records`, after the header when they are the first. */
  render(records: readonly ImageRecord[]): string {
    if (records.length === 0) return '';
    if (!this.layout) {
      this.layout = fitLayout(records, this.options);
      return header(this.layout, this.options.style) + rows(records, this.layout);
    }
    return rows(records, this.layout);
  }
}
