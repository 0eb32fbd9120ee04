// `aerial list`'s filters (src/commands/list/filters.ts and the walk in
// list/index.ts), against the sandbox fixture: what each keeps, how many list
// requests a walk sends, and the next-page hint that keeps the global options.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { distanceKm, makeListFilter, parseInstant } from '../../../../src/commands/list/filters.js';
import type { ImageRecord } from '../../../../src/api/schema.js';
import { useCommandsAgainstSandbox } from '../../../helpers/sandbox-commands.js';
import { runCommand } from '../../../helpers/terminal.js';
import { usageMessage } from '../../../helpers/usage-error.js';

const NOW = Date.parse('2030-06-01T12:00:00Z');

function record(createdAt: string, resolution = 'HD', latitude = 0, longitude = 0): ImageRecord {
  return { id: createdAt, url: 'http://x.invalid/a.jpg', createdAt, resolution, coordinates: { latitude, longitude } } as ImageRecord;
}

describe('the filters', () => {
  it('read --since and --until as a duration back from now or an ISO date, UTC unless zoned', () => {
    expect(parseInstant('2h', '--since', NOW)).toBe(NOW - 7_200_000);
    expect(parseInstant('1h30m', '--since', NOW)).toBe(NOW - 5_400_000);
    expect(parseInstant('90', '--since', NOW)).toBe(NOW - 90_000);
    expect(parseInstant('2030-01-31', '--since', NOW)).toBe(Date.parse('2030-01-31T00:00:00Z'));
    expect(parseInstant('2030-01-31T12:00', '--since', NOW)).toBe(Date.parse('2030-01-31T12:00:00Z'));
    expect(parseInstant('2030-01-31 12:00+02:00', '--since', NOW)).toBe(Date.parse('2030-01-31T10:00:00Z'));
    expect(usageMessage(() => parseInstant('yesterday', '--since', NOW))).toMatch(/^--since must be a duration back from now \(2h, 30m, 1h30m\) or a date .*; got 'yesterday'$/);
    expect(usageMessage(() => parseInstant('2030-13-45', '--until', NOW))).toMatch(/^--until must be/);
  });

  it('keep what every given filter allows', () => {
    const filter = makeListFilter({ since: '1h', resolution: 'hd' }, { lat: 48.8584, lng: 2.2945 }, undefined, NOW);
    expect(filter.active).toBe(true);
    expect(filter.sort).toEqual(['createdAt,desc']);
    expect(filter.keeps(record('2030-06-01T11:30:00Z', 'HD', 48.86, 2.3))).toBe(true);
    expect(filter.keeps(record('2030-06-01T10:30:00Z', 'HD', 48.86, 2.3))).toBe(false);
    expect(filter.keeps(record('2030-06-01T11:30:00Z', 'UHD', 48.86, 2.3))).toBe(false);
    expect(filter.keeps(record('2030-06-01T11:30:00Z', 'HD', 45.76, 4.83))).toBe(false);
  });

  it('measure --within in kilometres on the sphere', () => {
    expect(distanceKm({ lat: 48.8566, lng: 2.3522 }, { lat: 51.5074, lng: -0.1278 })).toBeCloseTo(343.6, 0);
    const filter = makeListFilter({ within: '400' }, { lat: 48.8566, lng: 2.3522 }, undefined, NOW);
    expect(filter.keeps(record('2030-06-01T11:30:00Z', 'HD', 51.5074, -0.1278))).toBe(true);
  });

  it('end the walk only where the listing has kept the order it was asked for', () => {
    const newestFirst = makeListFilter({ since: '1h' }, undefined, undefined, NOW);
    expect(newestFirst.endsAt(record('2030-06-01T11:50:00Z'))).toBe(false);
    expect(newestFirst.endsAt(record('2030-06-01T10:00:00Z'))).toBe(true);
    const disordered = makeListFilter({ since: '1h' }, undefined, undefined, NOW);
    disordered.endsAt(record('2030-06-01T10:00:00Z'));
    expect(disordered.endsAt(record('2030-06-01T11:50:00Z'))).toBe(false);
    expect(disordered.endsAt(record('2030-06-01T09:00:00Z'))).toBe(false);
    const unsorted = makeListFilter({ since: '1h' }, undefined, ['id,asc'], NOW);
    expect(unsorted.endsAt(record('2030-06-01T10:00:00Z'))).toBe(false);
  });

  it('refuse what cannot be a filter, naming the flag', () => {
    expect(usageMessage(() => makeListFilter({ within: '5' }, undefined, undefined, NOW))).toBe('--within applies only with --near LAT,LNG');
    expect(usageMessage(() => makeListFilter({ within: '-1' }, { lat: 0, lng: 0 }, undefined, NOW))).toMatch(/^--within must be a distance in kilometres above 0/);
    expect(usageMessage(() => makeListFilter({ resolution: '4K' }, undefined, undefined, NOW))).toMatch(/^--resolution must be one of HD, FHD, UHD; got '4K'/);
    expect(usageMessage(() => makeListFilter({ limit: '0' }, undefined, undefined, NOW))).toMatch(/^--limit must be/);
    expect(usageMessage(() => makeListFilter({ since: '2030-02-01', until: '2030-01-01' }, undefined, undefined, NOW))).toBe('--since must be earlier than --until');
  });
});

