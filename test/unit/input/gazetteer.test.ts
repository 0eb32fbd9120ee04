// Places by name (src/input/gazetteer.ts) against the gazetteer the build
// wrote (dist/gazetteer.tsv.gz): what a name, a name with its country or
// region, an ambiguous name and an unknown one give.
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findBuiltFile } from '../../../src/build-outputs/built-files.js';
import { resolveSettings } from '../../../src/config/config.js';
import { buildGenerationRequest } from '../../../src/input/scene-request.js';
import { describePlace, findPlace, Gazetteer, GAZETTEER_FILE, GAZETTEER_MAGIC, looksLikeCoordinates, placeKey } from '../../../src/input/gazetteer.js';
import { UsageError } from '../../../src/lifecycle/errors.js';

function refusal(query: string): UsageError {
  try {
    findPlace(query, '--at');
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error(`'${query}' was not refused`);
}

describe('the gazetteer of the build', () => {
  it('ships as one file of reasonable size', () => {
    const file = findBuiltFile(GAZETTEER_FILE);
    expect(file).toBeDefined();
    const { size } = statSync(file!);
    expect(size).toBeGreaterThan(1_000_000);
    expect(size).toBeLessThan(4_000_000);
  });

  it('finds a city by name and country, within a hundredth of a degree of its centre', () => {
    const { place } = findPlace('Paris, FR', '--at');
    expect(place).toMatchObject({ name: 'Paris', country: 'FR', region: 'Île-de-France' });
    expect(Math.abs(place.lat - 48.857)).toBeLessThan(0.2);
    expect(Math.abs(place.lng - 2.352)).toBeLessThan(0.2);
  });

  it('takes a country by its English name, a region by name or code, accents and case as they come', () => {
    expect(findPlace('paris, france', '--at').place.country).toBe('FR');
    expect(findPlace('Springfield, Illinois', '--at').place).toMatchObject({ country: 'US', region: 'Illinois' });
    expect(findPlace('springfield, il, us', '--at').place.region).toBe('Illinois');
    expect(findPlace('Zurich', '--at').place.name).toBe('Zürich');
    expect(findPlace('SAO PAULO', '--at').place.name).toBe('São Paulo');
    expect(findPlace('Paris, Texas', '--at').place).toMatchObject({ country: 'US', region: 'Texas' });
  });

  it('takes the largest place of a name shared only with far smaller ones, and says how many others there are', () => {
    const found = findPlace('Paris', '--at');
    expect(found.place.country).toBe('FR');
    expect(found.others).toBeGreaterThan(3);
  });

  it('refuses a name that places of comparable size share, listing candidates with country, region and coordinates', () => {
    const error = refusal('Springfield');
    expect(error.code).toBe('AmbiguousPlace');
    expect(error.message).toMatch(/^--at 'Springfield' names \d+ places: Springfield, Missouri, US \(37\.2\d*, -93\.2\d*\); Springfield, Massachusetts, US/);
    expect(error.message).toMatch(/and \d+ more; add the region or country \("Springfield, Missouri, US"\)/);
    expect(error.message).not.toContain('\n');
  });

  it('refuses a name it does not know, with names that start the same', () => {
    const error = refusal('New York');
    expect(error.code).toBe('PlaceNotFound');
    expect(error.message).toContain('did you mean New York City, New York, US');
    expect(refusal('Qwzxv').message).toMatch(/^--at 'Qwzxv': no such place .*give its coordinates instead/);
  });

  it('says where a name is when the country given has none of it', () => {
    const error = refusal('Paris, DE');
    expect(error.message).toMatch(/^--at 'Paris, DE': no place named 'Paris' in 'DE'; there are Paris, Île-de-France, FR/);
  });

  it('tries a name with a comma of its own whole before taking what follows the comma for a country', () => {
    expect(findPlace('Basford, Stoke-on-Trent', '--at').place).toMatchObject({ name: 'Basford, Stoke-on-Trent', country: 'GB' });
  });
});

describe('names and coordinates', () => {
  it('compares names without accents, case or punctuation', () => {
    expect(placeKey('Saint-Étienne')).toBe('saint etienne');
    expect(placeKey('  Düsseldorf ')).toBe('dusseldorf');
    expect(placeKey('Łódź')).toBe('lodz');
    expect(placeKey('Straße')).toBe('strasse');
  });

  it('tells coordinates from names', () => {
    for (const text of ['48.8584,2.2945', '48.8584, 2.2945', '-33.9 151.2', 'geo:48.8584,2.2945;u=35', '1e1,2']) expect(looksLikeCoordinates(text)).toBe(true);
    for (const text of ['Paris', 'Paris, FR', 'Rome 2', 'Åre']) expect(looksLikeCoordinates(text)).toBe(false);
  });

  it('takes the words a program prints for numbers it could not compute as coordinates, never as a name: NaN is not Nan, Thailand', () => {
    for (const text of ['NaN,NaN', '!,NaN', '48.8,Infinity', '-Infinity 2']) expect(looksLikeCoordinates(text)).toBe(true);
    expect(() => buildGenerationRequest({ at: '!,NaN' }, resolveSettings({}, {}, {}).sceneDefaults)).toThrow(/--at/);
    // The place itself, written as a name, is still a place.
    for (const text of ['Nan', 'Nan, TH', 'Infinity Pool']) expect(looksLikeCoordinates(text)).toBe(false);
  });
});

describe('the file format', () => {
  const small = [
    `${GAZETTEER_MAGIC} test`,
    'R\tUS\t?',
    'R\tUS.IL\tIllinois',
    'R\tUS.MO\tMissouri',
    '\tAlpha\tUS\tIL\t1\t2\t5000',
    'saint etienne\tSaint-Étienne\tFR\t84\t45.4\t4.4\t170000',
    '\tSpringfield\tUS\tIL\t39.8\t-89.6\t116565',
    '\tSpringfield\tUS\tMO\t37.2\t-93.3\t166810',
    '\tZeta\tGR\t\t3\t4\t1000',
    '',
  ].join('\n');
  const gazetteer = new Gazetteer(small);

  it('finds the first line, the last, and every line of a name', () => {
    expect(gazetteer.named('alpha').map((row) => row.place.name)).toEqual(['Alpha']);
    expect(gazetteer.named('zeta').map((row) => row.place.name)).toEqual(['Zeta']);
    expect(gazetteer.named('Springfield').map((row) => describePlace(row.place))).toEqual(['Springfield, Missouri, US', 'Springfield, Illinois, US']);
    expect(gazetteer.named('saint etienne')[0]!.place.name).toBe('Saint-Étienne');
    expect(gazetteer.named('beta')).toEqual([]);
    expect(gazetteer.named('zzz')).toEqual([]);
  });

  it('refuses a file that is not one', () => {
    expect(() => new Gazetteer('name\tlat\n')).toThrow(/not an aerial gazetteer/);
  });
});

describe('a name without a comma', () => {
  it('takes its last word for the country when the whole is no name', () => {
    expect(findPlace('Paris FR', '--at').place.country).toBe('FR');
    expect(findPlace('Springfield IL', '--at').place.region).toBe('Illinois');
    expect(refusal('New York').code).toBe('PlaceNotFound');
  });
});
