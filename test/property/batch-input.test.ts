// Batch files in every dialect the helpers generate, read through the reader
// the command uses (BatchInput) and turned into requests as the planner does:
// each is read right (every place, in order, with its coordinates, zoom and
// prompt exactly as written), or, spoilt, refused in one line naming the file
// and the line that is wrong.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/lifecycle/errors.js';
import { BatchInput } from '../../src/batch/input.js';
import { mapColumns, rowSceneInput, type BatchRow } from '../../src/batch/row-columns.js';
import { resolveSettings } from '../../src/config/config.js';
import { buildGenerationRequest } from '../../src/input/scene-request.js';
import { csvDialect, dialectCase, jsonDialect, jsonLinesDialect, nthLineStart, places, render, withLatin1Byte, type Place } from '../helpers/batch-dialects.js';

const defaults = resolveSettings({}, {}, {}).sceneDefaults;
const dir = mkdtempSync(join(tmpdir(), 'aerial-batch-dialects-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function write(name: string, content: string | Buffer): string {
  const sub = join(dir, String(files++));
  const path = `${sub}-${name}`;
  writeFileSync(path, content);
  return path;
}

function flagOptions(flags: string[]): { delimiter?: string; format?: string } {
  const options: { delimiter?: string; format?: string } = {};
  for (let i = 0; i < flags.length; i += 2) options[flags[i]!.slice(2) as 'delimiter' | 'format'] = flags[i + 1];
  return options;
}

async function readAll(path: string, flags: string[]): Promise<{ input: BatchInput; rows: BatchRow[] }> {
  const input = await BatchInput.open(path, flagOptions(flags));
  const rows: BatchRow[] = [];
  try {
    for await (const batch of input.rows()) rows.push(...batch);
  } finally {
    input.close();
  }
  return { input, rows };
}

/** What reading a file must refuse with: a usage error of one line naming the file and the line. */
async function refusal(path: string, flags: string[]): Promise<string> {
  try {
    await readAll(path, flags);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message.startsWith(path)).toBe(true);
    return message.slice(path.length);
  }
  throw new Error(`${path} was read, not refused`);
}

function expectPlaces(rows: BatchRow[], header: string[], list: Place[]): void {
  expect(rows.map((row) => row.row)).toEqual(list.map((_, i) => i + 1));
  const columns = new Set(header);
  for (const row of rows) for (const key in row.cells) columns.add(key);
  const byField = mapColumns([...columns]);
  rows.forEach((row, i) => {
    const p = list[i]!;
    const request = buildGenerationRequest(rowSceneInput(row, byField, {}).input, defaults);
    expect(request.coordinates).toEqual({ lat: p.lat, lng: p.lng });
    expect(request.zoom.toLowerCase()).toBe((p.zoom || 'Medium').toLowerCase());
    expect(request.prompt).toBe(p.prompt);
    expect(row.cells.id).toBe(p.id);
  });
}

