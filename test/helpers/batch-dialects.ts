// Batch files as spreadsheets and scripts write them, generated: a table of
// places rendered in a dialect (CSV with any separator, quoting, BOM, line
// ends, header spelling, blank rows and trailing empty cells; JSON Lines with
// blank lines and white space; a JSON array, pretty-printed or not; objects
// one after another), and ways to spoil one (a Windows-1252 byte, a cell too
// many, a stray quote, a separator the flags do not name, a comma too many).
// Each rendering says what reading it must give, or which line is wrong.
import fc from 'fast-check';

export interface Place {
  id: string;
  lat: number;
  lng: number;
  /** An enum value in any case, or '' (then the flag or default is used). */
  zoom: string;
  /** Free text: separators, quotes, accents, emoji, white space at either end (kept when the cell is quoted). */
  prompt: string;
}

export type LineEnd = '\n' | '\r\n' | '\r';

export interface CsvDialect {
  kind: 'csv';
  delimiter: ',' | ';' | '\t' | '|';
  /** Excel's first line `sep=;`, which says the separator (no --delimiter needed then). */
  sepLine: boolean;
  lineEnd: LineEnd;
  bom: boolean;
  /** Quote every cell, or only those that need it. */
  quoteAll: boolean;
  /** Coordinates written with a decimal comma (quoted where the separator is ','). */
  decimalComma: boolean;
  /** The header's spelling of lat, lng, zoom and prompt. */
  names: [string, string, string, string];
  /** Empty cells after the last column on every line, header included (a spreadsheet's rectangle). */
  trailingEmpty: number;
  /** Blank rows before each place: '' (an empty line) or a row of empty cells. */
  blanks: Array<'empty' | 'cells' | 'spaces' | 'none'>;
  finalLineEnd: boolean;
}

export interface JsonLinesDialect {
  kind: 'jsonl';
  lineEnd: LineEnd;
  bom: boolean;
  /** White space around each object. */
  padding: string[];
  blanks: boolean[];
  names: [string, string, string, string];
  finalLineEnd: boolean;
}

export interface JsonDialect {
  kind: 'json';
  /** An array, or objects one after another (what jq prints). */
  shape: 'array' | 'sequence';
  indent: 0 | 2 | 4 | '\t';
  lineEnd: LineEnd;
  bom: boolean;
  names: [string, string, string, string];
  finalLineEnd: boolean;
}

export type Dialect = CsvDialect | JsonLinesDialect | JsonDialect;

export interface Rendered {
  text: string;
  /** The file name (its extension tells the format). */
  name: string;
  /** The flags that read it (--delimiter for a CSV not cut by ','). */
  flags: string[];
  /** The line each place's record ends on (1-based). */
  endLines: number[];
  /** The line each place's record starts on. */
  startLines: number[];
}

const ZOOMS = ['ExtraLow', 'Low', 'Medium', 'High', 'ExtraHigh'];
const PROMPT_PARTS = ['roof', 'a, b', 'x;y', 'pipe|bar', 'say "hi"', 'café', 'Zürich', '日本', '🙂', 'tab\there', '50%', "o'clock", 'line\nbreak', 'windows\r\nbreak', '  inner  space  '];

const place: fc.Arbitrary<Place> = fc.record({
  id: fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/),
  lat: fc.integer({ min: -899_999, max: 899_999 }).map((n) => n / 10_000),
  lng: fc.integer({ min: -1_799_999, max: 1_799_999 }).map((n) => n / 10_000),
  zoom: fc.oneof(fc.constant(''), fc.constantFrom(...ZOOMS).chain((z) => fc.constantFrom(z, z.toLowerCase(), z.toUpperCase()))),
  prompt: fc.array(fc.constantFrom(...PROMPT_PARTS), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(' ')),
});

/** Up to `max` places with distinct ids. */
export const places = (max = 8): fc.Arbitrary<Place[]> => fc.uniqueArray(place, { minLength: 1, maxLength: max, selector: (p) => p.id });

