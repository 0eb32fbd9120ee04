// End-to-end: what `aerial list` shows. On a real pseudo-terminal (util-linux
// `script`) at 80 and 60 columns the table fits: no line wider than the
// terminal, every id whole, columns giving way by priority; with the sandbox's
// UUIDs and with longer ids (and wide characters) from a server the test
// controls. Piped, one tab-separated line per image, no borders, no escape
// codes, even with FORCE_COLOR. Pages are counted from 0 in the footer, the
// hint and the past-the-end notice, as --page counts them.
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageSchema, type ImageRecord } from '../../src/api/schema.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { answerJson, listingOf, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { plain, spawnInPty } from '../helpers/pty.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let records: ImageRecord[];

const PLACES: Array<[number, number]> = [
  [41.5, -71.25],
  [-33.8568, 151.2153],
  [48.8584, 2.2945],
];

beforeAll(async () => {
  home = tempDir('aerial-list-output-');
  sandbox = await startTestSandbox();
  registerSecret(sandbox.key);
  for (const [i, [lat, lng]] of PLACES.entries()) {
    const made = await runCli(['generate', '--lat', String(lat), '--lng', String(lng), '--resolution', 'HD', '-o', join(home.path, `${i}.jpg`)], {
      configDir: home.path,
      env: sandbox.env(),
    });
    expect(made.exitCode, made.stderr).toBe(0);
  }
  const listed = await runCli(['list', '--json'], { configDir: home.path, env: sandbox.env() });
  records = pageSchema().parse(JSON.parse(listed.stdout)).content;
  expect(records).toHaveLength(PLACES.length);
});
afterAll(async () => {
  await sandbox?.close();
  home?.remove();
});

/** What the terminal showed, line by line, without colour codes or carriage returns. */
async function onTerminal(args: string[], columns: number, env: Record<string, string>): Promise<{ exitCode: number | null; lines: string[] }> {
  const session = spawnInPty(args, { configDir: home.path, env, columns });
  const { exitCode, output } = await session.exited;
  return { exitCode, lines: plain(output).split('\n').filter((line, i, all) => line !== '' || i < all.length - 1) };
}

/** Columns padded to their widest cell (display width), two spaces apart, the last one unpadded. */
function expectedTable(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => stringWidth(row[c]!))));
  return rows.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell + ' '.repeat(widths[c]! - stringWidth(cell)))).join('  '));
}

const coordinates = (record: ImageRecord) => `${record.coordinates.latitude.toFixed(4)}, ${record.coordinates.longitude.toFixed(4)}`;
const minutes = (record: ImageRecord) => record.createdAt.slice(0, 16).replace('T', ' ');
const seconds = (record: ImageRecord) => record.createdAt.slice(0, 19).replace('T', ' ');

function expectFits(lines: string[], columns: number, ids: string[]): void {
  for (const line of lines) expect(stringWidth(line), `wider than ${columns}: ${line}`).toBeLessThanOrEqual(columns);
  for (const id of ids) expect(lines.some((line) => line === id || line.startsWith(`${id} `)), `id ${id} not whole`).toBe(true);
}

