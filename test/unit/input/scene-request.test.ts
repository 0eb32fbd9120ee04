import { describe, expect, it } from 'vitest';
import { imageDimensions, parseSceneEnum, RESOLUTIONS, ASPECT_RATIOS } from '../../../src/api/enums.js';
import { nearest } from '../../../src/text/suggest.js';
import { UsageError } from '../../../src/lifecycle/errors.js';
import { generationRequestSchema } from '../../../src/api/schema.js';
import { resolveSettings } from '../../../src/config/config.js';
import { buildGenerationRequest, parseLocation } from '../../../src/input/scene-request.js';
import { usageMessage } from '../../helpers/usage-error.js';

const defaults = resolveSettings({}, {}, {}).sceneDefaults;


describe('parseSceneEnum', () => {
  it('accepts any case and separators, returning the wire form', () => {
    expect(parseSceneEnum('bearing', 'northeast')).toEqual({ ok: true, value: 'NorthEast' });
    expect(parseSceneEnum('bearing', 'NORTH-EAST')).toEqual({ ok: true, value: 'NorthEast' });
    expect(parseSceneEnum('weather', 'golden_hour')).toEqual({ ok: true, value: 'GoldenHour' });
    expect(parseSceneEnum('resolution', 'uhd')).toEqual({ ok: true, value: 'UHD' });
  });

  it('maps compass abbreviations to full bearing names', () => {
    for (const [short, full] of [['n', 'North'], ['NE', 'NorthEast'], ['sw', 'SouthWest'], ['W', 'West']]) {
      expect(parseSceneEnum('bearing', short!)).toEqual({ ok: true, value: full });
    }
  });

  it('names the flag, lists the allowed values and suggests the nearest', () => {
    const result = parseSceneEnum('bearing', 'NorthEats');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toBe(
      "--bearing must be one of North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest; got 'NorthEats' (did you mean NorthEast?)",
    );
    const far = parseSceneEnum('zoom', 'banana');
    expect(!far.ok && far.message).not.toContain('did you mean');
  });

  it('nearest ignores candidates that are too far away', () => {
    expect(nearest('snwo', ['Sunny', 'Snow'])).toBe('Snow');
    expect(nearest('zzzzzzzz', ['Sunny', 'Snow'])).toBeUndefined();
  });

  it('gives a short word one edit: a typo of zoom, not any three letters', () => {
    const words = ['zoom', 'bearing', 'angle', 'weather', 'daytime', 'epoch', 'resolution'];
    expect(nearest('zom', words)).toBe('zoom');
    expect(nearest('foo', words)).toBeUndefined();
    expect(nearest('bar', words)).toBeUndefined();
    expect(nearest('hgih', ['Low', 'High'])).toBe('High');
    expect(nearest('wether', words)).toBe('weather');
  });
});

describe('imageDimensions', () => {
  it('gives whole pixel sizes with the right shape for every combination', () => {
    for (const resolution of RESOLUTIONS) {
      for (const aspect of ASPECT_RATIOS) {
        const { width, height } = imageDimensions(resolution, aspect);
        expect(Number.isInteger(width) && Number.isInteger(height)).toBe(true);
        const ratio = { Square: 1, Landscape: 16 / 9, Portrait: 9 / 16, Standard: 4 / 3 }[aspect];
        expect(width / height).toBeCloseTo(ratio, 5);
      }
    }
    expect(imageDimensions('UHD', 'Landscape')).toEqual({ width: 3840, height: 2160 });
    expect(imageDimensions('HD', 'Portrait')).toEqual({ width: 720, height: 1280 });
  });
});

