// --output-template: `out/{row}-{lat}_{lng}.jpg` names each row's file. The
// template's literal text is the user's own path; the values put into it come
// from the batch file and are made safe (src/files/file-names.ts) so a cell can
// never climb out of the directory, hide a file, or break a name.
import { UsageError } from '../lifecycle/errors.js';
import { MAX_NAME_BYTES, safeNamePart, utf8Length } from '../files/file-names.js';

export type TemplatePart = { text: string } | { name: string };

export interface OutputTemplate {
  source: string;
  parts: TemplatePart[];
  names: string[];
}

const FLAG = '--output-template';

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
  // A directory or file name spelled out in the template itself is the user's to shorten; names with values are fitted per row.
  const placeholder = '\u0000';
  const literalTooLong = parts
    .map((part) => ('text' in part ? part.text : placeholder))
    .join('')
    .split('/')
    .find((component) => !component.includes(placeholder) && utf8Length(component) > MAX_NAME_BYTES);
  if (literalTooLong !== undefined) {
    throw new UsageError(`${FLAG}: '${literalTooLong.slice(0, 40)}…' is longer than a file name may be (${MAX_NAME_BYTES} bytes)`);
  }
  return { source, parts, names };
}

export interface ExpandedTemplate {
  /** The template filled with safe values (not yet fitted to the name limits: see fitPath). */
  path: string;
  /** The template filled with the values as they are: two rows alike here are alike in every value used. */
  raw: string;
}

/** Fills the template; `lookup` returns undefined for a name it does not know. */
export function expandTemplate(template: OutputTemplate, lookup: (name: string) => string | undefined): ExpandedTemplate {
  let path = '';
  let raw = '';
  for (const part of template.parts) {
    if ('text' in part) {
      path += part.text;
      raw += part.text;
      continue;
    }
    const value = lookup(part.name);
    if (value === undefined) throw new UsageError(`${FLAG}: unknown placeholder {${part.name}}`);
    path += safeNamePart(value);
    raw += value;
  }
  return { path, raw };
}

/** Refuses placeholders that name neither a built-in value nor a column, listing what exists. */
export function checkPlaceholders(template: OutputTemplate, known: (name: string) => boolean, available: string[]): void {
  const unknown = template.names.filter((name) => !known(name));
  if (unknown.length === 0) return;
  throw new UsageError(
    `${FLAG}: unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `{${n}}`).join(', ')}; available: ${available.map((n) => `{${n}}`).join(', ')}`,
  );
}
