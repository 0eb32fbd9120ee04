// What the index needs of a manifest line (its key, status, bytes and, for a
// row a resumed batch can take without planning it again, its input digest and file), read
// straight from the line's bytes when the line is a flat JSON object such as
// ManifestWriter writes: no string, no object, no garbage per line. A
// resumed batch reads its whole manifest (two lines per row) before its first
// request, and JSON.parse of every line was most of that time. Anything the
// scan is not sure of (an escape in a name, a nested value, a fraction, a
// name given twice, a status it does not know) is left to JSON.parse, so the
// two ways agree on every line.

/** A line's key (four words: its 32 hex digits), status code and bytes. */
export interface LineFacts {
  key: [number, number, number, number];
  /** 1 started, 2 done, 3 failed. */
  status: number;
  /** -1 when the line has no usable byte count. */
  bytes: number;
  /** The digest of what the row was planned from (32 hex digits, as four words), when the line has one. */
  input?: [number, number, number, number];
  /** The row number, when the line has a whole one (-1 otherwise). */
  row: number;
  /** Where the file's name lies in the bytes (between its quotes; it has no escapes), when the line has one and a digest. */
  file?: { start: number; end: number };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

/** The value of hex digit `c` (0-9, a-f), or -1. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function isAsciiHex(c: number): boolean {
  return hexDigit(c) !== -1 || (c >= 0x41 && c <= 0x46);
}

/** Whether bytes[start, end) spell `text` (ASCII). */
function spells(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The names the scan reads: 1 key, 2 status, 3 bytes, 4 input, 5 file, 6 row; any other name is 0. */
function nameCode(bytes: Uint8Array, start: number, end: number): number {
  if (spells(bytes, start, end, 'key')) return 1;
  if (spells(bytes, start, end, 'status')) return 2;
  if (spells(bytes, start, end, 'bytes')) return 3;
  if (spells(bytes, start, end, 'input')) return 4;
  if (spells(bytes, start, end, 'file')) return 5;
  return spells(bytes, start, end, 'row') ? 6 : 0;
}

/** The end of the JSON string whose opening quote is at `at` (just past its closing quote), or -1 when it is not a valid string. */
function skipString(bytes: Uint8Array, at: number, end: number): number {
  for (let i = at + 1; i < end; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const next = bytes[i + 1];
      if (next === 0x75) {
        // \uXXXX
        for (let h = i + 2; h < i + 6; h++) if (h >= end || !isAsciiHex(bytes[h]!)) return -1;
        i += 5;
      } else if (next === QUOTE || next === BACKSLASH || next === 0x2f || next === 0x62 || next === 0x66 || next === 0x6e || next === 0x72 || next === 0x74) {
        i += 1;
      } else return -1;
    }
  }
  return -1;
}

/**
 * The facts of the line bytes[start, end) (its line break left out), or
 * undefined when the line must be read by JSON.parse. Only lines that are a
 * flat object of strings, whole numbers, true, false and null, with no space
 * between tokens, a known status, a key of 32 lowercase hex digits without
 * escapes and bytes (if any) a whole number not below 0, are read here.
 */
export function scanLine(bytes: Uint8Array, start: number, end: number): LineFacts | undefined {
  if (bytes[start] !== OPEN) return undefined;
  let keyAt = -1;
  let inputAt = -1;
  let file: LineFacts['file'];
  let fileEscaped = false;
  let row = -1;
  let status = 0;
  let size = -1;
  let seenBytes = false;
  let i = start + 1;
  if (bytes[i] === CLOSE) return undefined;
  for (;;) {
    if (bytes[i] !== QUOTE) return undefined;
    const nameStart = i + 1;
    const nameEnd = skipString(bytes, i, end) - 1;
    if (nameEnd < 0) return undefined;
    // A name with an escape could spell one of ours: left to JSON.parse.
    for (let n = nameStart; n < nameEnd; n++) if (bytes[n] === BACKSLASH) return undefined;
    i = nameEnd + 1;
    if (bytes[i] !== COLON) return undefined;
    i++;
    const name = nameCode(bytes, nameStart, nameEnd);
    const c = bytes[i];
    if (c === QUOTE) {
      const valueEnd = skipString(bytes, i, end);
      if (valueEnd < 0) return undefined;
      if (name === 1) {
        if (keyAt !== -1 || valueEnd - i !== 34) return undefined;
        keyAt = i + 1;
      } else if (name === 2) {
        if (status !== 0) return undefined;
        status = spells(bytes, i + 1, valueEnd - 1, 'started') ? 1 : spells(bytes, i + 1, valueEnd - 1, 'done') ? 2 : spells(bytes, i + 1, valueEnd - 1, 'failed') ? 3 : 0;
        if (status === 0) return undefined;
      } else if (name === 3 || name === 6) return undefined;
      else if (name === 4) {
        if (inputAt !== -1 || valueEnd - i !== 34) return undefined;
        inputAt = i + 1;
      } else if (name === 5) {
        if (file) return undefined;
        file = { start: i + 1, end: valueEnd - 1 };
        for (let n = file.start; n < file.end; n++) if (bytes[n] === BACKSLASH) fileEscaped = true;
      }
      i = valueEnd;
    } else if (c !== undefined && ((c >= 0x30 && c <= 0x39) || c === 0x2d)) {
      // A whole number: -?(0|[1-9][0-9]*), at most 15 digits; anything else is left to JSON.parse.
      const negative = c === 0x2d;
      let at = negative ? i + 1 : i;
      const digitsStart = at;
      let value = 0;
      while (at < end && bytes[at]! >= 0x30 && bytes[at]! <= 0x39) value = value * 10 + (bytes[at++]! - 0x30);
      const digits = at - digitsStart;
      if (digits === 0 || digits > 15 || (digits > 1 && bytes[digitsStart] === 0x30)) return undefined;
      if (name !== 0 && name !== 3 && name !== 6) return undefined;
      if (name === 3) {
        if (seenBytes || negative) return undefined;
        seenBytes = true;
        size = value;
      } else if (name === 6) {
        if (row !== -1 || negative) return undefined;
        row = value;
      }
      i = at;
    } else if (spells(bytes, i, Math.min(i + 4, end), 'true') || spells(bytes, i, Math.min(i + 4, end), 'null')) {
      if (name !== 0) return undefined;
      i += 4;
    } else if (spells(bytes, i, Math.min(i + 5, end), 'false')) {
      if (name !== 0) return undefined;
      i += 5;
    } else return undefined;
    if (bytes[i] === COMMA) {
      i++;
      continue;
    }
    if (bytes[i] === CLOSE && i + 1 === end) break;
    return undefined;
  }
  if (keyAt === -1 || status === 0) return undefined;
  const key = hexWords(bytes, keyAt);
  if (!key) return undefined;
  const facts: LineFacts = { key, status, bytes: size, row };
  if (inputAt !== -1) {
    const input = hexWords(bytes, inputAt);
    if (!input) return undefined;
    facts.input = input;
  }
  if (file && facts.input) {
    // The name is wanted (a done line with a digest) but has an escape: left to JSON.parse, which undoes it.
    if (fileEscaped) return undefined;
    facts.file = file;
  }
  return facts;
}

/** The four words of the 32 lowercase hex digits at `at`, or undefined when they are not that. */
function hexWords(bytes: Uint8Array, at: number): [number, number, number, number] | undefined {
  const words: [number, number, number, number] = [0, 0, 0, 0];
  for (let w = 0; w < 4; w++) {
    let word = 0;
    for (let d = 0; d < 8; d++) {
      const digit = hexDigit(bytes[at + w * 8 + d]!);
      if (digit === -1) return undefined;
      word = word * 16 + digit;
    }
    words[w] = word;
  }
  return words;
}