describe('buildGenerationRequest', () => {
  it('fills every required field from defaults and sends the documented wire form', () => {
    const request = buildGenerationRequest({ lat: '48.8584', lng: '2.2945', bearing: 'ne', tag: ['tower'] }, defaults);
    expect(request).toEqual({
      coordinates: { lat: 48.8584, lng: 2.2945 },
      resolution: 'FHD',
      zoom: 'Medium',
      bearing: 'NorthEast',
      angle: 'High',
      weather: 'Sunny',
      daytime: 'Day',
      aspectRatio: 'Landscape',
      epoch: 'Nowadays',
      tags: ['tower'],
    });
    expect(generationRequestSchema().safeParse(request).success).toBe(true);
  });

  it('uses profile defaults when flags are absent, and flags over them', () => {
    const withProfile = resolveSettings({}, {}, { profiles: { default: { defaults: { zoom: 'High', saveImage: false } } } }).sceneDefaults;
    expect(buildGenerationRequest({ lat: 1, lng: 2 }, withProfile)).toMatchObject({ zoom: 'High', saveImage: false });
    expect(buildGenerationRequest({ lat: 1, lng: 2, zoom: 'low', saveImage: true }, withProfile)).toMatchObject({ zoom: 'Low', saveImage: true });
  });

  it('rejects a missing latitude naming the flag', () => {
    expect(usageMessage(() => buildGenerationRequest({ lng: '2' }, defaults))).toBe('--lat is required (or --at LAT,LNG or a place name)');
  });

  it('rejects out-of-range coordinates and spots swapped ones', () => {
    expect(usageMessage(() => buildGenerationRequest({ lat: '91', lng: '0' }, defaults))).toMatch(/^--lat must be between -90 and 90; got 91/);
    expect(usageMessage(() => buildGenerationRequest({ lat: '2.2945', lng: '181' }, defaults))).toMatch(/--lng must be between -180 and 180/);
    expect(usageMessage(() => buildGenerationRequest({ lat: '-122.4', lng: '37.8' }, defaults))).toContain('did you swap --lat and --lng?');
  });

  it('rejects non-numbers, including the things Number() would accept', () => {
    for (const junk of ['abc', '', '0x10', '1e', '12,5', 'Infinity', ' ']) {
      expect(() => buildGenerationRequest({ lat: junk, lng: '1' }, defaults)).toThrow(UsageError);
    }
  });

  it('allows ten tags and refuses eleven', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `t${i}`);
    expect(buildGenerationRequest({ lat: 0, lng: 0, tag: ten }, defaults).tags).toHaveLength(10);
    expect(usageMessage(() => buildGenerationRequest({ lat: 0, lng: 0, tag: [...ten, 'x'] }, defaults))).toBe(
      '--tag may be given at most 10 times; got 11',
    );
  });

  it('reads --at as "lat,lng" and as a geo: URI', () => {
    expect(parseLocation('48.8584,2.2945')).toEqual({ lat: 48.8584, lng: 2.2945 });
    expect(parseLocation(' 48.8584, 2.2945 ')).toEqual({ lat: 48.8584, lng: 2.2945 });
    expect(parseLocation('geo:37.786971,-122.399677;u=35')).toEqual({ lat: 37.786971, lng: -122.399677 });
    expect(buildGenerationRequest({ at: 'geo:-33.8568,151.2153' }, defaults).coordinates).toEqual({ lat: -33.8568, lng: 151.2153 });
    expect(() => buildGenerationRequest({ at: '1,2', lat: '1' }, defaults)).toThrow(/cannot be combined/);
    expect(() => parseLocation('paris')).toThrow(/--at must be "LAT,LNG"/);
  });
});

describe('printable', () => {
  it('flattens server text to one line without control or escape sequences', async () => {
    const { printable } = await import('../../../src/text/printable.js');
    expect(printable('bad\nthing\u001b[2J\u001b[31mred\u0007')).toBe('bad thingred');
    expect(printable('x'.repeat(300), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('explicitly empty flag values', () => {
  it('are refused rather than replaced by the default', () => {
    expect(() => buildGenerationRequest({ lat: 1, lng: 2, zoom: '' }, defaults)).toThrow(/--zoom must be one of .*; got ''/);
  });
});

describe('a place name for the location', () => {
  const defaults = resolveSettings({}, {}, {}).sceneDefaults;

  it('sends the coordinates of the place --at names, and tells which place it took', () => {
    const told: string[] = [];
    const request = buildGenerationRequest({ at: 'Paris, FR' }, defaults, undefined, { onPlace: (query, found) => told.push(`${query} → ${found.place.name}, ${found.place.country}`) });
    expect(Math.abs(request.coordinates.lat - 48.857)).toBeLessThan(0.2);
    expect(Math.abs(request.coordinates.lng - 2.352)).toBeLessThan(0.2);
    expect(told).toEqual(['Paris, FR → Paris, FR']);
  });

  it('lets coordinates given beside a name win, without looking the name up', () => {
    const told: string[] = [];
    const request = buildGenerationRequest({ at: 'Springfield', lat: '1', lng: '2' }, defaults, undefined, { onPlace: (query) => told.push(query) });
    expect(request.coordinates).toEqual({ lat: 1, lng: 2 });
    expect(told).toEqual([]);
  });

  it('still refuses coordinates given twice', () => {
    expect(usageMessage(() => buildGenerationRequest({ at: '1,2', lat: '1', lng: '2' }, defaults))).toBe('--at cannot be combined with --lat/--lng');
  });

  it('refuses an ambiguous name naming the flag, or the column of a batch row', () => {
    expect(usageMessage(() => buildGenerationRequest({ at: 'Springfield' }, defaults))).toMatch(/^--at 'Springfield' names \d+ places: /);
    expect(usageMessage(() => buildGenerationRequest({ at: 'Springfield' }, defaults, (field) => `column '${field === 'at' ? 'place' : field}'`))).toMatch(/^column 'place' 'Springfield' names/);
  });
});
