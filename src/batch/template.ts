// --output-template: `out/{id}-{lat}_{lng}.jpg` names each row's file. The
// template's literal text is the user's own path; the values put into it come
// from the batch file and are sanitised so a cell can never climb out of the
// directory, hide a file, or break a name on Windows.
import { UsageError } from '../api/errors.js';

export type TemplatePart = { text: string } | { name: string };

export interface OutputTemplate {
  source: string;
  parts: TemplatePart[];
  names: string[];
}

const FLAG = '--output-template';
/** A value longer than this is cut: most file systems allow 255 bytes per name. */
const MAX_VALUE_LENGTH = 100;

export function compileTemplate(source: string): OutputTemplate {
  if (source.trim() === '') throw new UsageError(`${FLAG} must not be empty`);
  const parts: TemplatePart[] = [];
  const names: string[] = [];
  const pattern = /\{([^{}]*)\}|[{}]/g;
  let last = 0;
  for (const match of source.matchAll(pattern)) {
    if (match[1] === undefined) throw new UsageError(`${FLAG} has an unmatched '${match[0]}' in '${source}'`);
    const name = match[1].trim();
    if (name === '') throw new UsageError(`${FLAG} has an empty placeholder {} in '${source}'`);
    if (match.index > last) parts.push({ text: source.slice(last, match.index) });
    parts.push({ name });
    names.push(name);
    last = match.index + match[0].length;
  }
  if (last < source.length) parts.push({ text: source.slice(last) });
  const tail = parts[parts.length - 1];
  if (!tail || !('text' in tail) || !/\.jpe?g$/i.test(tail.text)) {
    throw new UsageError(`${FLAG} must end in .jpg or .jpeg (the files are JPEG images); got '${source}'`);
  }
  return { source, parts, names };
}

/** Makes one substituted value safe as (part of) a single file name. */
export function sanitizeValue(value: string): string {
  let text = value
    .normalize('NFC')
    // Path separators, characters Windows forbids, and control characters.
    .replace(/[/\\:*?"<>|\u0000-\u001f\u007f]/g, '_')
    .replace(/\s+/g, '_')
    // A leading dot would hide the file or, as '..', name the parent directory.
    .replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  if (text.length > MAX_VALUE_LENGTH) text = text.slice(0, MAX_VALUE_LENGTH);
  return text === '' ? '_' : text;
}

/** Fills the template; `lookup` returns undefined for a name it does not know. */
export function expandTemplate(template: OutputTemplate, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (const part of template.parts) {
    if ('text' in part) {
      out += part.text;
      continue;
    }
    const value = lookup(part.name);
    if (value === undefined) throw new UsageError(`${FLAG}: unknown placeholder {${part.name}}`);
    out += sanitizeValue(value);
  }
  return out;
}

/** Refuses placeholders that name neither a built-in value nor a column, listing what exists. */
export function checkPlaceholders(template: OutputTemplate, known: (name: string) => boolean, available: string[]): void {
  const unknown = template.names.filter((name) => !known(name));
  if (unknown.length === 0) return;
  throw new UsageError(
    `${FLAG}: unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `{${n}}`).join(', ')}; available: ${available.map((n) => `{${n}}`).join(', ')}`,
  );
}
