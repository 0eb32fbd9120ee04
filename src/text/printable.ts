// Text the CLI did not write, made safe for a terminal. Anything a server or a
// file controls (error messages, webhook payloads, ids, record fields, batch
// cells) passes through printable() before it is part of a human line, so a
// hostile answer cannot set the title, clear the screen, move the cursor,
// reorder text or forge output lines. JSON output keeps its values exactly:
// terminalSafeJson only writes the characters a terminal could act on as
// JSON escapes.

// Escape sequences whole, so their parameters do not survive as text: CSI (ESC [ … final),
// OSC, DCS, SOS, PM and APC strings (ESC ] … BEL or ST), and two-character escapes.
const ESCAPE_SEQUENCES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[ -~]/g;
// Controls (C0, DEL, C1 such as the one-byte CSI), line and paragraph separators, and the marks
// and overrides that change the direction text is shown in.
const NOT_PRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Longest error or warning line: room for a few rows' reasons, not for a page of server output. */
export const MESSAGE_MAX = 1000;

/** One line: no escape sequences, controls, line breaks or direction overrides; long text is cut with an ellipsis. */
export function printable(text: string, max = 200): string {
  const flat = text
    .replace(ESCAPE_SEQUENCES, '')
    .replace(NOT_PRINTABLE, ' ')
    // A lone surrogate is not a character; a terminal would show garbage or nothing.
    .replace(/\p{Cs}/gu, '\uFFFD')
    .replace(/\s+/g, ' ')
    .trim();
  if (flat.length <= max) return flat;
  // Cut between code points, never inside a surrogate pair.
  const cut = flat.slice(0, max - 1);
  return `${/\p{Cs}$/u.test(cut) ? cut.slice(0, -1) : cut}…`;
}

const TERMINAL_ACTIVE = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify, with the characters it leaves raw that a terminal (or a
 * reader of the text) could act on written as \u escapes: DEL, C1 controls,
 * line separators, direction marks. They can only occur inside strings, where
 * an escape means the same character: the JSON is exactly the same value.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return terminalSafeJsonText(JSON.stringify(value, null, indent));
}

/** JSON text (as JSON.stringify wrote it) with the characters a terminal acts on written as escapes. */
export function terminalSafeJsonText(text: string): string {
  return text.replace(TERMINAL_ACTIVE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
