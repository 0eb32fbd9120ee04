// Text the project did not write (a service's ids, fields and messages, a
// webhook's payload) as a type that makes itself harmless wherever it is
// rendered, so that no call site can forget (gh's Untrusted type is the
// model): in a line, as printable text (printable.ts: no escape sequences,
// controls, line breaks or direction overrides); in JSON, the exact value, which
// terminalSafeJson writes with the characters a reader could act on as escapes.
// For values a program hands on to a reader it does not control (an MCP tool's
// structured result, which a host may show a model as it is), harmlessValue
// writes those characters as visible escapes in the values themselves.
import { printable } from './printable.js';

/** Text from outside, held as it came; rendered, it is harmless. */
export class ForeignText {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The exact text, for programs (a comparison, a URL segment, a lookup): never to be shown as it is. */
  get raw(): string {
    return this.#value;
  }

  /** As a line shows it: printable, on one line, cut at `max` characters. */
  shown(max = 200): string {
    return printable(this.#value, max);
  }

  /** In a template or a concatenation: printable (`${id}`). */
  toString(): string {
    return this.shown();
  }

  /** In JSON: the exact value (terminalSafeJson escapes what must be). */
  toJSON(): string {
    return this.#value;
  }

  /** What console.log and util.inspect show: printable too. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `ForeignText(${JSON.stringify(this.shown())})`;
  }
}

/** Text from outside, as a ForeignText (undefined stays undefined). */
export function foreign(value: string): ForeignText;
export function foreign(value: string | undefined): ForeignText | undefined;
export function foreign(value: string | undefined): ForeignText | undefined {
  return value === undefined ? undefined : new ForeignText(value);
}

// Every control character (C0, DEL, C1), line and paragraph separators, the marks and overrides that
// change the direction text is shown in, and lone surrogates (which are not characters).
const HARMFUL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|\p{Cs}/gu;
const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A string with every harmful character written as a visible `\uXXXX`: what a reader sees is what is there. */
export function harmlessString(text: string): string {
  return text.replace(HARMFUL, escaped);
}

/**
 * `value` with every string in it (keys too) made harmless (harmlessString),
 * ForeignText included; numbers, booleans and null as they are. For data a
 * reader may be shown as it is: nothing in it can forge a line, reorder text or
 * drive a terminal.
 */
export function harmlessValue(value: unknown): unknown {
  if (typeof value === 'string') return harmlessString(value);
  if (value instanceof ForeignText) return harmlessString(value.raw);
  if (Array.isArray(value)) return value.map(harmlessValue);
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') return harmlessValue((value as { toJSON(): unknown }).toJSON());
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [harmlessString(key), harmlessValue(entry)]));
  }
  return value;
}
