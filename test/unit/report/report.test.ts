// The report's builders as pure functions: the GeoJSON's structure and
// coordinate order, the page's escaping, its markers and cards, the scene
// parameters taken from the vocabulary.
import { describe, expect, it } from 'vitest';
import { geoJson } from '../../../src/report/geojson.js';
import { escapeHtml, pathUrl, reportHtml } from '../../../src/report/html.js';
import { REPORT_SCENE_FIELDS, sceneOf, type ReportImage } from '../../../src/report/images.js';
import { landPath, project } from '../../../src/report/world-map.js';
import { fieldsOfKind, SCENE_FIELD_NAMES } from '../../../src/scene/vocabulary.js';
import { checkFeatureCollection } from '../../helpers/geojson.js';
import { generationRequest } from '../../helpers/sandbox.js';

const tokyo: ReportImage = {
  id: 'img-1',
  lat: 35.6586,
  lng: 139.7454,
  file: '/data/out/tokyo.jpg',
  scene: { resolution: 'UHD', zoom: 'High' },
  tags: ['tower', 'night'],
  status: 'done',
  createdAt: '2030-01-02T03:04:05.000Z',
};
const failedRow: ReportImage = { row: 7, lat: -33.8568, lng: 151.2153, file: '/data/out/7.jpg', scene: { resolution: 'HD' }, tags: [], status: 'failed', error: 'ErrorGeneratingImage — boom' };

describe('GeoJSON', () => {
  it('is an RFC 7946 FeatureCollection with positions in [longitude, latitude] order', () => {
    const collection = JSON.parse(JSON.stringify(geoJson([tokyo, failedRow], '/data/report/places.geojson')));
    const features = checkFeatureCollection(collection);
    // Tokyo's longitude, 139.7, is no latitude: in the other order the check above fails.
    expect(features.map((feature) => feature.coordinates)).toEqual([
      [139.7454, 35.6586],
      [151.2153, -33.8568],
    ]);
    expect(() => checkFeatureCollection({ ...collection, features: [{ ...collection.features[0], geometry: { type: 'Point', coordinates: [35.6586, 139.7454] } }] })).toThrow(/latitude 139.7454 is out of range/);
  });

  it('gives every feature the same properties: id, row, file relative to the GeoJSON, time, status, error, tags, every scene field', () => {
    const [first, second] = geoJson([tokyo, failedRow], '/data/report/places.geojson').features;
    expect(Object.keys(first!.properties)).toEqual(Object.keys(second!.properties));
    expect(first!.properties).toMatchObject({ id: 'img-1', row: null, file: '../out/tokyo.jpg', createdAt: tokyo.createdAt, status: 'done', error: null, tags: ['tower', 'night'], resolution: 'UHD', zoom: 'High', bearing: null });
    // A failed row has no file to point at.
    expect(second!.properties).toMatchObject({ id: null, row: 7, file: null, status: 'failed', error: 'ErrorGeneratingImage — boom' });
  });

  it('an image without a usable position has a null geometry', () => {
    const [feature] = geoJson([{ row: 1, scene: {}, tags: [], status: 'failed', error: 'invalid' }], '/x.geojson').features;
    expect(feature!.geometry).toBeNull();
    expect(checkFeatureCollection(geoJson([{ row: 1, lat: 91, lng: 0, scene: {}, tags: [], status: 'failed' }], '/x.geojson'))[0]!.coordinates).toBeNull();
  });
});

describe('scene parameters', () => {
  it('are every field of the vocabulary sent in the request but the location and the tags', () => {
    const excluded = fieldsOfKind('coordinate', 'location', 'list');
    expect([...REPORT_SCENE_FIELDS]).toEqual(SCENE_FIELD_NAMES.filter((field) => !excluded.includes(field as never)));
    const request = { ...generationRequest({ resolution: 'UHD', tags: ['a'] }), includeContext: true, prompt: 'golden roofs' };
    // Everything the body says but where it is and its tags, by the body's own names.
    const { coordinates: _where, tags: _tags, ...scene } = request;
    expect(sceneOf(request)).toEqual(scene);
    expect(Object.keys(scene)).toContain('prompt');
  });
});

describe('the page', () => {
  const page = (images: Array<ReportImage & { href?: string; thumbnail?: string }>) =>
    reportHtml({ title: 'aerial batch <places>', subtitle: 'places.csv', images, generatedAt: new Date('2030-01-01T00:00:00Z'), generator: 'aerial test' });

  it('escapes every text that came from outside, in text and in attributes', () => {
    const hostile: ReportImage = { ...tokyo, id: '"><script>alert(1)</script>', tags: ["</script><img src=x onerror=alert(2)>"], error: '<b>bad</b>', scene: { prompt: "' onmouseover='x" } };
    const html = page([hostile]);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>bad</b>');
    expect(html).toContain('&lt;b&gt;bad&lt;/b&gt;');
    expect(html).toContain('data-id="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(html).toContain('<title>aerial batch &lt;places&gt;</title>');
    // One script element: the page's own.
    expect(html.match(/<script>/g)).toHaveLength(1);
  });

  it('has one marker per located image, named like its card (data-id, or data-row without an id)', () => {
    const html = page([tokyo, failedRow, { row: 9, scene: {}, tags: [], status: 'failed', error: 'no location' }]);
    const markers = [...html.matchAll(/<circle class="marker (\w+)" cx="([\d.]+)" cy="([\d.]+)" r="3" (data-(?:id|row)="[^"]*") data-card="(c\d)"/g)];
    expect(markers.map((m) => [m[1], m[4], m[5]])).toEqual([
      ['done', 'data-id="img-1"', 'c0'],
      ['failed', 'data-row="7"', 'c1'],
    ]);
    expect(markers.map((m) => [Number(m[2]), Number(m[3])])).toEqual([project(139.7454, 35.6586), project(151.2153, -33.8568)]);
    expect(html).toContain('<article class="card" id="c2" data-row="9" data-status="failed"');
  });

  it('links the thumbnail to the full JPEG by a relative URL', () => {
    const html = page([{ ...tokyo, href: 'out/tokyo #1.jpg', thumbnail: 'report.thumbnails/tokyo~0123456789.jpg' }]);
    expect(html).toContain('<a class="thumb" href="out/tokyo%20%231.jpg"><img src="report.thumbnails/tokyo~0123456789.jpg" loading="lazy"');
    expect(pathUrl('a b/c?d.jpg')).toBe('a%20b/c%3Fd.jpg');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('forbids itself the network: a policy allowing nothing but itself and its files', () => {
    expect(page([])).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`);
    expect(page([])).not.toMatch(/https?:\/\//);
  });
});

describe('the world map', () => {
  it('is equirectangular: the corners and the middle where they belong', () => {
    expect(project(-180, 90)).toEqual([0, 0]);
    expect(project(180, -90)).toEqual([720, 360]);
    expect(project(0, 0)).toEqual([360, 180]);
  });

  it('draws the land without lines across the map where a coast crosses the antimeridian', () => {
    const path = landPath();
    expect(path.length).toBeGreaterThan(10_000);
    for (const ring of path.split('M').filter(Boolean)) {
      const xs = ring.replace('Z', '').split('L').map((point) => Number(point.split(' ')[0]));
      for (let i = 1; i < xs.length; i++) expect(Math.abs(xs[i]! - xs[i - 1]!)).toBeLessThan(360);
    }
  });
});
