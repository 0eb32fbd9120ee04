// The report and the GeoJSON written image by image (an export's index read
// back from disk) are the same bytes as those built from an array.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { geoJson, writeGeoJsonStream } from '../../../src/report/geojson.js';
import { addToSummary, emptySummary, reportHtml, SECTION_SIZE, writeReportHtml } from '../../../src/report/html.js';
import type { ReportImage, ReportStatus } from '../../../src/report/images.js';

const STATUSES: ReportStatus[] = ['done', 'failed', 'skipped', 'done'];

function images(count: number): ReportImage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i % 7 === 3 ? undefined : `img-<${i}>`,
    row: i,
    lat: i % 11 === 0 ? undefined : ((i * 37) % 180) - 90,
    lng: ((i * 53) % 360) - 180,
    file: `/data/out/${i}.jpg`,
    scene: i % 3 === 0 ? { resolution: i % 2 ? 'UHD' : 'HD', zoom: 'High' } : {},
    tags: i % 4 === 0 ? [`t${i % 5}`, 'shared'] : [],
    status: STATUSES[i % STATUSES.length]!,
    error: i % 4 === 1 ? 'boom & <fail>' : undefined,
    createdAt: '2030-01-02T03:04:05.000Z',
  }));
}

async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

const work = mkdtempSync(join(tmpdir(), 'aerial-streamed-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the report written image by image', () => {
  for (const count of [0, 1, SECTION_SIZE, SECTION_SIZE + 1, 3 * SECTION_SIZE + 7]) {
    it(`is reportHtml's page, byte for byte, at ${count} images`, async () => {
      const list = images(count).map((image, i) => ({ ...image, href: i % 5 ? `out/${i}.jpg` : undefined, thumbnail: i % 3 ? `t/${i}.jpg` : undefined }));
      const head = { title: 'aerial export', subtitle: '/data/out', generatedAt: new Date('2031-05-06T07:08:09Z'), generator: 'aerial 1.2.3' };
      const summary = emptySummary();
      for (const image of list) addToSummary(summary, image);
      const chunks: string[] = [];
      await writeReportHtml(head, summary, () => each(list), async (chunk) => void chunks.push(chunk));
      expect(chunks.join('')).toBe(reportHtml({ ...head, images: list }));
    });
  }
});

describe('the GeoJSON written feature by feature', () => {
  for (const count of [0, 1, 25]) {
    it(`is writeGeoJson's file at ${count} images`, async () => {
      const path = join(work, `places-${count}.geojson`);
      await writeGeoJsonStream(each(images(count)), path);
      expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(geoJson(images(count), path))}\n`);
    });
  }
});
