import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../src/config/config.js';
import { buildGenerationRequest } from '../../../src/input/scene-request.js';
import { detectFormat, mapColumns, rowName, misspeltColumn, rowSceneInput, sceneFieldOf } from '../../../src/batch/row-columns.js';
import { batchFile, readRows } from '../../helpers/batch-input.js';
import { usageMessage } from '../../helpers/usage-error.js';

const defaults = resolveSettings({}, {}, {}).sceneDefaults;


describe('column names', () => {
  it('accept camelCase, kebab-case, snake_case and any case for scene fields', () => {
    expect(sceneFieldOf('aspectRatio')).toBe('aspectRatio');
    expect(sceneFieldOf('aspect-ratio')).toBe('aspectRatio');
    expect(sceneFieldOf('Aspect_Ratio')).toBe('aspectRatio');
    expect(sceneFieldOf('include-surroundings')).toBe('includeSurroundings');
    expect(sceneFieldOf('tags')).toBe('tag');
    expect(sceneFieldOf('LAT')).toBe('lat');
    expect(sceneFieldOf('at')).toBe('at');
  });

  it('leave other columns to the template', () => {
    expect(sceneFieldOf('id')).toBeUndefined();
    expect(sceneFieldOf('city')).toBeUndefined();
    expect(mapColumns(['id', 'lat', 'lng', 'name']).size).toBe(2);
  });

  it('take latitude and longitude (the list endpoint\'s names) and lon as the coordinates', () => {
    expect(sceneFieldOf('Latitude')).toBe('lat');
    expect(sceneFieldOf('longitude')).toBe('lng');
    expect(sceneFieldOf('LON')).toBe('lng');
    expect(usageMessage(() => mapColumns(['lat', 'latitude']))).toBe("batch file: columns 'lat' and 'latitude' both set lat; keep one");
  });

  it('know a typo of a field name from a column of its own', () => {
    expect(misspeltColumn('zooom')).toBe('zoom');
    expect(misspeltColumn('Wheather')).toBe('weather');
    expect(misspeltColumn('lattitude')).toBe('latitude');
    expect(misspeltColumn('aspect_ratoi')).toBe('aspect-ratio');
    for (const column of ['id', 'name', 'city', 'date', 'rate', 'data', 'path', 'notes', 'zoom', 'lat']) expect(misspeltColumn(column)).toBeUndefined();
  });

  it('refuse two columns for one field', () => {
    expect(usageMessage(() => mapColumns(['aspectRatio', 'aspect-ratio']))).toBe(
      "batch file: columns 'aspectRatio' and 'aspect-ratio' both set aspectRatio; keep one",
    );
  });
});

