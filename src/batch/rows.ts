// Reads a batch file (CSV with a header row, or JSON Lines) into rows, and
// maps a row's columns onto scene input. Column names follow the scene flags
// in camelCase or kebab-case (aspectRatio, aspect-ratio); columns that name no
// scene field are kept for the output template ({id}, {name}, …).
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { fileSystemProblem, UsageError } from '../errors.js';
import type { SceneInput } from '../request.js';
import { columnNames, SCENE_FIELD_NAMES, sceneSpec, type SceneField } from '../scene-vocabulary.js';

export type BatchFormat = 'csv' | 'jsonl';

export interface BatchRow {
  /** 1-based number among the data records (the header is not a row). */
  row: number;
  /** Line of the file where the record starts, for messages. */
  line: number;
  /** Cell values by column name as written in the file. */
  cells: Record<string, unknown>;
}

export interface BatchFile {
  format: BatchFormat;
  /** Column names in first-seen order (the CSV header, or the union of JSONL keys). */
  columns: string[];
  rows: BatchRow[];
}

/** Scene fields a column may set, by squashed name (lower case, no separators). */
const FIELD_BY_SQUASHED: ReadonlyMap<string, SceneField> = new Map(
  SCENE_FIELD_NAMES.flatMap((field) => columnNames(field).map((name) => [squash(name), field] as const)),
);

export function squash(name: string): string {
  return name.trim().replace(/[\s_-]/g, '').toLowerCase();
}

/** Which scene field a column sets, if any. */
export function sceneFieldOf(column: string): keyof SceneInput | undefined {
  return FIELD_BY_SQUASHED.get(squash(column));
}

/** Maps each scene field to the one column that sets it; two columns for one field are refused. */
export function mapColumns(columns: string[]): Map<keyof SceneInput, string> {
  const byField = new Map<keyof SceneInput, string>();
  for (const column of columns) {
    const field = sceneFieldOf(column);
    if (!field) continue;
    const other = byField.get(field);
    if (other !== undefined) throw new UsageError(`batch file: columns '${other}' and '${column}' both set ${field}; keep one`);
    byField.set(field, column);
  }
  return byField;
}

export function detectFormat(path: string, text: string, given?: string): BatchFormat {
  if (given !== undefined) {
    const format = given.trim().toLowerCase();
    if (format === 'csv') return 'csv';
    if (format === 'jsonl' || format === 'ndjson') return 'jsonl';
    throw new UsageError(`--format must be one of csv, jsonl; got '${given}'`);
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  // No telling extension (stdin, .txt): a JSON Lines file starts with an object.
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

export async function readBatchFile(path: string, options: { format?: string; stdin?: NodeJS.ReadableStream } = {}): Promise<BatchFile> {
  let text: string;
  try {
    // A stream either way, and bounded: a FIFO or process substitution is fine, a device that never ends is not.
    text = await readStream(path === '-' ? (options.stdin ?? process.stdin) : createReadStream(path), path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`batch file ${path} does not exist`);
    if (code === 'EISDIR') throw new UsageError(`batch file ${path} is a directory; name a CSV or JSON Lines file`);
    throw new UsageError(`cannot read batch file ${path}: ${fileSystemProblem(error) ?? (error as Error).message}`);
  }
  const format = detectFormat(path, text, options.format);
  const file = format === 'csv' ? await parseCsv(text, path) : parseJsonLines(text, path);
  if (file.rows.length === 0) throw new UsageError(`batch file ${path} has no rows`);
  return file;
}

/** Far more rows than a batch plans in memory; a file this large is a mistake, or a device. */
const MAX_BATCH_FILE_BYTES = 256 * 1024 * 1024;

async function readStream(stream: NodeJS.ReadableStream, path: string): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    bytes += buffer.length;
    if (bytes > MAX_BATCH_FILE_BYTES) {
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      throw new UsageError(`batch file ${path === '-' ? '(stdin)' : path} is larger than ${MAX_BATCH_FILE_BYTES / 1024 / 1024} MiB; split it into several batches`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function parseCsv(text: string, path = 'batch file'): Promise<BatchFile> {
  const { parse } = await import('csv-parse/sync');
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
  } catch (error) {
    throw new UsageError(`${path} is not valid CSV: ${(error as Error).message}`);
  }
  const [header, ...data] = records;
  if (!header) return { format: 'csv', columns: [], rows: [] };
  const columns = header.record;
  const seen = new Set<string>();
  for (const column of columns) {
    if (column === '') throw new UsageError(`${path}: the header row has an empty column name`);
    if (seen.has(column)) throw new UsageError(`${path}: column '${column}' appears twice in the header row`);
    seen.add(column);
  }
  const rows = data.map(({ record, info }, index) => {
    const cells: Record<string, unknown> = {};
    columns.forEach((column, i) => {
      cells[column] = record[i];
    });
    return { row: index + 1, line: info.lines, cells };
  });
  return { format: 'csv', columns, rows };
}

export function parseJsonLines(text: string, path = 'batch file'): BatchFile {
  const columns: string[] = [];
  const known = new Set<string>();
  const rows: BatchRow[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new UsageError(`${path} line ${index + 1} is not valid JSON: ${(error as Error).message}`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw new UsageError(`${path} line ${index + 1} must be a JSON object with scene fields such as {"lat": 48.85, "lng": 2.29}`);
    }
    for (const key of Object.keys(value)) {
      if (!known.has(key)) {
        known.add(key);
        columns.push(key);
      }
    }
    rows.push({ row: rows.length + 1, line: index + 1, cells: value as Record<string, unknown> });
  });
  return { format: 'jsonl', columns, rows };
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function parseBoolean(value: unknown, label: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (['true', 'yes', 'y', '1', 'on'].includes(text)) return true;
  if (['false', 'no', 'n', '0', 'off'].includes(text)) return false;
  throw new UsageError(`${label} must be true or false; got '${String(value)}'`);
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
      return parseBoolean(value, label);
    case 'coordinate':
      return typeof value === 'number' ? value : String(value);
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
export function rowSceneInput(row: BatchRow, columnByField: Map<keyof SceneInput, string>, flags: SceneInput): RowInput {
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
