// How `aerial list` shows images. On a terminal: a table that fits the
// terminal's width, its columns narrowed or dropped by priority, ids always
// whole; this file chooses the columns and their widths, and cli-table3 draws
// them, borderless. Piped: one plain tab-separated line per image, as gh does, so cut and
// awk get fields, not borders. Every cell the server controls goes through
// printable(): no escape codes, tabs or line breaks reach the output.
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

interface Laid {
  header: string;
  cells: string[];
  width: number;
}

function lay(variant: Variant, records: readonly ImageRecord[]): Laid {
  const cells = records.map(variant.cell);
  // A loop, not Math.max(...cells): a table of a few hundred thousand rows would overflow the call stack.
  let width = stringWidth(variant.header);
  for (const cell of cells) width = Math.max(width, stringWidth(cell));
  return { header: variant.header, cells, width };
}

export interface TableOptions {
  /** The terminal's width in columns. */
  width: number;
  style: Style;
  /** When the list was requested: its URLs expire two hours later. */
  retrievedAt: number;
  now?: number;
}

/**
 * The table for a terminal `width` columns wide: a header row and one row per
 * image, no line wider than the terminal unless an id alone is.
 */
export function renderTable(records: readonly ImageRecord[], options: TableOptions): string {
  const forms = columns(options.retrievedAt, options.now ?? Date.now());
  const chosen = new Map<ColumnName, number>(ORDER.map((name) => [name, 0]));
  const laidOut = new Map<string, Laid>();
  const layout = (): Laid[] =>
    ORDER.filter((name) => chosen.has(name)).map((name) => {
      const key = `${name}/${chosen.get(name)}`;
      if (!laidOut.has(key)) laidOut.set(key, lay(forms[name][chosen.get(name)!]!, records));
      return laidOut.get(key)!;
    });
  const widthOf = (laid: Laid[]) => laid.reduce((sum, column) => sum + column.width, 0) + GAP.length * (laid.length - 1);

  for (const [name, step] of GIVING_WAY) {
    if (widthOf(layout()) <= options.width) break;
    if (step === 'drop') chosen.delete(name);
    else chosen.set(name, chosen.get(name)! + 1);
  }
  const laid = layout();
  const table = new Table({ chars: BORDERLESS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 }, colWidths: laid.map((column) => column.width), wordWrap: false });
  table.push(laid.map((column) => column.header), ...records.map((_, r) => laid.map((column) => column.cells[r]!)));
  // cli-table3 pads the last column too: a line ends where its text does.
  const lines = table.toString().split('\n').map((line) => line.trimEnd());
  return [options.style.bold(lines[0]!), ...lines.slice(1)].map((line) => `${line}\n`).join('');
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
