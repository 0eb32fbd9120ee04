// A batch file read as a stream, as many times as the batch needs: once to
// check every row, then again to send them, holding one row at a time. Input
// that can be read only once (stdin, a FIFO, a process substitution) is first
// copied to a private temp file, within the same size limit.
//
// What is read, and what is refused (one line naming the file, the line, what
// is wrong and what to do), before any row is planned:
// - the bytes must be UTF-8 (a UTF-8 BOM is dropped); UTF-16, a workbook, a
//   NUL or any byte that is not UTF-8 is refused (input-text.ts);
// - line ends may be LF, CRLF or a CR alone, mixed or not;
// - CSV: cells cut by ',' (or --delimiter, an Excel `sep=;` line, or a tab for
//   .tsv; a file plainly cut by another is refused, csv-dialect.ts), quoted as
//   RFC 4180 has it; rows of
//   empty cells (`,,`) and empty lines are skipped; a header's trailing empty
//   cells are dropped; a row may have fewer cells than the header, not more
//   (unless the extra ones are empty);
// - JSON Lines: one object per line; blank lines, a BOM, CRLF and white space
//   around an object are fine;
// - JSON: an array of objects, or objects one after another (json-values.ts).
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { makePrivateTempDirectory } from '../files/atomic-file.js';
import { fileSystemProblem, UsageError } from '../lifecycle/errors.js';
import { checkDelimiter, delimiterFlag, parseDelimiter } from './csv-dialect.js';
import { inputError, shownPath, surveyText, textChunks, unixLineEnds } from './input-text.js';
import { JsonValues } from './json-values.js';
import { detectFormat, type BatchFormat, type BatchRow } from './row-columns.js';

/** A file this large is a mistake, or a device that never ends. */
export const MAX_BATCH_FILE_BYTES = 256 * 1024 * 1024;
/** Rows handed on at a time: one promise per batch of rows, not per row. */
const BATCH_ROWS = 128;

function csvOptions(delimiter: string, fromLine = 1) {
  return {
    // Past an Excel `sep=;` line, when there is one.
    from_line: fromLine,
    bom: true,
    trim: true,
    delimiter,
    // Any line end, mixed within a file too (tried in this order, so a CRLF is one).
    record_delimiter: ['\r\n', '\n', '\r'],
    skip_empty_lines: true,
    // A row of empty cells (`,,`) is a blank row a spreadsheet wrote, not a row to send.
    skip_records_with_empty_values: true,
    // Rows shorter or longer than the header are looked at by the reader (see csvRows).
    relax_column_count: true,
  };
}

export interface InputOptions {
  format?: string;
  /** --delimiter, for CSV. */
  delimiter?: string;
  stdin?: NodeJS.ReadableStream;
}

export class BatchInput {
  private constructor(
    /** The name the user gave ("-" for stdin). */
    readonly path: string,
    /** A regular file holding the input. */
    private readonly file: string,
    readonly format: BatchFormat,
    /** CSV: the header row's named columns. JSON: none until rows are read (see the planner). */
    readonly header: string[],
    /** At least as many as the rows the file holds. */
    readonly rowsAtMost: number,
    /** CSV: the cell separator. */
    private readonly delimiter: string,
    /** CSV: the header's line (2 after a `sep=` line). */
    private readonly fromLine: number,
    private readonly spool?: string,
  ) {}

