// A batch file's bytes as text: checked to be UTF-8 before a row is read, so
// that no row is ever sent with text the file did not hold (a Windows-1252 'é'
// decoded as U+FFFD), and counted for line ends of every kind (LF, CRLF, and
// the CR alone of old Mac exports), which the rows' tables are sized from.
import { closeSync, openSync, readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { UsageError } from '../lifecycle/errors.js';

/** How a batch file is named in messages. */
export function shownPath(path: string): string {
  return path === '-' ? '(stdin)' : path;
}

/** A refusal of the input: the file, the line, what is wrong and what to do, in one line. */
export function inputError(path: string, line: number | undefined, message: string): UsageError {
  return new UsageError(line === undefined ? `${shownPath(path)} ${message}` : `${shownPath(path)} line ${line}: ${message}`);
}

const CHUNK_BYTES = 8 * 1024;
/** The survey reads in larger chunks: it yields nothing between them. */
const SURVEY_CHUNK_BYTES = 64 * 1024;

/**
 * A file's bytes, chunk by chunk, through one buffer: reading a large input
 * several times leaves no trail of buffers for the collector.
 */
export function* byteChunks(file: string, chunkBytes = CHUNK_BYTES): Generator<Buffer> {
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(chunkBytes);
  try {
    for (let read = readSync(fd, buffer, 0, chunkBytes, null); read > 0; read = readSync(fd, buffer, 0, chunkBytes, null)) {
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

/**
 * Text chunks with every line end made '\n' (CRLF and a CR alone alike). A CR
 * that ends a chunk waits for the next one, which may start with its LF.
 */
export async function* unixLineEnds(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let held = false;
  for await (const chunk of chunks) {
    let text: string = held ? `\r${chunk}` : chunk;
    held = text.endsWith('\r');
    if (held) text = text.slice(0, -1);
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    if (text !== '') yield text;
  }
  if (held) yield '\n';
}

export interface TextSurvey {
  /** Line ends of every kind: LF, CRLF and a CR alone each count one. */
  lineEnds: number;
  /** '{' characters: at least as many as the objects a JSON array holds. */
  braces: number;
  /** Nothing but white space (and a BOM). */
  blank: boolean;
}

const LF = 10;
const CR = 13;
const BRACE = 0x7b;

/**
 * One pass over the file's bytes before anything is parsed: refuses what is
 * not UTF-8 text, naming the line, and counts what the readers need sized.
 */
export function surveyText(file: string, path: string): TextSurvey {
  const survey: TextSurvey = { lineEnds: 0, braces: 0, blank: true };
  /** Bytes of a character split between two chunks. */
  let carry: Buffer | undefined;
  let first = true;
  /** The previous chunk ended with a CR: a LF opening this one belongs to it. */
  let afterCr = false;
  for (const chunk of byteChunks(file, SURVEY_CHUNK_BYTES)) {
    if (first) {
      refuseOtherEncodings(chunk, path);
      first = false;
    }
    const bytes = carry ? Buffer.concat([carry, chunk]) : chunk;
    // Checked up to the last whole character; the rest waits for the next chunk.
    const whole = bytes.length - incompleteTail(bytes);
    const lineEndsBefore = survey.lineEnds;
    // Line ends before this chunk's own bytes (carried bytes hold none).
    countLines(chunk, survey, afterCr);
    afterCr = chunk[chunk.length - 1] === CR;
    if (!isUtf8(bytes.subarray(0, whole))) throw notUtf8(path, lineEndsBefore, bytes, firstInvalid(bytes.subarray(0, whole)), carry?.length ?? 0);
    const nul = chunk.indexOf(0);
    if (nul !== -1) throw inputError(path, lineEndsBefore + linesIn(chunk, nul) + 1, 'holds a NUL character, so it is not a text file (UTF-16?): re-save it as UTF-8');
    if (survey.blank && !/^[\s\uFEFF]*$/.test(chunk.toString('utf8'))) survey.blank = false;
    carry = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
  }
  if (carry) throw inputError(path, survey.lineEnds + 1, 'not UTF-8 (it ends inside a character): re-save the file as UTF-8');
  return survey;
}

function countLines(chunk: Buffer, survey: TextSurvey, afterCr: boolean): void {
  for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) {
    // The LF of a CRLF whose CR was counted at the end of the previous chunk.
    if (!(at === 0 && afterCr)) survey.lineEnds++;
  }
  for (let at = chunk.indexOf(CR); at !== -1; at = chunk.indexOf(CR, at + 1)) {
    // A CR counts when no LF follows it (a CR ending the chunk counts now; its LF, if any, is then not counted).
    if (chunk[at + 1] !== LF) survey.lineEnds++;
  }
  for (let at = chunk.indexOf(BRACE); at !== -1; at = chunk.indexOf(BRACE, at + 1)) survey.braces++;
}

/** Line ends in chunk[0, end). */
function linesIn(chunk: Buffer, end: number): number {
  let count = 0;
  for (let i = 0; i < end; i++) {
    if (chunk[i] === LF ? chunk[i - 1] !== CR || i === 0 : chunk[i] === CR) count++;
  }
  return count;
}

/** Byte-order marks and file signatures that say the file is not UTF-8 text at all. */
function refuseOtherEncodings(start: Buffer, path: string): void {
  if ((start[0] === 0xff && start[1] === 0xfe) || (start[0] === 0xfe && start[1] === 0xff)) {
    throw inputError(path, 1, 'is UTF-16 (Excel\'s "Unicode Text"), not UTF-8: re-save it as UTF-8 (in Excel: "CSV UTF-8")');
  }
  if (start[0] === 0x50 && start[1] === 0x4b && start[2] === 3 && start[3] === 4) {
    throw inputError(path, undefined, 'is a zip file (an Excel or LibreOffice workbook?), not CSV or JSON: save the sheet as CSV UTF-8');
  }
}

/** Bytes at the end of `bytes` that start a character not finished there. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if (byte < 0x80) return 0;
    if (byte >= 0xc0) {
      const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return needs > back ? back : 0;
    }
  }
  return 0;
}

/** Where the first byte that is not UTF-8 lies (rarely run: only for a message). */
function firstInvalid(bytes: Buffer): number {
  const decoder = () => new TextDecoder('utf-8', { fatal: true });
  // A prefix that decodes (its last character possibly unfinished) has no bad byte: the first bad one is past it.
  let low = 0;
  let high = bytes.length;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    try {
      decoder().decode(bytes.subarray(0, middle), { stream: true });
      low = middle;
    } catch {
      high = middle - 1;
    }
  }
  return low;
}

function notUtf8(path: string, lineEndsBefore: number, bytes: Buffer, at: number, carried: number): UsageError {
  const line = lineEndsBefore + linesIn(bytes.subarray(carried), Math.max(0, at - carried)) + 1;
  return inputError(path, line, 'not UTF-8 (Windows-1252 or Latin-1?): re-save the file as UTF-8 (in Excel: "CSV UTF-8")');
}