describe('on a terminal, the sandbox\'s ids', () => {
  it('at 80 columns: id, created to the minute, resolution and coordinates; the URL expiry gives way', async () => {
    const { exitCode, lines } = await onTerminal(['list'], 80, sandbox.env());
    expect(exitCode).toBe(0);
    expect(lines).toEqual([
      ...expectedTable([['ID', 'Created (UTC)', 'Res', 'Coordinates'], ...records.map((r) => [r.id, minutes(r), r.resolution, coordinates(r)])]),
      'Page 0, the only one (3 images)',
    ]);
    expectFits(lines, 80, records.map((r) => r.id));
  });

  it('at 60 columns: id and coordinates', async () => {
    const { exitCode, lines } = await onTerminal(['list'], 60, sandbox.env());
    expect(exitCode).toBe(0);
    expect(lines).toEqual([
      ...expectedTable([['ID', 'Coordinates'], ...records.map((r) => [r.id, coordinates(r)])]),
      'Page 0, the only one (3 images)',
    ]);
    expectFits(lines, 60, records.map((r) => r.id));
  });

  it('bold header and dim footer on a colour terminal; no escape codes at all with NO_COLOR', async () => {
    const coloured = await spawnInPty(['list'], { configDir: home.path, env: sandbox.env(), columns: 80 }).exited;
    expect(coloured.output).toMatch(/^\u001b\[1mID +Created \(UTC\) +Res +Coordinates\u001b\[22m\r\n/);
    expect(coloured.output).toContain('\u001b[2mPage 0, the only one (3 images)\u001b[22m');
    const plainTerminal = await spawnInPty(['list'], { configDir: home.path, env: { ...sandbox.env(), NO_COLOR: '1' }, columns: 80 }).exited;
    expect(plainTerminal.output).not.toContain('\u001b');
    expect(plain(plainTerminal.output)).toBe(plain(coloured.output));
  });

  it('at 130 columns: every column, the URL expiry two hours after the listing', async () => {
    const { lines } = await onTerminal(['list'], 130, sandbox.env());
    expect(lines[0]).toMatch(/^ID {36}Created \(UTC\) {8}Res  Coordinates +URL expires$/);
    expect(lines[1]).toMatch(new RegExp(`^${records[0]!.id}  ${seconds(records[0]!)}  HD   ${coordinates(records[0]!).replace(/\./g, '\\.')} +\\d\\d:\\d\\dZ \\((1h59m|2h00m)\\)$`));
  });

  it('counts pages from 0 in the footer, its hint and past the end, and the hint works', async () => {
    const first = await onTerminal(['list', '--size', '2', '--sort', 'createdAt,asc'], 80, sandbox.env());
    expect(first.lines.slice(-2)).toEqual(['Page 0 of pages 0–1 (3 images)', 'next: aerial list --page 1 --size 2 --sort createdAt,asc']);
    // On a wide terminal the hint shares the line.
    const wide = await onTerminal(['list', '--size', '2'], 130, sandbox.env());
    expect(wide.lines.at(-1)).toBe('Page 0 of pages 0–1 (3 images) — next: aerial list --page 1 --size 2');

    const hint = first.lines.at(-1)!.replace(/^next: aerial /, '').split(' ');
    const second = await onTerminal(hint, 80, sandbox.env());
    // One row with short coordinates leaves room for the seconds.
    expect(second.lines).toEqual([
      ...expectedTable([['ID', 'Created (UTC)', 'Res', 'Coordinates'], [records[0]!.id, seconds(records[0]!), 'HD', coordinates(records[0]!)]]),
      'Page 1 of pages 0–1 (3 images)',
    ]);

    const past = await onTerminal(['list', '--page', '2', '--size', '2'], 80, sandbox.env());
    expect(past.exitCode).toBe(0);
    expect(past.lines).toEqual(['--page 2 is past the end: 3 images on pages 0–1']);
    expect((await onTerminal(['list', '--page', '1'], 80, sandbox.env())).lines).toEqual(['--page 1 is past the end: 3 images on page 0']);
  });
});

describe('on a terminal, list --all: a table written page by page', () => {
  const ascending = () => [...records].reverse();

  it('at 80 and 60 columns: the header once, every page in the columns fitted to the first', async () => {
    // Pages of 2: the third image arrives on a page of its own, after the first page was written.
    const wide = await onTerminal(['list', '--all', '--size', '2', '--sort', 'createdAt,asc'], 80, sandbox.env());
    expect(wide.exitCode).toBe(0);
    expect(wide.lines).toEqual([
      ...expectedTable([['ID', 'Created (UTC)', 'Res', 'Coordinates'], ...ascending().map((r) => [r.id, minutes(r), r.resolution, coordinates(r)])]),
      '3 images',
    ]);
    expectFits(wide.lines, 80, records.map((r) => r.id));
    const narrow = await onTerminal(['list', '--all', '--size', '2', '--sort', 'createdAt,asc'], 60, sandbox.env());
    expect(narrow.lines).toEqual([...expectedTable([['ID', 'Coordinates'], ...ascending().map((r) => [r.id, coordinates(r)])]), '3 images']);
    expectFits(narrow.lines, 60, records.map((r) => r.id));
  });

  it('a later page with a longer id: that line alone is wider, its id whole; the others keep their columns', async () => {
    const server = await startHostileServer();
    const LONGER = 'img_0123456789abcdef0123456789abcdef0123456789abcdef';
    server.respond(listingOf(['img_a', 'img_b', LONGER], answerJson(404, { error: 'NotFound', message: 'no' })));
    try {
      registerSecret('list-output-key-02');
      const { exitCode, lines } = await onTerminal(['list', '--all', '--size', '2'], 60, { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'list-output-key-02' });
      expect(exitCode).toBe(0);
      // Fitted to the first page (short ids): every column fits in 60; the long id's line pushes its cells right.
      expect(lines.slice(0, 3)).toEqual([
        'ID     Created (UTC)        Res  Coordinates',
        'img_a  2025-01-01 00:00:00  HD   1.0000, 2.0000',
        'img_b  2025-01-01 00:00:00  HD   1.0000, 2.0000',
      ]);
      expect(lines[3]).toBe(`${LONGER}  2025-01-01 00:00:00  HD   1.0000, 2.0000`);
      expect(lines[4]).toBe('3 images');
    } finally {
      await server.close();
    }
  });
});

describe('on a terminal, long ids and wide characters', () => {
  let server: HostileServer;
  const LONG = 'img_0123456789abcdef0123456789abcdef0123456789ab';
  const WIDE = '航空写真-2030-0001';
  beforeAll(async () => {
    server = await startHostileServer();
    const content = [
      { id: LONG, url: 'https://images.example/1', coordinates: { latitude: 48.8584, longitude: 2.2945 }, resolution: 'UHD', createdAt: '2030-01-02T03:04:05.678Z' },
      { id: WIDE, url: 'https://images.example/2', coordinates: { latitude: -33.8568, longitude: 151.2153 }, resolution: 'HD', createdAt: '2030-01-02T03:04:06Z' },
    ];
    server.respond(answerJson(200, { content, totalElements: 2, totalPages: 1, page: 0, size: 20 }));
  });
  afterAll(async () => {
    await server.close();
  });
  const env = () => ({ AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'list-output-key-01' });

  it('at 80 columns: the time of day and resolution give way, ids stay whole', async () => {
    registerSecret('list-output-key-01');
    const { exitCode, lines } = await onTerminal(['list'], 80, env());
    expect(exitCode).toBe(0);
    // The wide id takes 18 columns for its 14 characters, and is padded by what it shows, not its length.
    expect(lines).toEqual([
      'ID                                                Date (UTC)  Coordinates',
      'img_0123456789abcdef0123456789abcdef0123456789ab  2030-01-02  48.8584, 2.2945',
      '航空写真-2030-0001                                2030-01-02  -33.8568, 151.2153',
      'Page 0, the only one (2 images)',
    ]);
    expect(stringWidth(lines[2]!)).toBe(80);
    expectFits(lines, 80, [LONG, WIDE]);
  });

  it('at 60 columns: the ids alone', async () => {
    const { lines } = await onTerminal(['list'], 60, env());
    expect(lines).toEqual(['ID', LONG, WIDE, 'Page 0, the only one (2 images)']);
    expectFits(lines, 60, [LONG, WIDE]);
  });
});

describe('piped', () => {
  it('one tab-separated line per image: id, createdAt, resolution, latitude, longitude; no header, borders or escape codes', async () => {
    const result = await runCli(['list'], { configDir: home.path, env: { ...sandbox.env(), FORCE_COLOR: '1' } });
    expect(result.exitCode).toBe(0);
    const expected = records
      .map((r) => [r.id, r.createdAt, r.resolution, String(r.coordinates.latitude), String(r.coordinates.longitude)].join('\t') + '\n')
      .join('');
    expect(result.stdout).toBe(expected);
    expect(result.stdout).not.toMatch(/[\u2500-\u257f|+]|\u001b/);
    // The cut and awk this is for.
    expect(result.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0])).toEqual(records.map((r) => r.id));
    expect(result.stderr).toContain('Page 0, the only one (3 images)');
  });

  it('--all too, with the count on stderr', async () => {
    const result = await runCli(['list', '--all', '--size', '1'], { configDir: home.path, env: sandbox.env() });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0])).toEqual(records.map((r) => r.id));
    expect(result.stderr).toBe('3 images\n');
  });
});
