// The HTML report and the GeoJSON of `batch --report/--geojson` and `export`,
// made by real runs against the sandbox and opened in a real browser (Debian's
// chromium through playwright-core) from file://: every thumbnail loads, there
// is a marker per image, a marker's click shows its card, the filters count,
// nothing leaves file:// and the console stays clean.
import { readFileSync, readdirSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { chromiumAvailable, openFile, type OpenedPage } from '../helpers/browser.js';
import { checkFeatureCollection } from '../helpers/geojson.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

const PLACES = [
  ['48.8584', '2.2945', 'High', 'landmark;paris', 'HD'],
  ['40.6892', '-74.0445', 'Medium', 'landmark;new york', 'HD'],
  ['35.6586', '139.7454', 'Low', 'tokyo', 'HD'],
  ['-33.8568', '151.2153', 'High', 'landmark;sydney', 'FHD'],
  ['-22.9519', '-43.2105', 'Medium', 'rio', 'HD'],
  ['64.1466', '-21.9426', 'Low', 'reykjavik', 'HD'],
  ['95', '10', 'Medium', 'broken', 'HD'],
];
const DONE = PLACES.length - 1;

const batchArgs = ['batch', 'places.csv', '--output-template', 'out/{row}-{lat}_{lng}.jpg', '--skip-invalid', '--report', 'out/report.html', '--geojson', 'out/places.geojson'];

async function runBatch() {
  return runCli(batchArgs, { configDir: home.path, env: sandbox.env(), timeout: 60_000 });
}

/** Scrolls each thumbnail into view (they load lazily) and returns their natural widths. */
async function thumbnailWidths(opened: OpenedPage): Promise<number[]> {
  const count = await opened.page.locator('.card img').count();
  for (let i = 0; i < count; i++) {
    const image = opened.page.locator('.card img').nth(i);
    await image.scrollIntoViewIfNeeded();
    await opened.page.waitForFunction((element) => (element as HTMLImageElement).complete, await image.elementHandle());
  }
  return opened.page.locator('.card img').evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth));
}

