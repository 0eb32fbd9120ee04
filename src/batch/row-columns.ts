// The rows of a batch file (CSV with a header row, JSON Lines or a JSON array;
// read by input.ts), and how a row's columns map onto scene input. Column
// names follow the scene flags in camelCase or kebab-case (aspectRatio,
// aspect-ratio), in any case, with spaces or underscores; columns that name no
// scene field are kept for the output template ({id}, …), except one a typo
// away from a field's name (`zooom`), which is refused.
import { extname } from 'node:path';
import { closestMatch } from 'leven';
import { UsageError } from '../lifecycle/errors.js';
import { parseSwitch } from '../input/flags.js';
import type { SceneInput } from '../input/scene-request.js';
import { columnNames, SCENE_FIELD_NAMES, sceneSpec, type SceneField } from '../scene/vocabulary.js';

export type BatchFormat = 'csv' | 'jsonl' | 'json';

export interface BatchRow {
  /** 1-based number among the data records (the header is not a row). */
  row: number;
  /** The line the row starts on (JSON), or, with `lineEnds`, ends on (CSV: past the line breaks inside its quoted cells). */
  line?: number;
  lineEnds?: boolean;
  /** Cell values by column name as written in the file. */
  cells: Record<string, unknown>;
}

/** Scene fields a column may set, by squashed name (lower case, no separators). */
const FIELD_BY_SQUASHED: ReadonlyMap<string, SceneField> = new Map(
  SCENE_FIELD_NAMES.flatMap((field) => columnNames(field).map((name) => [squash(name), field] as const)),
);

/** Squashed column names that set a field, each with the name shown for it. */
const SHOWN_BY_SQUASHED: ReadonlyMap<string, string> = new Map(
  SCENE_FIELD_NAMES.flatMap((field) => columnNames(field).map((name) => [squash(name), name] as const)),
);

/**
 * The column name a column that sets no field was probably meant to be: one
 * edit away for names of up to five letters, two for longer ones. Closer than
 * the command-line's suggestions, since a refused column stops the batch: `date`
 * or `rate` are not taken for `lat`.
 */
export function misspeltColumn(column: string): string | undefined {
  const squashed = squash(column);
  if (squashed === '' || FIELD_BY_SQUASHED.has(squashed)) return undefined;
  const match = closestMatch(squashed, [...SHOWN_BY_SQUASHED.keys()], { maxDistance: squashed.length <= 5 ? 1 : 2 });
  return match === undefined ? undefined : SHOWN_BY_SQUASHED.get(match);
}

export function squash(name: string): string {
  return name.trim().replace(/[\s_-]/g, '').toLowerCase();
}

/** Which scene field a column sets, if any. */
export function sceneFieldOf(column: string): keyof SceneInput | undefined {
  return FIELD_BY_SQUASHED.get(squash(column));
}

/**
 * The columns of a batch file in first-seen order, and the one column that
 * sets each scene field; two columns for one field are refused. Columns are
 * added as they are met (a JSON Lines file names them row by row).
 */
export class ColumnMap {
  readonly columns: string[] = [];
  /** JSON: the line each column was first met on. */
  readonly firstLine = new Map<string, number>();
  readonly byField = new Map<keyof SceneInput, string>();
  private readonly known = new Set<string>();

  has(column: string): boolean {
    return this.known.has(column);
  }

  add(column: string, line?: number): void {
    if (this.known.has(column)) return;
    this.known.add(column);
    if (line !== undefined) this.firstLine.set(column, line);
    this.columns.push(column);
    const field = sceneFieldOf(column);
    if (!field) return;
    const other = this.byField.get(field);
    if (other !== undefined) throw new UsageError(`batch file: columns '${other}' and '${column}' both set ${field}; keep one`);
    this.byField.set(field, column);
  }
}

/**
 * How a row is named in its errors: by its line in the file, as errors of the
 * header are ("line 3 (row 2)"), or by its number alone when the line is not known.
 */
export function rowName(row: Pick<BatchRow, 'row' | 'line' | 'lineEnds' | 'cells'>): string {
  if (row.line === undefined) return `row ${row.row}`;
  let line = row.line;
  // A CSV record is known by the line it ends on: the line breaks inside its quoted cells (LF, CRLF or a CR
  // alone, each one line) come before.
  if (row.lineEnds) for (const cell of Object.values(row.cells)) if (typeof cell === 'string') line -= cell.match(/\r\n|\r|\n/g)?.length ?? 0;
  return `line ${line} (row ${row.row})`;
}

/** Maps each scene field to the one column that sets it; two columns for one field are refused. */
export function mapColumns(columns: string[]): Map<keyof SceneInput, string> {
  const map = new ColumnMap();
  for (const column of columns) map.add(column);
  return map.byField;
}

/**
 * The format: --format, then the extension (.csv, .tsv, .txt are CSV), then
 * the content: a file starting with '[' is a JSON array, one starting with
 * '{' JSON Lines (.json: objects, one per line or not).
 */
export function detectFormat(path: string, text: string, given?: string): BatchFormat {
  if (given !== undefined) {
    const format = given.trim().toLowerCase();
    if (format === 'csv') return 'csv';
    if (format === 'jsonl' || format === 'ndjson') return 'jsonl';
    if (format === 'json') return 'json';
    throw new UsageError(`--format must be one of csv, jsonl, json; got '${given}'`);
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv';
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('[')) return 'json';
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  return start.startsWith('{') ? 'jsonl' : 'csv';
}

/** A number written with a decimal comma (48,8584: a spreadsheet in a European locale) as it means it. */
function decimalPoint(text: string): string {
  return text.includes(',') && /^\s*[+-]?\d+,\d+\s*$/.test(text) ? text.replace(',', '.') : text;
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** A tags cell: a JSON array of strings, or one string separated by ';' or '|'. */
function parseTags(value: unknown, label: string): string[] {
  if (Array.isArray(value)) {
    if (!value.every((tag) => typeof tag === 'string')) throw new UsageError(`${label} must be a list of strings`);
    return value as string[];
  }
  return String(value)
    .split(/[;|]/)
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

/** A cell as its field's kind takes it: numbers stay numbers for coordinates, JSON booleans and arrays as they are. */
function cellValue(field: SceneField, value: unknown, label: string): SceneInput[SceneField] {
  switch (sceneSpec(field).kind) {
    case 'list':
      return parseTags(value, label);
    case 'boolean':
      return parseSwitch(value, label);
    case 'coordinate':
      return typeof value === 'number' ? value : decimalPoint(String(value));
    case 'location':
    case 'enum':
    case 'text':
      return String(value);
  }
}

export interface RowInput {
  input: SceneInput;
  /** The column each scene field came from; fields not listed came from the flags. */
  columnOf: Map<keyof SceneInput, string>;
}

/**
 * Scene input for one row: each non-empty cell of a scene column, over the
 * values the command-line flags gave (which in turn sit over config defaults).
 */
export function rowSceneInput(row: Pick<BatchRow, 'cells'>, columnByField: Map<keyof SceneInput, string>, flags: SceneInput): RowInput {
  const input: Record<string, unknown> = { ...flags };
  const columnOf = new Map<keyof SceneInput, string>();
  for (const [field, column] of columnByField) {
    const value = row.cells[column];
    if (isBlank(value)) continue;
    const label = `column '${column}'`;
    input[field] = cellValue(field, value, label);
    columnOf.set(field, column);
  }
  return { input: input as SceneInput, columnOf };
}