describe('list against the sandbox fixture, over 12 images (4 HD)', () => {
  const fixture = useCommandsAgainstSandbox();
  const { cli } = fixture;
  const listRequests = () => fixture.sandbox.requests().filter((entry) => entry.method === 'GET' && entry.path.startsWith('/api/external/v1/image-generation'));

  beforeAll(async () => {
    for (const [i, resolution] of ['HD', 'FHD', 'UHD', 'HD', 'FHD', 'UHD', 'HD', 'FHD', 'UHD', 'HD', 'FHD', 'UHD'].entries()) {
      const result = await cli(['generate', '--lat', String(40 + i), '--lng', '2', '--resolution', resolution, '-o', join(fixture.home.path, `${i}.jpg`), '-q']);
      expect(result.exitCode).toBe(0);
    }
  }, 120_000);

  it('--resolution HD gives the 4', async () => {
    const result = await cli(['list', '--all', '--resolution', 'HD', '--json']);
    expect(result.exitCode).toBe(0);
    const page = JSON.parse(result.stdout);
    expect(page.content).toHaveLength(4);
    expect(page.content.every((image: ImageRecord) => image.resolution === 'HD')).toBe(true);
    expect(page.totalElements).toBe(4);
  });

  it('--limit 3 --size 5 gives 3 from one list request', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['list', '--all', '--limit', '3', '--size', '5', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).content).toHaveLength(3);
    expect(listRequests()).toHaveLength(1);
  });

  it('--limit alone asks for pages of the limit, and walks on only as far as it needs', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['list', '--limit', '2', '--json']);
    expect(JSON.parse(result.stdout).content).toHaveLength(2);
    expect(listRequests().map((entry) => entry.query.size)).toEqual(['2']);
  });

  it('--since 1h drops none made in the last hour', async () => {
    const result = await cli(['list', '--all', '--since', '1h', '--json']);
    expect(JSON.parse(result.stdout).content).toHaveLength(12);
  });

  it('--since 3h --until 1h keeps none of them, asking for the newest first', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['list', '--since', '3h', '--until', '1h', '--size', '5']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('No images match.');
    // Nothing is older than 3 hours, so the walk goes on to the end: 3 pages of 5.
    expect(listRequests().map((entry) => entry.query.sort)).toEqual(['createdAt,desc', 'createdAt,desc', 'createdAt,desc']);
  });

  it('--since ends the walk, newest first, at the first image made before it', async () => {
    fixture.sandbox.clearRequests();
    // The 12 were made a moment apart: since the sixth newest, the walk stops on the page holding the seventh.
    const sixth = JSON.parse((await cli(['list', '--size', '12', '--sort', 'createdAt,desc', '--json'])).stdout).content[5].createdAt;
    fixture.sandbox.clearRequests();
    const result = await cli(['list', '--since', sixth, '--size', '4', '--json']);
    expect(JSON.parse(result.stdout).content).toHaveLength(6);
    expect(listRequests()).toHaveLength(2);
  });

  it('--near with --within keeps the images within that distance', async () => {
    const result = await cli(['list', '--near', '41,2', '--within', '120', '--json']);
    const latitudes = JSON.parse(result.stdout).content.map((image: ImageRecord) => image.coordinates.latitude).sort();
    expect(latitudes).toEqual([40, 41, 42]);
  });

  it('refuses filters with --page, before anything is sent', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['list', '--page', '1', '--resolution', 'HD']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^error: --since, --until, --resolution, --near and --limit walk every page, as --all does; they cannot be combined with --page\n$/);
    expect(listRequests()).toHaveLength(0);
  });

  it('keeps --base-url in the hint after list --size 3 --base-url URL, and --profile', async () => {
    const result = await runCommand(['list', '--size', '3', '--base-url', fixture.sandbox.url], { configDir: fixture.home.path, env: { AERIAL_API_KEY: fixture.sandbox.key } });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`next: aerial list --page 1 --size 3 --base-url ${fixture.sandbox.url}`);
  });
});