describe('reading files', () => {
  it('reads CSV with a header, a BOM, quoted commas and blank lines', async () => {
    const file = await batchFile('\uFEFFid,lat,lng,prompt\n\na,1,2,"x, y"\nb,3,4,\n', 'p.csv');
    expect(file.format).toBe('csv');
    expect(file.header).toEqual(['id', 'lat', 'lng', 'prompt']);
    expect(await readRows(file)).toEqual([
      { row: 1, line: 3, lineEnds: true, cells: { id: 'a', lat: '1', lng: '2', prompt: 'x, y' } },
      { row: 2, line: 4, lineEnds: true, cells: { id: 'b', lat: '3', lng: '4', prompt: '' } },
    ]);
  });

  it('refuses ragged CSV rows and duplicate headers with the file named', async () => {
    await expect(batchFile('lat,lng\n1,2,3\n', 'p.csv').then(readRows)).rejects.toThrow(
      /p\.csv line 2: 3 cells where the header row names 2 columns \(a value '3' in column 3\): quote cells that hold the separator/,
    );
    await expect(batchFile('lat,lat\n1,2\n', 'p.csv')).rejects.toThrow(/p\.csv line 1: column 'lat' appears twice in the header row: rename or remove one$/);
  });

  it('refuses a quote left open at the end of a CSV file, and reads every row of a long one', async () => {
    await expect(batchFile('lat,lng\n1,2\n3,"4\n', 'p.csv').then(readRows)).rejects.toThrow(/p\.csv line \d: a quoted cell is never closed/);
    const many = Array.from({ length: 3000 }, (_, i) => `${i},${i % 90},0`);
    const rows = await readRows(await batchFile(`id,lat,lng\n${many.join('\n')}`, 'p.csv'));
    expect(rows.map((r) => r.row)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 1));
    expect(rows.at(-1)).toEqual({ row: 3000, line: 3001, lineEnds: true, cells: { id: '2999', lat: '29', lng: '0' } });
  });

  it('names a row by its line, as errors of the header are: the line a CSV record starts on, past quoted line breaks', async () => {
    const rows = await readRows(await batchFile('lat,lng,prompt\r\n\r\n1,2,"two\nlines"\r\n3,4,x\r\n5,6,"a\r\nb"\r\n', 'p.csv'));
    expect(rows.map(rowName)).toEqual(['line 3 (row 1)', 'line 5 (row 2)', 'line 6 (row 3)']);
    expect(rowName({ row: 7, cells: {} })).toBe('row 7');
  });

  it('counts a CRLF inside a quoted cell as one line, as between rows, for that row and those after it', async () => {
    const rows = await readRows(await batchFile('lat,lng,prompt\r\n1,2,"a\r\nb"\r\n3,4,x\r\n5,6,"c\r\nd\re"\r\n7,8,y\r\n', 'p.csv'));
    expect(rows.map(rowName)).toEqual(['line 2 (row 1)', 'line 4 (row 2)', 'line 5 (row 3)', 'line 8 (row 4)']);
    expect(rows.map((r) => r.cells.prompt)).toEqual(['a\r\nb', 'x', 'c\r\nd\re', 'y']);
  });

  it('reads JSON Lines, skipping blank lines, and names the line of a bad one', async () => {
    const file = await batchFile('{"lat":1,"lng":2}\n\n{"lat":3,"lng":4,"id":"x"}\n', 'p.jsonl');
    expect(file.format).toBe('jsonl');
    expect((await readRows(file)).map((r) => [r.row, r.cells])).toEqual([
      [1, { lat: 1, lng: 2 }],
      [2, { lat: 3, lng: 4, id: 'x' }],
    ]);
    await expect(batchFile('{"lat":1}\n[1,2]\n', 'p.jsonl').then(readRows)).rejects.toThrow(/p\.jsonl line 2: not a JSON object: rows are objects/);
    await expect(batchFile('{"lat":1}\n{oops\n', 'p.jsonl').then(readRows)).rejects.toThrow(/p\.jsonl line 2: not valid JSON \(.*\): fix the line, or remove it$/);
  });

  it('reads rows in batches across chunk boundaries, CRLF line ends included, and each pass afresh', async () => {
    const count = 5000;
    const text = Array.from({ length: count }, (_, i) => JSON.stringify({ lat: i % 90, lng: 0, id: `r${i + 1}` })).join('\r\n');
    const file = await batchFile(text, 'big.jsonl');
    for (let pass = 0; pass < 2; pass++) {
      const rows = await readRows(file);
      expect(rows).toHaveLength(count);
      expect(rows.every((r, i) => r.row === i + 1 && r.cells.id === `r${i + 1}`)).toBe(true);
    }
  });

  it('tells the format by flag, then extension, then content', () => {
    expect(detectFormat('a.csv', '{"lat":1}')).toBe('csv');
    expect(detectFormat('a.ndjson', 'lat,lng')).toBe('jsonl');
    expect(detectFormat('-', '  {"lat":1}')).toBe('jsonl');
    expect(detectFormat('-', 'lat,lng')).toBe('csv');
    expect(detectFormat('a.csv', '', 'JSONL')).toBe('jsonl');
    expect(detectFormat('a.json', '{"lat":1}')).toBe('json');
    expect(detectFormat('a.jsonl', '[{"lat":1}]')).toBe('json');
    expect(detectFormat('-', '\uFEFF\r\n [')).toBe('json');
    expect(detectFormat('a.tsv', '[')).toBe('csv');
    expect(usageMessage(() => detectFormat('a', '', 'xml'))).toBe("--format must be one of csv, jsonl, json; got 'xml'");
  });
});

describe('rowSceneInput', () => {
  const columns = mapColumns(['lat', 'lng', 'zoom', 'tags', 'include-context', 'prompt']);

  it('takes cells over flags, and flags for empty cells', () => {
    const { input, columnOf } = rowSceneInput(
      { cells: { lat: '48.85', lng: '2.29', zoom: '', tags: 'a; b|c;', 'include-context': 'yes', prompt: 'p' } },
      columns,
      { zoom: 'High', tag: ['flag'] },
    );
    expect(input).toEqual({ lat: '48.85', lng: '2.29', zoom: 'High', tag: ['a', 'b', 'c'], includeContext: true, prompt: 'p' });
    expect(columnOf.has('zoom')).toBe(false);
    expect(columnOf.get('tag')).toBe('tags');
  });

  it('keeps JSON numbers, booleans and tag arrays as they are', () => {
    const { input } = rowSceneInput(
      { cells: { lat: 1.5, lng: -2, tags: ['x', 'y'], 'include-context': false } },
      columns,
      {},
    );
    expect(input).toEqual({ lat: 1.5, lng: -2, tag: ['x', 'y'], includeContext: false });
  });

  it('names the column of a bad boolean or tag list', () => {
    expect(usageMessage(() => rowSceneInput({ cells: { 'include-context': 'maybe' } }, columns, {}))).toBe(
      "column 'include-context' must be true or false (or yes/no, y/n, on/off, 1/0); got 'maybe'",
    );
    expect(usageMessage(() => rowSceneInput({ cells: { tags: [1] } }, columns, {}))).toBe("column 'tags' must be a list of strings");
  });

  it('feeds buildGenerationRequest, whose messages then name the column', () => {
    const { input } = rowSceneInput({ cells: { lat: '48.85', lng: '2.29', zoom: 'closeup' } }, columns, {});
    const label = (field: string) => (field === 'zoom' ? "column 'zoom'" : `--${field}`);
    expect(usageMessage(() => buildGenerationRequest(input, defaults, label))).toBe(
      "column 'zoom' must be one of ExtraLow, Low, Medium, High, ExtraHigh; got 'closeup'",
    );
  });
});