  static async open(path: string, options: InputOptions = {}): Promise<BatchInput> {
    // The flags before the file: a bad one is refused whatever the file holds.
    const given = options.format === undefined ? undefined : detectFormat(path, '', options.format);
    const delimiter = options.delimiter === undefined ? undefined : parseDelimiter(options.delimiter);
    if (delimiter !== undefined && given !== undefined && given !== 'csv') throw new UsageError(`--delimiter is for CSV files; --format is ${given}`);
    let file = path;
    let spool: string | undefined;
    try {
      const info = path === '-' ? undefined : statSync(path);
      if (info?.isDirectory()) throw new UsageError(`batch file ${path} is a directory; name a CSV or JSON Lines file`);
      if (info?.isFile()) {
        if (info.size > MAX_BATCH_FILE_BYTES) throw tooLarge(path);
      } else {
        // Read once into a private copy: the passes over the rows each need the whole input.
        spool = makePrivateTempDirectory('aerial-batch-input-');
        file = join(spool, 'input');
        await copyBounded(path === '-' ? (options.stdin ?? process.stdin) : createReadStream(path), file, path);
      }
    } catch (error) {
      if (spool) rmSync(spool, { recursive: true, force: true });
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new UsageError(`batch file ${path} does not exist`);
      if (code === 'EISDIR') throw new UsageError(`batch file ${path} is a directory; name a CSV or JSON Lines file`);
      throw new UsageError(`cannot read batch file ${path}: ${fileSystemProblem(error) ?? (error as Error).message}`);
    }
    try {
      const text = surveyText(file, path);
      if (text.blank) throw inputError(path, undefined, 'is empty: nothing to generate (write a header row, then a row per image)');
      const start = await firstText(file);
      const format = given ?? detectFormat(path, start);
      if (delimiter !== undefined && format !== 'csv') throw new UsageError(`--delimiter is for CSV files; ${shownPath(path)} reads as ${format === 'json' ? 'JSON' : 'JSON Lines'}`);
      // Excel reads, and can write, a first line `sep=;` that says which separator the file uses.
      const declared = format === 'csv' ? /^\uFEFF?sep=([,;\t|])\s*(\r\n|\r|\n)/i.exec(start)?.[1] : undefined;
      if (declared !== undefined && delimiter !== undefined && declared !== delimiter) {
        throw inputError(path, 1, `says its separator is ${delimiterFlag(declared).slice(12)} (sep=${declared}), not the one --delimiter names: leave --delimiter out`);
      }
      const separator = delimiter ?? declared ?? (extname(path).toLowerCase() === '.tsv' ? '\t' : ',');
      if (format === 'csv' && declared === undefined) checkDelimiter(path, start, separator, delimiter !== undefined);
      const fromLine = declared === undefined ? 1 : 2;
      const header = format === 'csv' ? await csvHeader(file, path, separator, fromLine) : [];
      const rowsAtMost = format === 'json' ? Math.max(1, text.braces) : text.lineEnds + 1;
      return new BatchInput(path, file, format, header, rowsAtMost, separator, fromLine, spool);
    } catch (error) {
      if (spool) rmSync(spool, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Every data row, in file order, read afresh on each call, in batches. A
   * JSON row that `skip` says is not needed is counted but not parsed (it was
   * checked on an earlier pass).
   */
  rows(options: { skip?: (row: number) => boolean } = {}): AsyncGenerator<BatchRow[]> {
    if (this.format === 'csv') return this.csvRows();
    return this.format === 'json' ? this.jsonValueRows(options.skip) : this.jsonLineRows(options.skip);
  }

  /** CSV: the cell separator the rows are cut by (as given, declared or taken by default). */
  get separator(): string | undefined {
    return this.format === 'csv' ? this.delimiter : undefined;
  }

  /** The SHA-256 of the input's bytes as read (hex): what a manifest records to tell this file from another. */
  async sha256(): Promise<string> {
    const digest = createHash('sha256');
    await pipeline(createReadStream(this.file), digest);
    return digest.digest('hex');
  }

  close(): void {
    if (this.spool) rmSync(this.spool, { recursive: true, force: true });
  }

  private async *csvRows(): AsyncGenerator<BatchRow[]> {
    const { parse } = await import('csv-parse');
    const { header, path } = this;
    const named = header.length;
    let row = -1;
    let rows: BatchRow[] = [];
    let failure: Error | undefined;
    // Records are taken as the parser hands them on ('data'): an on_record hook would cost the parser an
    // object of context per record, about a third of its time.
    const parser = parse(csvOptions(this.delimiter, this.fromLine));
    let countedTwice = 0;
    parser.on('data', (record: string[]) => {
      countedTwice += crlfsInside(record);
      if (row++ === -1 || failure) return;
      // Cells past the named columns must be empty: a value there belongs to no column.
      if (record.length > named) {
        for (let i = named; i < record.length; i++) {
          if (record[i] !== '') {
            failure = extraCell(path, parser.info.lines - countedTwice, record, i, named);
            return;
          }
        }
      }
      const cells: Record<string, unknown> = {};
      for (let i = 0; i < named; i++) cells[header[i]!] = record[i];
      // The line the record ends on, as the parser counts it (a number it keeps anyway): what an invalid row is named by.
      rows.push({ row, line: parser.info.lines - countedTwice, cells, lineEnds: true });
    });
    // Listened for before the first write: a small file's records, or its error, can all come within it.
    const ended = new Promise<void>((resolve) => {
      for (const event of ['end', 'error', 'close']) parser.once(event, () => resolve());
    });
    parser.on('error', (error: Error) => (failure ??= csvError(path, error, countedTwice)));
    const check = () => {
      if (failure) throw failure;
    };
    try {
      for await (const text of textChunks(this.file)) {
        check();
        parser.write(text);
        check();
        if (rows.length >= BATCH_ROWS) {
          yield rows;
          rows = [];
        }
      }
      parser.end();
      // 'end' once the last record has been handed on, not 'finish' (the last text taken).
      await ended;
      check();
      if (rows.length > 0) yield rows;
    } finally {
      parser.destroy();
    }
  }

  private async *jsonLineRows(skip?: (row: number) => boolean): AsyncGenerator<BatchRow[]> {
    let row = 0;
    let line = 0;
    let rows: BatchRow[] = [];
    for await (const texts of lines(unixLineEnds(textChunks(this.file)))) {
      for (const text of texts) {
        line++;
        if (isBlankLine(text)) continue;
        row++;
        if (skip?.(row)) continue;
        rows.push({ row, line, cells: parseJsonRow(line === 1 ? text.replace(/^\uFEFF/, '') : text, line, this.path) });
      }
      if (rows.length >= BATCH_ROWS) {
        yield rows;
        rows = [];
      }
    }
    if (rows.length > 0) yield rows;
  }

  private async *jsonValueRows(skip?: (row: number) => boolean): AsyncGenerator<BatchRow[]> {
    const values = new JsonValues(this.path);
    let row = 0;
    let rows: BatchRow[] = [];
    for await (const text of unixLineEnds(textChunks(this.file))) {
      for (const value of values.push(text)) {
        row++;
        if (!skip?.(row)) rows.push({ row, line: value.line, cells: parseJsonRow(value.text, value.line, this.path) });
      }
      if (rows.length >= BATCH_ROWS) {
        yield rows;
        rows = [];
      }
    }
    values.end();
    if (rows.length > 0) yield rows;
  }
}

/** White space only (a BOM included): a blank line between JSON Lines. */
function isBlankLine(text: string): boolean {
  return text === '' || /^[\s\uFEFF]*$/.test(text);
}

function parseJsonRow(text: string, line: number, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const trimmed = text.trim();
    // `jq .` output, or an array, in a file read as JSON Lines.
    const hint =
      trimmed === '{' || trimmed === '[' || trimmed.startsWith('[{') || trimmed.startsWith('"')
        ? ': JSON Lines holds one object per line (jq -c writes them so); for a JSON array or objects over several lines pass --format json'
        : ': fix the line, or remove it';
    throw inputError(path, line, `not valid JSON (${(error as Error).message})${hint}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw inputError(path, line, 'not a JSON object: rows are objects such as {"lat": 48.85, "lng": 2.29}');
  }
  return value as Record<string, unknown>;
}

function tooLarge(path: string): UsageError {
  return new UsageError(`batch file ${shownPath(path)} is larger than ${MAX_BATCH_FILE_BYTES / 1024 / 1024} MiB; split it into several batches`);
}

/** Copies a stream to the new file `file` (created exclusively, mode 0600), refusing more than the limit. */
async function copyBounded(stream: NodeJS.ReadableStream, file: string, path: string): Promise<void> {
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > MAX_BATCH_FILE_BYTES ? tooLarge(path) : null, chunk);
    },
  });
  await pipeline(stream, limit, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
}

/** The start of the file, for telling the format and the separator. */
async function firstText(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // A character cut at the end of the buffer is dropped, not made U+FFFD.
    return new TextDecoder('utf-8').decode(buffer.subarray(0, bytesRead), { stream: true });
  } finally {
    await handle.close();
  }
}

/**
 * csv-parse counts a CRLF inside a quoted cell as two lines (its CR ends one, its LF another) and one between
 * records as one. A record's line is the parser's count less the CRLFs inside the cells read so far, which
 * reach us as they were in the file (only the white space around a cell is trimmed).
 */
function crlfsInside(record: string[]): number {
  let count = 0;
  for (const cell of record) {
    for (let at = cell.indexOf('\r\n'); at !== -1; at = cell.indexOf('\r\n', at + 2)) count++;
  }
  return count;
}

/**
 * csv-parse's errors, as the line that is wrong and what to do about it. `countedTwice`: the CRLFs inside
 * the cells of the records before it (crlfsInside); one inside the broken record itself is still counted twice.
 */
function csvError(path: string, error: Error & { code?: string; lines?: number }, countedTwice = 0): UsageError {
  if (error instanceof UsageError) return error;
  const line = typeof error.lines === 'number' ? error.lines - countedTwice : undefined;
  switch (error.code) {
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return inputError(path, line, 'a quoted cell goes on after its closing quote: a quote inside a quoted cell is written twice ("say ""hi""")');
    case 'INVALID_OPENING_QUOTE':
      return inputError(path, line, 'a quote inside a cell that is not quoted: quote the whole cell and write the quote twice ("5 ""tall""")');
    case 'CSV_QUOTE_NOT_CLOSED':
      return inputError(path, line, 'a quoted cell is never closed (its closing quote is missing): close it');
    default:
      // Without csv-parse's own "at line N", which does not know of the CRLFs it counted twice.
      return inputError(path, line, `not valid CSV (${error.message.replace(/ at line \d+/g, '')}): fix the line, or save the file again from the spreadsheet`);
  }
}

/** A value past the header's named columns. */
function extraCell(path: string, line: number, record: string[], at: number, named: number): UsageError {
  const width = record.length;
  return inputError(
    path,
    line,
    `${width} cells where the header row names ${named} column${named === 1 ? '' : 's'} (a value '${clip(record[at]!)}' in column ${at + 1}): quote cells that hold the separator ("a, b"), or name the column in the header row`,
  );
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

async function csvHeader(file: string, path: string, delimiter: string, fromLine: number): Promise<string[]> {
  const { parse } = await import('csv-parse');
  const parser = createReadStream(file).pipe(parse({ ...csvOptions(delimiter, fromLine), to: 1 }));
  let header: string[] = [];
  let line = fromLine;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      header = record;
      line = parser.info.lines - crlfsInside(record);
    }
  } catch (error) {
    throw csvError(path, error as Error);
  } finally {
    parser.destroy();
  }
  // Trailing empty cells are a spreadsheet's: its rows reach past the last named column.
  let named = header.length;
  while (named > 0 && header[named - 1] === '') named--;
  header = header.slice(0, named);
  const seen = new Set<string>();
  for (const [index, column] of header.entries()) {
    if (column === '') throw inputError(path, line, `column ${index + 1} of the header row has no name: name it, or remove the column`);
    if (seen.has(column)) throw inputError(path, line, `column '${column}' appears twice in the header row: rename or remove one`);
    seen.add(column);
  }
  return header;
}

/** The lines of a text stream, without their line breaks (LF or CRLF), as they come: those of each chunk at a time. */
export async function* lines(stream: AsyncIterable<string | Buffer>): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + (chunk as string);
    const found: string[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      found.push(text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
    if (found.length > 0) yield found;
  }
  if (rest !== '') yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}