describe('batch input dialects (property)', () => {
  it('reads every generated dialect right: each place, in order, as written', async () => {
    await fc.assert(
      fc.asyncProperty(dialectCase(), async ({ places: list, dialect }) => {
        const rendered = render(list, dialect);
        const { input, rows } = await readAll(write(rendered.name, rendered.text), rendered.flags);
        expect(input.format).toBe(dialect.kind);
        expect(input.rowsAtMost).toBeGreaterThanOrEqual(list.length);
        expectPlaces(rows, input.header, list);
      }),
      { numRuns: 300 },
    );
  });

  it('reads a file whatever its size relative to the reader\'s chunks: tiny, and past several', async () => {
    await fc.assert(
      fc.asyncProperty(places(1), fc.integer({ min: 1, max: 3 }), fc.oneof(csvDialect(20), jsonLinesDialect(20), jsonDialect), async ([one], copies, dialect) => {
        // The same place many times over (distinct ids): a file from a few bytes to past 8 KiB chunks.
        const list = Array.from({ length: copies === 1 ? 1 : copies * 150 }, (_, i) => ({ ...one!, id: `${one!.id}${i}` }));
        const rendered = render(list, dialect);
        const { input, rows } = await readAll(write(rendered.name, rendered.text), rendered.flags);
        expectPlaces(rows, input.header, list);
      }),
      { numRuns: 40, endOnFailure: true },
    );
  });

  it('refuses a byte that is not UTF-8 (a Windows-1252 é), naming its line, in any dialect', async () => {
    await fc.assert(
      fc.asyncProperty(
        dialectCase().chain((c) => fc.record({ c: fc.constant(c), index: fc.nat({ max: c.places.length - 1 }) })),
        async ({ c, index }) => {
          const rendered = render(c.places, c.dialect);
          const { bytes, line } = withLatin1Byte(rendered, index);
          expect(await refusal(write(rendered.name, bytes), rendered.flags)).toBe(
            ` line ${line}: not UTF-8 (Windows-1252 or Latin-1?): re-save the file as UTF-8 (in Excel: "CSV UTF-8")`,
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a CSV cut by another separator than the one it is read with, at line 1, naming the flag', async () => {
    await fc.assert(
      fc.asyncProperty(
        places().chain((list) => fc.record({ list: fc.constant(list), dialect: csvDialect(list.length).filter((d) => d.delimiter !== ',' && !d.sepLine) })),
        async ({ list, dialect }) => {
          const rendered = render(list, dialect);
          const message = await refusal(write(rendered.name, rendered.text), []);
          const shown = dialect.delimiter === '\t' ? 'tab' : `'${dialect.delimiter}'`;
          const flag = dialect.delimiter === '\t' ? '--delimiter tab' : `--delimiter '${dialect.delimiter}'`;
          expect(message).toMatch(new RegExp(`^ line 1: looks like a ${shown}-separated file( with decimal commas)?: save it as CSV \\(comma-delimited\\) or pass ${flag.replace('|', '\\|')}$`));
          expect(message.includes('decimal commas')).toBe(dialect.decimalComma);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('refuses a CSV row with a value past the header\'s columns, naming the line the row ends on', async () => {
    await fc.assert(
      fc.asyncProperty(
        places().chain((list) =>
          fc.record({ list: fc.constant(list), dialect: csvDialect(list.length), index: fc.nat({ max: list.length - 1 }) }),
        ),
        async ({ list, dialect, index }) => {
          const rendered = render(list, dialect);
          const end = rendered.endLines[index]!;
          // The value goes at the end of the row's last line.
          const next = nthLineStart(rendered.text, end + 1);
          const lineEnd = rendered.text.slice(0, next).match(/(\r\n|\r|\n)$/)?.[0] ?? '';
          const at = next - lineEnd.length;
          const text = `${rendered.text.slice(0, at)}${dialect.delimiter}extra${rendered.text.slice(at)}`;
          const message = await refusal(write(rendered.name, text), rendered.flags);
          expect(message).toMatch(new RegExp(`^ line ${end}: \\d+ cells where the header row names 5 columns \\(a value 'extra' in column \\d+\\)`));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('refuses a JSON array with a comma before its closing bracket, or left open, naming the line', async () => {
    await fc.assert(
      fc.asyncProperty(places(), jsonDialect.filter((d) => d.shape === 'array'), fc.boolean(), async (list, dialect, open) => {
        const rendered = render(list, dialect);
        const close = rendered.text.lastIndexOf(']');
        const text = open ? rendered.text.slice(0, close) : `${rendered.text.slice(0, close)},${rendered.text.slice(close)}`;
        const lineOf = (at: number) => (text.slice(0, at).match(/\r\n|\r|\n/g) ?? []).length + 1;
        const message = await refusal(write(rendered.name, text), []);
        if (open) expect(message).toBe(` line ${lineOf(text.indexOf('['))}: the JSON array that starts here is never closed (a ']' is missing): close it`);
        else expect(message).toBe(` line ${lineOf(close)}: a ',' before the array's closing ']', which JSON does not allow: remove it`);
      }),
      { numRuns: 100 },
    );
  });
});

describe('batch input: what is refused, and how', () => {
  const cases: Array<[string, string | Buffer, string[], string]> = [
    ['empty.csv', '', [], ' is empty: nothing to generate (write a header row, then a row per image)'],
    ['blank.jsonl', '\uFEFF\r\n  \r\n', [], ' is empty: nothing to generate (write a header row, then a row per image)'],
    ['utf16.csv', Buffer.from('\uFEFFlat,lng\n1,2\n', 'utf16le'), [], ' line 1: is UTF-16 (Excel\'s "Unicode Text"), not UTF-8: re-save it as UTF-8 (in Excel: "CSV UTF-8")'],
    ['nul.csv', 'lat,lng\n1,2\n3,\u00004\n', [], ' line 3: holds a NUL character, so it is not a text file (UTF-16?): re-save it as UTF-8'],
    ['book.csv', Buffer.from([0x50, 0x4b, 3, 4, 0, 0]), [], ' is a zip file (an Excel or LibreOffice workbook?), not CSV or JSON: save the sheet as CSV UTF-8'],
    ['cut.csv', Buffer.from('lat,lng,prompt\n1,2,caf\xc3', 'latin1'), [], ' line 2: not UTF-8 (it ends inside a character): re-save the file as UTF-8'],
    ['stray.csv', 'lat,lng,prompt\n1,2,5 "tall"\n', [], ' line 2: a quote inside a cell that is not quoted: quote the whole cell and write the quote twice ("5 ""tall""")'],
    ['after.csv', 'lat,lng,prompt\r\n1,2,"a"b\r\n', [], ' line 2: a quoted cell goes on after its closing quote: a quote inside a quoted cell is written twice ("say ""hi""")'],
    ['open.csv', 'lat,lng,prompt\n1,2,ok\n3,4,"never\nclosed\n', [], ' line 4: a quoted cell is never closed (its closing quote is missing): close it'],
    // A CRLF inside an earlier quoted cell is one line end, as between rows; a space, then more, after a closing quote.
    ['spaced.csv', 'lat,lng,prompt\r\n1,2,"two\r\nlines"\r\n3,4,"c" d\r\n', [], ' line 4: a quoted cell goes on after its closing quote: a quote inside a quoted cell is written twice ("say ""hi""")'],
    ['unnamed.csv', 'lat,,lng\n1,,2\n', [], ' line 1: column 2 of the header row has no name: name it, or remove the column'],
    ['under.csv', 'lat,lng,,\n1,2,,x\n', [], " line 2: 4 cells where the header row names 2 columns (a value 'x' in column 4): quote cells that hold the separator (\"a, b\"), or name the column in the header row"],
    ['given.csv', 'lat,lng\n1,2\n', ['--delimiter', ';'], " line 1: the header row has no ';' but is cut by ',': pass --delimiter ',', or leave --delimiter out"],
    ['sep.csv', 'sep=;\nlat;lng\n1;2\n', ['--delimiter', ','], " line 1: says its separator is ';' (sep=;), not the one --delimiter names: leave --delimiter out"],
    ['later.csv', '\r\n\r\nlat;lng\r\n1,5;2\r\n', [], " line 3: looks like a ';'-separated file with decimal commas: save it as CSV (comma-delimited) or pass --delimiter ';'"],
    ['twice.csv', '\n\nlat,lat\n1,2\n', [], " line 3: column 'lat' appears twice in the header row: rename or remove one"],
    ['pretty.jsonl', '{\n  "lat": 1,\n  "lng": 2\n}\n', [], ' line 1: not valid JSON'],
    ['array.jsonl', '{"lat": 1, "lng": 2}\n[{"lat": 1}]\n', [], ' line 2: not a JSON object: rows are objects such as {"lat": 48.85, "lng": 2.29}'],
    ['scalar.json', '[{"lat": 1, "lng": 2},\n 3]', [], ' line 2: an array element that is not an object: rows are objects such as {"lat": 48.85, "lng": 2.29}'],
    ['after.json', '[{"lat": 1, "lng": 2}]\n[]', [], " line 2: text after the array's closing ']': remove it, or put it inside the array"],
    ['comma.json', '[{"lat": 1, "lng": 2}\n {"lat": 1, "lng": 2}]', [], " line 2: '{' where a ',' or the closing ']' should be: put a ',' between rows"],
    ['unclosed.json', '{"lat": 1, "lng": 2}\n{"lat": 1,\n', [], " line 2: the object that starts here is never closed (a '}' is missing): close it"],
  ];
  for (const [name, content, flags, expected] of cases) {
    it(`${name}: ${expected.slice(0, 60)}`, async () => {
      const message = await refusal(write(name, content), flags);
      if (expected.endsWith('not valid JSON')) expect(message).toMatch(/^ line 1: not valid JSON \(.*\): JSON Lines holds one object per line \(jq -c writes them so\); for a JSON array or objects over several lines pass --format json$/);
      else expect(message).toBe(expected);
    });
  }

  it('reads blank rows, trailing empty cells, short rows and mixed line ends as a spreadsheet means them', async () => {
    const path = write('sheet.csv', '\uFEFFLatitude , Longitude,Zoom,,\r\n48.85\r\n,,,,\r\n\r\n"51,5","-0,12",low,,\r51.5,2\n');
    const { rows } = await readAll(path, []);
    expect(rows.map((r) => r.cells)).toEqual([
      { Latitude: '48.85', Longitude: undefined, Zoom: undefined },
      { Latitude: '51,5', Longitude: '-0,12', Zoom: 'low' },
      { Latitude: '51.5', Longitude: '2', Zoom: undefined },
    ]);
    const byField = mapColumns(['Latitude', 'Longitude', 'Zoom']);
    expect(buildGenerationRequest(rowSceneInput(rows[1]!, byField, {}).input, defaults)).toMatchObject({ coordinates: { lat: 51.5, lng: -0.12 }, zoom: 'Low' });
  });
});
