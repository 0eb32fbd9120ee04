// A batch file read as a stream, as many times as the batch needs: once to
// check every row, then again to send them, holding one row at a time. Input
// that can be read only once (stdin, a FIFO, a process substitution) is first
// copied to a private temp file, within the same size limit.
import { closeSync, createReadStream, createWriteStream, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { fileSystemProblem, UsageError } from '../errors.js';
import { detectFormat, type BatchFormat, type BatchRow } from './rows.js';

/** A file this large is a mistake, or a device that never ends. */
export const MAX_BATCH_FILE_BYTES = 256 * 1024 * 1024;
const CSV_OPTIONS = { bom: true, skip_empty_lines: true, trim: true } as const;
/** Rows handed on at a time: one promise per batch of rows, not per row. */
const BATCH_ROWS = 128;

export interface InputOptions {
  format?: string;
  stdin?: NodeJS.ReadableStream;
}

export class BatchInput {
  private constructor(
    /** The name the user gave ("-" for stdin). */
    readonly path: string,
    /** A regular file holding the input. */
    private readonly file: string,
    readonly format: BatchFormat,
    /** CSV: the header row. JSON Lines: none until rows are read (see the planner). */
    readonly header: string[],
    /** Line breaks in the file: at least as many as its rows, less one. */
    readonly lineBreaks: number,
    private readonly spool?: string,
  ) {}

  static async open(path: string, options: InputOptions = {}): Promise<BatchInput> {
    let file = path;
    let spool: string | undefined;
    try {
      const info = path === '-' ? undefined : statSync(path);
      if (info?.isDirectory()) throw new UsageError(`batch file ${path} is a directory; name a CSV or JSON Lines file`);
      if (info?.isFile()) {
        if (info.size > MAX_BATCH_FILE_BYTES) throw tooLarge(path);
      } else {
        // Read once into a private copy: the passes over the rows each need the whole input.
        spool = mkdtempSync(join(tmpdir(), 'aerial-batch-input-'));
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
    const format = detectFormat(path, await firstText(file), options.format);
    const header = format === 'csv' ? await csvHeader(file, path) : [];
    return new BatchInput(path, file, format, header, countLineBreaks(file), spool);
  }

  /**
   * Every data row, in file order, read afresh on each call, in batches. A
   * JSON Lines row that `skip` says is not needed is counted but not parsed
   * (it was checked on an earlier pass).
   */
  rows(options: { skip?: (row: number) => boolean } = {}): AsyncGenerator<BatchRow[]> {
    return this.format === 'csv' ? this.csvRows() : this.jsonRows(options.skip);
  }

  close(): void {
    if (this.spool) rmSync(this.spool, { recursive: true, force: true });
  }

  private async *csvRows(): AsyncGenerator<BatchRow[]> {
    const { parse } = await import('csv-parse');
    const { header } = this;
    let row = -1;
    let rows: BatchRow[] = [];
    let failure: Error | undefined;
    // Records are taken as the parser hands them on ('data'): an on_record hook would cost the parser an
    // object of context per record, about a third of its time.
    const parser = parse(CSV_OPTIONS);
    parser.on('data', (record: string[]) => {
      if (row++ === -1) return;
      const cells: Record<string, unknown> = {};
      for (let i = 0; i < header.length; i++) cells[header[i]!] = record[i];
      rows.push({ row, cells });
    });
    parser.on('error', (error: Error) => (failure ??= error));
    const check = () => {
      if (failure) throw new UsageError(`${this.path} is not valid CSV: ${failure.message}`);
    };
    try {
      for await (const text of textChunks(this.file)) {
        parser.write(text);
        check();
        if (rows.length >= BATCH_ROWS) {
          yield rows;
          rows = [];
        }
      }
      // 'end' once the last record has been handed on, not 'finish' (the last text taken).
      await new Promise<void>((resolve) => {
        for (const event of ['end', 'error', 'close']) parser.once(event, () => resolve());
        parser.end();
      });
      check();
      if (rows.length > 0) yield rows;
    } finally {
      parser.destroy();
    }
  }

  private async *jsonRows(skip?: (row: number) => boolean): AsyncGenerator<BatchRow[]> {
    let row = 0;
    let line = 0;
    let rows: BatchRow[] = [];
    for await (const texts of lines(textChunks(this.file))) {
      for (const text of texts) {
        line++;
        if (text.trim() === '') continue;
        row++;
        if (skip?.(row)) continue;
        rows.push({ row, cells: parseJsonRow(line === 1 ? text.replace(/^\uFEFF/, '') : text, line, this.path) });
      }
      if (rows.length >= BATCH_ROWS) {
        yield rows;
        rows = [];
      }
    }
    if (rows.length > 0) yield rows;
  }
}

export function parseJsonRow(text: string, line: number, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} line ${line} is not valid JSON: ${(error as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`${path} line ${line} must be a JSON object with scene fields such as {"lat": 48.85, "lng": 2.29}`);
  }
  return value as Record<string, unknown>;
}

function tooLarge(path: string): UsageError {
  return new UsageError(`batch file ${path === '-' ? '(stdin)' : path} is larger than ${MAX_BATCH_FILE_BYTES / 1024 / 1024} MiB; split it into several batches`);
}

/** Copies a stream to `file` (mode 0600), refusing more than the limit. */
async function copyBounded(stream: NodeJS.ReadableStream, file: string, path: string): Promise<void> {
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > MAX_BATCH_FILE_BYTES ? tooLarge(path) : null, chunk);
    },
  });
  await pipeline(stream, limit, createWriteStream(file, { mode: 0o600 }));
}

const CHUNK_BYTES = 8 * 1024;

/**
 * A file's bytes, chunk by chunk, through one buffer: reading a large input
 * several times leaves no trail of buffers for the collector.
 */
function* byteChunks(file: string): Generator<Buffer> {
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  try {
    for (let read = readSync(fd, buffer, 0, CHUNK_BYTES, null); read > 0; read = readSync(fd, buffer, 0, CHUNK_BYTES, null)) {
      yield buffer.subarray(0, read);
    }
  } finally {
    closeSync(fd);
  }
}

/** A file's text, chunk by chunk (UTF-8, characters never split); the event loop turns between chunks (signals, timers). */
export async function* textChunks(file: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for (const bytes of byteChunks(file)) {
    yield decoder.write(bytes);
    await new Promise(setImmediate);
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/** How many line breaks a file holds: a quick first look at how many rows to expect. */
function countLineBreaks(file: string): number {
  let count = 0;
  for (const bytes of byteChunks(file)) {
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count++;
  }
  return count;
}

/** The start of the file, for telling JSON Lines from CSV. */
async function firstText(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

async function csvHeader(file: string, path: string): Promise<string[]> {
  const { parse } = await import('csv-parse');
  const parser = createReadStream(file).pipe(parse({ ...CSV_OPTIONS, to: 1 }));
  let header: string[] = [];
  try {
    for await (const record of parser as AsyncIterable<string[]>) header = record;
  } catch (error) {
    throw new UsageError(`${path} is not valid CSV: ${(error as Error).message}`);
  } finally {
    parser.destroy();
  }
  const seen = new Set<string>();
  for (const column of header) {
    if (column === '') throw new UsageError(`${path}: the header row has an empty column name`);
    if (seen.has(column)) throw new UsageError(`${path}: column '${column}' appears twice in the header row`);
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
