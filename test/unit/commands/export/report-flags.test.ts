// `export --no-report` and `export --report-only`, in-process against a real
// history server on a socket (bench/history-server.mjs): the images and the
// index without a report, then the report (its thumbnails, the GeoJSON) made
// later from the index alone with nothing sent; the report an ordinary export
// writes has every thumbnail (made while the downloads went on); and what is
// refused: --report-only on a directory with no index, with --no-report, or
// with a download's flags, each in one line naming the flag, exit 2.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHistoryServer, type HistoryServer } from '../../../../bench/history-server.mjs';
import { registerSecret, tempDir } from '../../../helpers/cli.js';
import { runInProcess, TestTerminal } from '../../../helpers/terminal.js';

const KEY = 'export-report-flags-key-31';
const IMAGES = 30;

describe('export --no-report and --report-only', () => {
  let server: HistoryServer;
  let home: ReturnType<typeof tempDir>;
  const run = (args: string[], env: Record<string, string> = {}) =>
    runInProcess(args, new TestTerminal({ env: { AERIAL_CONFIG_DIR: join(home.path, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY, ...env } }));
  const jpegs = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.jpg'));

  beforeAll(async () => {
    registerSecret(KEY);
    home = tempDir();
    server = await startHistoryServer({ count: IMAGES });
  });
  afterAll(async () => {
    await server.close();
    home.remove();
  });
  beforeEach(() => server.reset());

  it('--no-report writes the images and the index only; --report-only then makes the report and the GeoJSON from the index, sending nothing', async () => {
    const dir = join(home.path, 'later');
    const exported = await run(['export', dir, '--no-report', '--json']);
    expect(exported.exitCode, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ total: IMAGES, succeeded: IMAGES, indexed: IMAGES, report: null, geojson: null });
    expect(jpegs(dir)).toHaveLength(IMAGES);
    expect(readFileSync(join(dir, 'index.jsonl'), 'utf8').trim().split('\n')).toHaveLength(IMAGES);
    for (const name of ['index.html', 'index.geojson', 'index.thumbnails']) expect(existsSync(join(dir, name)), name).toBe(false);

    server.reset();
    // No key at all: the report is made from what is on disk.
    const reported = await run(['export', '--report-only', dir], { AERIAL_API_KEY: '' });
    expect(reported.exitCode, reported.stderr).toBe(0);
    expect(server.listRequests() + server.imageRequests()).toBe(0);
    expect(reported.stderr).toMatch(new RegExp(`^✔ index\\.html and index\\.geojson of ${IMAGES} images in .*later: ${IMAGES} thumbnails made, 0 reused`));
    expect(readdirSync(join(dir, 'index.thumbnails'))).toHaveLength(IMAGES);
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(html.match(/<img src="index\.thumbnails\//g)).toHaveLength(IMAGES);
    expect(JSON.parse(readFileSync(join(dir, 'index.geojson'), 'utf8')).features).toHaveLength(IMAGES);

    // Again, as --json: every thumbnail reused.
    const again = await run(['export', '--report-only', dir, '--json'], { AERIAL_API_KEY: '' });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ images: IMAGES, report: join(dir, 'index.html'), thumbnails: { made: 0, reused: IMAGES, failed: 0 } });
  });

  it('an export with its report has every thumbnail, made while the downloads went on, and the report finds them made', async () => {
    const dir = join(home.path, 'whole');
    const result = await run(['export', dir, '--concurrency', '8', '--verbose']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(server.imageRequests()).toBe(IMAGES);
    expect(readdirSync(join(dir, 'index.thumbnails')).filter((name) => name.endsWith('.jpg'))).toHaveLength(IMAGES);
    expect(result.stderr).toContain(`report: ${join(dir, 'index.html')}: 0 thumbnails made, ${IMAGES} reused`);
    expect(readFileSync(join(dir, 'index.html'), 'utf8').match(/<img src="index\.thumbnails\//g)).toHaveLength(IMAGES);
  });

  it('refuses --report-only on a directory with no index, in one line naming the flag, exit 2, nothing sent', async () => {
    const empty = join(home.path, 'empty');
    mkdirSync(empty);
    for (const dir of [empty, join(home.path, 'missing')]) {
      const result = await run(['export', '--report-only', dir]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/^error: NoExportIndex — --report-only: .* holds no index\.jsonl \(no export was made into it\); run aerial export .* first\n$/);
      expect(result.stdout).toBe('');
    }
    const standIn = join(home.path, 'dir-index');
    mkdirSync(join(standIn, 'index.jsonl'), { recursive: true });
    const odd = await run(['export', '--report-only', standIn, '--json']);
    expect(odd.exitCode).toBe(2);
    expect(JSON.parse(odd.stderr)).toMatchObject({ error: 'NoExportIndex' });
    expect(existsSync(join(home.path, 'missing'))).toBe(false);
    expect(server.listRequests()).toBe(0);
  });

  it('refuses --report-only with --no-report, or with a flag only a download uses, before anything is read or sent', async () => {
    const dir = join(home.path, 'refusals');
    mkdirSync(dir);
    writeFileSync(join(dir, 'index.jsonl'), '');
    const cases: Array<[string[], RegExp]> = [
      [['--no-report'], /^error: --report-only makes the report that --no-report leaves out; give one of them, not both\n$/],
      [['--concurrency', '8'], /^error: --report-only .* cannot be combined with --concurrency\n$/],
      [['--page-size', '10'], /cannot be combined with --page-size\n$/],
      [['--no-metadata'], /cannot be combined with --no-metadata\n$/],
    ];
    for (const [flags, message] of cases) {
      const result = await run(['export', '--report-only', dir, ...flags]);
      expect(result.exitCode, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(dir)).toEqual(['index.jsonl']);
    expect(server.listRequests()).toBe(0);
    rmSync(dir, { recursive: true });
  });
});