describe('batch --report and --geojson', () => {
  beforeAll(async () => {
    writeFileSync(join(home.path, 'places.csv'), `lat,lng,zoom,tags,resolution\n${PLACES.map((row) => row.join(',')).join('\n')}\n`);
    const result = await runBatch();
    // Row 7 is invalid (latitude 95): the batch says so, and reports it as failed.
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Report: out/report.html');
    expect(result.stderr).toContain('GeoJSON: out/places.geojson');
  }, 90_000);

  it('writes RFC 7946 GeoJSON: a point [lng, lat] per row, its file relative to the GeoJSON, its scene and status', () => {
    const features = checkFeatureCollection(JSON.parse(readFileSync(join(home.path, 'out/places.geojson'), 'utf8')));
    expect(features).toHaveLength(PLACES.length);
    expect(features.slice(0, DONE).map((feature) => feature.coordinates)).toEqual(PLACES.slice(0, DONE).map(([lat, lng]) => [Number(lng), Number(lat)]));
    expect(features[0]!.properties).toMatchObject({
      id: null,
      row: 1,
      file: '1-48.8584_2.2945.jpg',
      status: 'done',
      error: null,
      tags: ['landmark', 'paris'],
      resolution: 'HD',
      zoom: 'High',
      bearing: 'North',
    });
    expect(Date.parse(features[0]!.properties.createdAt as string)).toBeGreaterThan(Date.now() - 10 * 60_000);
    expect(features[6]).toMatchObject({ coordinates: null, properties: { row: 7, status: 'failed', file: null } });
    expect(features[6]!.properties.error).toMatch(/latitude|lat/);
  });

  it.skipIf(!chromiumAvailable())('the report works offline in a real browser: thumbnails, markers, cards, filters', async () => {
    const opened = await openFile(join(home.path, 'out/report.html'));
    try {
      const { page } = opened;
      expect(await page.locator('.card').count()).toBe(PLACES.length);
      // A marker per image, named by its row (batch rows have no id).
      const markers = page.locator('svg .marker');
      expect(await markers.count()).toBe(DONE);
      expect(await markers.evaluateAll((list) => list.map((m) => m.getAttribute('data-row')).sort())).toEqual(['1', '2', '3', '4', '5', '6']);
      const widths = await thumbnailWidths(opened);
      expect(widths).toHaveLength(DONE);
      for (const width of widths) expect(width).toBeGreaterThan(0);
      // Small generated thumbnails, not the full JPEGs.
      expect(Math.max(...widths)).toBeLessThanOrEqual(320);

      // A marker's click brings its card into view and marks it.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.locator('svg .marker[data-row="3"]').click();
      const card = page.locator('.card[data-row="3"]');
      await expect.poll(() => card.evaluate((element) => element.classList.contains('focus'))).toBe(true);
      const box = await card.boundingBox();
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height).toBeLessThanOrEqual(900);
      expect(await card.textContent()).toContain('35.6586, 139.7454');

      await page.screenshot({ path: join(tmpdir(), 'aerial-report-batch.png'), fullPage: true });

      // Filters, with the count of what is shown; the markers follow.
      await page.selectOption('#f-status', 'failed');
      expect(await page.textContent('#shown')).toBe('Showing 1 of 7');
      expect(await page.locator('svg .marker:not(.off)').count()).toBe(0);
      await page.selectOption('#f-status', '');
      await page.selectOption('#f-tag', 'landmark');
      expect(await page.textContent('#shown')).toBe('Showing 3 of 7');
      expect(await page.locator('svg .marker:not(.off)').count()).toBe(3);
      await page.selectOption('#f-tag', '');
      await page.selectOption('#f-resolution', 'FHD');
      expect(await page.textContent('#shown')).toBe('Showing 1 of 7');
      expect(await page.locator('.card:not([hidden])').getAttribute('data-row')).toBe('4');
      // A marker filtered out is not clickable; with the filter, a click on a visible one still works.
      await page.locator('svg .marker[data-row="4"]').click();
      await expect.poll(() => page.locator('.card[data-row="4"]').evaluate((element) => element.classList.contains('focus'))).toBe(true);

      // The failed row's card says why.
      expect(await page.locator('.card[data-row="7"] .error').textContent()).toMatch(/95/);
      expect(opened.requests.length).toBeGreaterThan(DONE);
      expect(opened.requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  it('thumbnails are small JPEGs beside the report, reused on a re-run and made again for a newer image', async () => {
    const dir = join(home.path, 'out/report.thumbnails');
    const names = readdirSync(dir).sort();
    expect(names).toHaveLength(DONE);
    for (const name of names) {
      const meta = await sharp(join(dir, name)).metadata();
      expect(meta.format).toBe('jpeg');
      expect(meta.width).toBeLessThanOrEqual(320);
      expect(meta.height).toBeLessThanOrEqual(180);
    }
    const before = new Map(names.map((name) => [name, statSync(join(dir, name)).mtimeMs]));
    // An image edited since (newer than its thumbnail), a thumbnail removed, a stale file of an image gone.
    const touched = join(home.path, 'out/2-40.6892_-74.0445.jpg');
    const later = new Date(Date.now() + 5_000);
    utimesSync(touched, later, later);
    unlinkSync(join(dir, names[0]!));
    writeFileSync(join(dir, 'gone~0123456789.jpg'), 'old');

    const again = await runBatch();
    expect(again.exitCode).toBe(2);
    const after = readdirSync(dir).sort();
    expect(after).toEqual(names);
    const changed = after.filter((name) => statSync(join(dir, name)).mtimeMs !== before.get(name));
    expect(changed.sort()).toEqual([names[0], names.find((name) => name.startsWith('2-40.6892'))].sort());
  });
});

describe('batch --report and --geojson that cannot be written', () => {
  it('are refused before anything is sent (exit 2), naming the flag', async () => {
    writeFileSync(join(home.path, 'one.csv'), 'lat,lng\n1,2\n');
    sandbox.clearRequests();
    const directory = await runCli(['batch', 'one.csv', '--output-template', 'one/{row}.jpg', '--report', '.'], { configDir: home.path, env: sandbox.env() });
    expect(directory.exitCode).toBe(2);
    expect(directory.stderr).toBe('error: --report . is a directory; name a file\n');
    writeFileSync(join(home.path, 'a-file'), '');
    const underFile = await runCli(['batch', 'one.csv', '--output-template', 'one/{row}.jpg', '--geojson', 'a-file/places.geojson'], { configDir: home.path, env: sandbox.env() });
    expect(underFile.exitCode).toBe(2);
    expect(underFile.stderr).toMatch(/^error: --geojson a-file\/places\.geojson: cannot create directory .*a-file: a file is in the way/);
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('export writes index.html and index.geojson', () => {
  it.skipIf(!chromiumAvailable())('with a marker per image by id, and every thumbnail loading offline', async () => {
    const exported = await runCli(['export', 'backup', '--json'], { configDir: home.path, env: sandbox.env(), timeout: 60_000 });
    expect(exported.exitCode).toBe(0);
    const summary = JSON.parse(exported.stdout);
    const dir = join(home.path, 'backup');
    expect(summary).toMatchObject({ report: join(dir, 'index.html'), geojson: join(dir, 'index.geojson') });
    const index = readFileSync(join(dir, 'index.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(index.length).toBe(summary.indexed);

    const features = checkFeatureCollection(JSON.parse(readFileSync(join(dir, 'index.geojson'), 'utf8')));
    expect(features.map((feature) => feature.properties.id)).toEqual(index.map((record) => record.id));
    expect(features.map((feature) => feature.coordinates)).toEqual(index.map((record) => [record.coordinates.longitude, record.coordinates.latitude]));
    expect(features.map((feature) => feature.properties.file)).toEqual(index.map((record) => record.file));

    const opened = await openFile(join(dir, 'index.html'));
    try {
      const ids = await opened.page.locator('svg .marker').evaluateAll((list) => list.map((m) => m.getAttribute('data-id')).sort());
      expect(ids).toEqual(index.map((record) => record.id).sort());
      const widths = await thumbnailWidths(opened);
      expect(widths).toHaveLength(index.length);
      for (const width of widths) expect(width).toBeGreaterThan(0);
      // The thumbnail links to the full JPEG, by a path relative to the report.
      expect(await opened.page.locator('.card .thumb').first().getAttribute('href')).toBe(index[0].file);
      const id = index[index.length - 1].id as string;
      await opened.page.evaluate(() => window.scrollTo(0, 0));
      await opened.page.locator(`svg .marker[data-id="${id}"]`).click();
      await expect.poll(() => opened.page.locator(`.card[data-id="${id}"]`).evaluate((element) => element.classList.contains('focus'))).toBe(true);
      await opened.page.screenshot({ path: join(tmpdir(), 'aerial-report-export.png') });
      expect(opened.requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});

describe('a report of many images', () => {
  it.skipIf(!chromiumAvailable())('deals the cards a filter shows into full sections, in order, and puts them back when it is cleared', async () => {
    const { reportHtml, SECTION_SIZE } = await import('../../src/report/html.js');
    const count = SECTION_SIZE * 3 + 7;
    const images = Array.from({ length: count }, (_, i) => ({
      row: i + 1,
      lat: (i % 170) - 85,
      lng: ((i * 7) % 360) - 180,
      scene: { resolution: i % 3 === 0 ? 'UHD' : 'HD' },
      tags: [],
      status: i % 5 === 0 ? ('failed' as const) : ('done' as const),
      error: i % 5 === 0 ? 'ErrorGeneratingImage' : undefined,
    }));
    const file = join(home.path, 'many.html');
    writeFileSync(file, reportHtml({ title: 'many', subtitle: 'rows', images, generatedAt: new Date(), generator: 'aerial test', noun: 'row' }));
    const opened = await openFile(file);
    try {
      const { page } = opened;
      /** The rows of the cards shown, section by section. */
      const layout = () =>
        page.evaluate(() =>
          [...document.querySelectorAll('main > .cards:not([hidden])')].map((section) =>
            [...section.querySelectorAll('.card:not([hidden])')].map((card) => Number((card as HTMLElement).dataset.row)),
          ),
        );
      const rows = (from: number, to: number, keep: (row: number) => boolean = () => true) =>
        Array.from({ length: to - from + 1 }, (_, i) => from + i).filter(keep);
      const sections = (list: number[]) => Array.from({ length: Math.ceil(list.length / SECTION_SIZE) }, (_, i) => list.slice(i * SECTION_SIZE, (i + 1) * SECTION_SIZE));
      expect(await layout()).toEqual(sections(rows(1, count)));

      await page.selectOption('#f-resolution', 'HD');
      const hd = rows(1, count, (row) => (row - 1) % 3 !== 0);
      expect(await page.textContent('#shown')).toBe(`Showing ${hd.length} of ${count}`);
      expect(await layout()).toEqual(sections(hd));
      await page.selectOption('#f-status', 'failed');
      expect(await layout()).toEqual(sections(hd.filter((row) => (row - 1) % 5 === 0)));
      await page.selectOption('#f-status', '');
      await page.selectOption('#f-resolution', '');
      expect(await layout()).toEqual(sections(rows(1, count)));
      expect(await page.locator('.card').evaluateAll((cards) => cards.map((card) => Number((card as HTMLElement).dataset.row)))).toEqual(rows(1, count));

      // With a filter on, a marker's click brings its card, dealt into an earlier section, into view.
      await page.selectOption('#f-status', 'failed');
      const failed = rows(1, count, (row) => (row - 1) % 5 === 0);
      expect(await layout()).toEqual(sections(failed));
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.locator(`svg .marker[data-row="${failed.at(-1)}"]`).click();
      const card = page.locator(`.card[data-row="${failed.at(-1)}"]`);
      await expect.poll(() => card.evaluate((element) => element.classList.contains('focus'))).toBe(true);
      const box = await card.boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height).toBeLessThanOrEqual(900);
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});