const names: fc.Arbitrary<[string, string, string, string]> = fc.tuple(
  fc.constantFrom('lat', 'Lat', 'LAT', ' lat ', 'latitude', 'Latitude'),
  fc.constantFrom('lng', 'Lng', 'lon', 'longitude', 'LONGITUDE', ' Lng'),
  fc.constantFrom('zoom', 'Zoom', ' ZOOM '),
  fc.constantFrom('prompt', 'Prompt', 'PROMPT'),
);
const lineEnd = fc.constantFrom<LineEnd>('\n', '\r\n', '\r');

export const csvDialect = (count: number): fc.Arbitrary<CsvDialect> =>
  fc.record({
    kind: fc.constant('csv' as const),
    delimiter: fc.constantFrom<CsvDialect['delimiter']>(',', ';', '\t', '|'),
    sepLine: fc.boolean(),
    lineEnd,
    bom: fc.boolean(),
    quoteAll: fc.boolean(),
    decimalComma: fc.boolean(),
    names,
    trailingEmpty: fc.integer({ min: 0, max: 2 }),
    blanks: fc.array(fc.constantFrom<'empty' | 'cells' | 'spaces' | 'none'>('none', 'none', 'empty', 'cells', 'spaces'), { minLength: count, maxLength: count }),
    finalLineEnd: fc.boolean(),
  });

export const jsonLinesDialect = (count: number): fc.Arbitrary<JsonLinesDialect> =>
  fc.record({
    kind: fc.constant('jsonl' as const),
    lineEnd,
    bom: fc.boolean(),
    padding: fc.array(fc.constantFrom('', ' ', '\t', '  \t'), { minLength: count, maxLength: count }),
    blanks: fc.array(fc.boolean(), { minLength: count, maxLength: count }),
    names,
    finalLineEnd: fc.boolean(),
  });

export const jsonDialect: fc.Arbitrary<JsonDialect> = fc.record({
  kind: fc.constant('json' as const),
  shape: fc.constantFrom<JsonDialect['shape']>('array', 'sequence'),
  indent: fc.constantFrom<JsonDialect['indent']>(0, 2, 4, '\t'),
  lineEnd,
  bom: fc.boolean(),
  names,
  finalLineEnd: fc.boolean(),
});

/** Places with a dialect to write them in. */
export const dialectCase = (max = 8): fc.Arbitrary<{ places: Place[]; dialect: Dialect }> =>
  places(max).chain((list) =>
    fc.record({ places: fc.constant(list), dialect: fc.oneof(csvDialect(list.length), jsonLinesDialect(list.length), jsonDialect) }),
  );

function linesIn(text: string): number {
  return (text.match(/\r\n|\r|\n/g) ?? []).length;
}

