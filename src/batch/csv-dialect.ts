// Which character separates a CSV file's cells. aerial never guesses it from
// the rows: it is ',' unless --delimiter names another (or the file is .tsv,
// or starts with Excel's `sep=;` line).
// A header row that reads as one column but is plainly cut by ';', a tab or
// '|' is a spreadsheet export in another locale, whose numbers may also have
// decimal commas: refused with the flag that reads it, before a row is read.
import { UsageError } from '../lifecycle/errors.js';
import { inputError } from './input-text.js';

/** The separators --delimiter takes, by the names it also accepts. */
const DELIMITER_NAMES: Readonly<Record<string, string>> = { comma: ',', semicolon: ';', tab: '\t', pipe: '|' };
export const DELIMITER_WORDS = Object.keys(DELIMITER_NAMES);

/** --delimiter: one of , ; | or a tab, as the character or by name (tab also as \t). */
export function parseDelimiter(given: string): string {
  const text = given === '\t' ? given : given.trim().toLowerCase();
  const delimiter = text === '\\t' ? '\t' : (DELIMITER_NAMES[text] ?? (Object.values(DELIMITER_NAMES).includes(text) ? text : undefined));
  if (delimiter === undefined) {
    throw new UsageError(`--delimiter must be one of ',' ';' '|' tab (or comma, semicolon, pipe); got '${given}'`);
  }
  return delimiter;
}

/** How the flag that reads a file with this separator is written in a message. */
export function delimiterFlag(delimiter: string): string {
  return `--delimiter ${delimiter === '\t' ? 'tab' : `'${delimiter}'`}`;
}

function shownDelimiter(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `'${delimiter}'`;
}

/** Separators counted outside quoted cells in one line. */
function separators(line: string): Map<string, number> {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === ',' || char === ';' || char === '\t' || char === '|')) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  return counts;
}

/**
 * Refuses a file whose header row does not read as `delimiter` separates it
 * (from the start of the file, BOM and all): a ';'-separated export read as
 * CSV, or a comma-separated file given another --delimiter.
 */
export function checkDelimiter(path: string, start: string, delimiter: string, given: boolean): void {
  const text = start.replace(/^\uFEFF/, '');
  // The header is the first line with something on it (a CSV reader skips empty lines).
  const lines = text.split(/\r\n|\r|\n/);
  const at = lines.findIndex((line) => line.trim() !== '');
  const header = lines[at] ?? '';
  const rest = lines.slice(at + 1).join('\n');
  const counts = separators(header);
  if ((counts.get(delimiter) ?? 0) > 0) return;
  const other = [',', ';', '\t', '|'].filter((char) => char !== delimiter).find((char) => (counts.get(char) ?? 0) > 0);
  if (other === undefined) return;
  if (given || other === ',') {
    throw inputError(path, at + 1, `the header row has no ${shownDelimiter(delimiter)} but is cut by ${shownDelimiter(other)}: pass ${delimiterFlag(other)}${other === ',' ? ', or leave --delimiter out' : ''}`);
  }
  const decimalCommas = other !== ',' && /\d,\d/.test(rest) ? ' with decimal commas' : '';
  throw inputError(path, at + 1, `looks like a ${shownDelimiter(other)}-separated file${decimalCommas}: save it as CSV (comma-delimited) or pass ${delimiterFlag(other)}`);
}