function csvCell(value: string, dialect: CsvDialect): string {
  const needs = value.includes(dialect.delimiter) || /["\r\n]/.test(value) || value !== value.trim();
  return dialect.quoteAll || needs ? `"${value.replaceAll('"', '""')}"` : value;
}

function coordinate(value: number, decimalComma: boolean): string {
  return decimalComma ? String(value).replace('.', ',') : String(value);
}

function renderCsv(list: Place[], dialect: CsvDialect): Rendered {
  const d = dialect.delimiter;
  const rest = d.repeat(dialect.trailingEmpty);
  const line = (cells: string[]) => cells.map((cell) => csvCell(cell, dialect)).join(d) + rest;
  let text = (dialect.bom ? '\uFEFF' : '') + (dialect.sepLine ? `sep=${d}${dialect.lineEnd}` : '') + line(['id', ...dialect.names]);
  const startLines: number[] = [];
  const endLines: number[] = [];
  list.forEach((p, i) => {
    const blank = dialect.blanks[i % dialect.blanks.length];
    if (blank === 'empty') text += dialect.lineEnd;
    if (blank === 'cells') text += dialect.lineEnd + d.repeat(4 + dialect.trailingEmpty);
    if (blank === 'spaces') text += dialect.lineEnd + ` ${d} ${d}${d}${d}`;
    text += dialect.lineEnd;
    startLines.push(linesIn(text) + 1);
    text += line([p.id, coordinate(p.lat, dialect.decimalComma), coordinate(p.lng, dialect.decimalComma), p.zoom, p.prompt]);
    endLines.push(linesIn(text) + 1);
  });
  if (dialect.finalLineEnd) text += dialect.lineEnd;
  const named = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' } as const;
  return { text, name: 'places.csv', flags: d === ',' || dialect.sepLine ? [] : ['--delimiter', named[d]], startLines, endLines };
}

function objectOf(p: Place, keys: [string, string, string, string]): Record<string, unknown> {
  const object: Record<string, unknown> = { id: p.id, [keys[0]]: p.lat, [keys[1]]: p.lng };
  if (p.zoom !== '') object[keys[2]] = p.zoom;
  object[keys[3]] = p.prompt;
  return object;
}

function renderJsonLines(list: Place[], dialect: JsonLinesDialect): Rendered {
  let text = dialect.bom ? '\uFEFF' : '';
  const startLines: number[] = [];
  list.forEach((p, i) => {
    if (i > 0) text += dialect.lineEnd;
    if (dialect.blanks[i % dialect.blanks.length]) text += `  ${dialect.lineEnd}`;
    startLines.push(linesIn(text) + 1);
    const padding = dialect.padding[i % dialect.padding.length] ?? '';
    text += padding + JSON.stringify(objectOf(p, dialect.names)) + padding;
  });
  if (dialect.finalLineEnd) text += dialect.lineEnd;
  return { text, name: 'places.jsonl', flags: [], startLines, endLines: startLines };
}

function renderJson(list: Place[], dialect: JsonDialect): Rendered {
  const objects = list.map((p) => objectOf(p, dialect.names));
  const pretty = (value: unknown) => JSON.stringify(value, null, dialect.indent).replaceAll('\n', dialect.lineEnd);
  let text = dialect.bom ? '\uFEFF' : '';
  const startLines: number[] = [];
  if (dialect.shape === 'array') {
    const whole = pretty(objects);
    text += whole;
    // Where each object starts: the line of its '{' (at depth one).
    let depth = 0;
    let line = 1;
    let inString = false;
    for (let i = 0; i < whole.length; i++) {
      const c = whole[i]!;
      if (c === '\r' || (c === '\n' && whole[i - 1] !== '\r')) line++;
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') {
        if (c === '{' && depth === 1) startLines.push(line);
        depth++;
      } else if (c === '}' || c === ']') depth--;
    }
  } else {
    objects.forEach((object, i) => {
      if (i > 0) text += dialect.lineEnd;
      startLines.push(linesIn(text) + 1);
      text += pretty(object);
    });
  }
  if (dialect.finalLineEnd) text += dialect.lineEnd;
  return { text, name: 'places.json', flags: [], startLines, endLines: startLines };
}

export function render(list: Place[], dialect: Dialect): Rendered {
  if (dialect.kind === 'csv') return renderCsv(list, dialect);
  return dialect.kind === 'jsonl' ? renderJsonLines(list, dialect) : renderJson(list, dialect);
}

/**
 * The file's bytes with a Windows-1252 'é' (0xE9, which is not UTF-8) at the
 * start of the line place `index` starts on, and that line.
 */
export function withLatin1Byte(rendered: Rendered, index: number): { bytes: Buffer; line: number } {
  const line = rendered.startLines[index]!;
  const position = nthLineStart(rendered.text, line);
  const bytes = Buffer.from(`${rendered.text.slice(0, position)}\u0001${rendered.text.slice(position)}`, 'utf8');
  bytes[bytes.indexOf(1)] = 0xe9;
  return { bytes, line };
}

/** Where line `n` (1-based) starts in the text. */
export function nthLineStart(text: string, n: number): number {
  const ends = /\r\n|\r|\n/g;
  let start = 0;
  for (let line = 1; line < n; line++) {
    const match = ends.exec(text);
    if (!match) return text.length;
    start = match.index + match[0].length;
  }
  return start;
}
