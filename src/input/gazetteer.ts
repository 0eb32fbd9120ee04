// Places by name, offline: `--at "Paris, FR"`, a batch file's `place` column
// and the interactive prompt take a city's name for its coordinates. The names
// come from the gazetteer the build writes beside the bundle
// (dist/gazetteer.tsv.gz, made by gazetteer-data.ts from GeoNames' places of
// 1,000 people or more), which is read the first time a name is looked up and
// never otherwise: a command given coordinates starts as it would without it.
//
// A name that several places share is refused with the candidates (exit 2),
// unless one of them is at least DOMINANT_RATIO times as populous as the next
// (Paris, London, Rome): a person who means Paris, Texas says so.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { findBuiltFile } from '../build-outputs/built-files.js';
import { UsageError } from '../lifecycle/errors.js';

export const GAZETTEER_FILE = 'gazetteer.tsv.gz';

/** The first line of the file starts with this, then says where its data came from. */
export const GAZETTEER_MAGIC = '# aerial gazetteer 1';

/** How much more populous than the next place of a name the largest must be to be taken without asking. */
export const DOMINANT_RATIO = 10;

/** Candidates an ambiguous name lists. */
const CANDIDATES_SHOWN = 5;

export interface Place {
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** The first-level division (a state, a region), when GeoNames names it. */
  region?: string;
  lat: number;
  lng: number;
  population: number;
}

export interface FoundPlace {
  place: Place;
  /** Other places of that name and qualifiers, smaller by DOMINANT_RATIO at least. */
  others: number;
}

/**
 * How names are compared: accents and case ignored, any run of punctuation or
 * spaces one space (`Saint-Étienne` = `saint etienne`). The build sorts the
 * file by it, so it must not change without the file's version.
 */
export function placeKey(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/æ/g, 'ae')
    .replace(/œ/g, 'oe')
    .replace(/[øǿ]/g, 'o')
    .replace(/[łƚ]/g, 'l')
    .replace(/[đð]/g, 'd')
    .replace(/ı/g, 'i')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * Whether `text` is meant as coordinates ("48.8584,2.2945", a geo: URI) rather
 * than a name: it has no letter but an exponent's e and the words a program
 * prints for numbers it could not compute (`NaN`, `Infinity`, spelled so).
 * Those are refused as coordinates, never looked up: "NaN,NaN" from a broken
 * script is not Nan, Thailand.
 */
export function looksLikeCoordinates(text: string): boolean {
  return /^\s*geo:/i.test(text) || !/\p{L}/u.test(text.replace(/\b(?:NaN|Infinity)\b/g, '').replace(/[eE]/g, ''));
}

/** "Paris, Île-de-France, FR". */
export function describePlace(place: Place): string {
  return [place.name, place.region, place.country].filter(Boolean).join(', ');
}

/** "Paris, Île-de-France, FR (48.85341, 2.3488)". */
export function describePlaceAt(place: Place): string {
  return `${describePlace(place)} (${place.lat}, ${place.lng})`;
}

/** What a command tells a person about the place a name was taken for. */
export function placeNote(query: string, found: FoundPlace): string {
  const others = found.others === 0 ? '' : `, the largest of ${found.others + 1} places of that name`;
  return `'${query.trim()}' is ${describePlaceAt(found.place)}${others}`;
}

/** Other names people give countries than the ones Intl knows. */
const COUNTRY_ALIASES: Record<string, string> = { usa: 'US', america: 'US', uk: 'GB', england: 'GB', scotland: 'GB', wales: 'GB' };

let countryNames: Intl.DisplayNames | undefined;
function countryName(code: string): string | undefined {
  try {
    countryNames ??= new Intl.DisplayNames(['en'], { type: 'region' });
    const name = countryNames.of(code);
    return name === code ? undefined : name;
  } catch {
    return undefined;
  }
}

interface Row {
  place: Place;
  /** The region's code (GeoNames' admin1 code), matched by qualifiers such as "IL". */
  regionCode: string;
}

/** The gazetteer file, held as text: lines sorted by name, found by binary search. */
export class Gazetteer {
  private readonly regions = new Map<string, string>();
  /** Where the place lines begin. */
  private readonly start: number;

  constructor(private readonly text: string) {
    if (!text.startsWith(GAZETTEER_MAGIC)) throw new Error('not an aerial gazetteer (run npm run build)');
    let at = text.indexOf('\n') + 1;
    // Region lines (R, country.code, name) come first.
    while (text.startsWith('R\t', at)) {
      const end = text.indexOf('\n', at);
      const [, code, name] = text.slice(at, end).split('\t');
      this.regions.set(code!, name!);
      at = end + 1;
    }
    this.start = at;
  }

  /** Every place whose name is `name` (in placeKey's terms), most populous first. */
  named(name: string): Row[] {
    const key = placeKey(name);
    const rows: Row[] = [];
    for (let at = this.lowerBound(key); at < this.text.length; at = this.lineEnd(at) + 1) {
      if (this.keyAt(at) !== key) break;
      rows.push(this.rowAt(at));
    }
    return rows.sort((a, b) => b.place.population - a.place.population);
  }

  /** The most populous places whose name starts with `start`, for a name not found. */
  startingWith(start: string, count: number): Place[] {
    const key = placeKey(start);
    if (key === '') return [];
    const rows: Place[] = [];
    for (let at = this.lowerBound(key); at < this.text.length && rows.length < 2000; at = this.lineEnd(at) + 1) {
      if (!this.keyAt(at).startsWith(key)) break;
      rows.push(this.rowAt(at).place);
    }
    return rows.sort((a, b) => b.population - a.population).slice(0, count);
  }

  private lineEnd(at: number): number {
    const end = this.text.indexOf('\n', at);
    return end < 0 ? this.text.length : end;
  }

  /** Lines are `key?\tname\tcountry\tregion code\tlat\tlng\tpopulation`; an empty key is the name in lower case. */
  private keyAt(at: number): string {
    const tab = this.text.indexOf('\t', at);
    if (tab > at) return this.text.slice(at, tab);
    return this.text.slice(tab + 1, this.text.indexOf('\t', tab + 1)).toLowerCase();
  }

  private rowAt(at: number): Row {
    const [, name, country, regionCode, lat, lng, population] = this.text.slice(at, this.lineEnd(at)).split('\t');
    const region = this.regions.get(`${country}.${regionCode}`);
    return { place: { name: name!, country: country!, region, lat: Number(lat), lng: Number(lng), population: Number(population) }, regionCode: regionCode! };
  }

  /** The start of the first line whose key is not below `key`. */
  private lowerBound(key: string): number {
    let lo = this.start;
    let hi = this.text.length;
    while (lo < hi) {
      const probe = (lo + hi) >>> 1;
      // The start of the line `probe` falls in: never before lo, which starts a line.
      const line = Math.max(lo, this.text.lastIndexOf('\n', probe - 1) + 1);
      if (this.keyAt(line) < key) lo = this.lineEnd(line) + 1;
      else hi = line;
    }
    return lo;
  }

  /**
   * The place `query` names: "Paris", "Paris, FR", "Springfield, Illinois",
   * "Springfield, IL, US" (the parts after the name match a country's code or
   * English name, or a region's name or code). A name with a comma of its own
   * is tried whole first. Throws a UsageError naming `label` when no place, or
   * several of comparable size, answer.
   */
  find(query: string, label: string): FoundPlace {
    const text = query.trim();
    let name = text;
    let qualifiers: string[] = [];
    let rows = this.named(text);
    if (rows.length === 0 && !text.includes(',') && /\s/.test(text)) {
      // "Paris FR": the last word as a country or region, when that finds the place.
      const words = text.split(/\s+/);
      const last = words.pop()!;
      const named = this.named(words.join(' ')).filter((row) => matchesQualifier(row, last));
      if (named.length > 0) [name, qualifiers, rows] = [words.join(' '), [last], named];
    }
    if (rows.length === 0 && text.includes(',')) {
      [name, ...qualifiers] = text.split(',').map((part) => part.trim());
      qualifiers = qualifiers.filter(Boolean);
      const named = this.named(name);
      rows = named.filter((row) => qualifiers.every((qualifier) => matchesQualifier(row, qualifier)));
      if (rows.length === 0 && named.length > 0) {
        throw new UsageError(
          `${label} '${text}': no place named '${name}' in ${qualifiers.map((q) => `'${q}'`).join(', ')}; there ${named.length === 1 ? 'is' : 'are'} ${listed(named.map((row) => row.place), named.length)}`,
          'PlaceNotFound',
        );
      }
    }
    if (rows.length === 0) {
      const similar = this.startingWith(name, 3);
      const hint = similar.length > 0 ? ` (did you mean ${similar.map(describePlace).join(' or ')}?)` : '';
      throw new UsageError(
        `${label} '${text}': no such place among GeoNames' places of 1,000 people or more${hint}; give its coordinates instead ("LAT,LNG")`,
        'PlaceNotFound',
      );
    }
    const [first, second] = rows;
    if (second && first!.place.population < DOMINANT_RATIO * Math.max(1, second.place.population)) {
      throw new UsageError(
        `${label} '${text}' names ${rows.length} places: ${listed(rows.map((row) => row.place), rows.length)}; add the region or country ("${describePlace(first!.place)}"), or give coordinates`,
        'AmbiguousPlace',
      );
    }
    return { place: first!.place, others: rows.length - 1 };
  }
}

function matchesQualifier(row: Row, qualifier: string): boolean {
  const key = placeKey(qualifier);
  const { country, region } = row.place;
  if (key === country.toLowerCase() || COUNTRY_ALIASES[key] === country) return true;
  const name = countryName(country);
  if (name !== undefined && placeKey(name) === key) return true;
  return key === row.regionCode.toLowerCase() || (region !== undefined && placeKey(region) === key);
}

/** "Springfield, Missouri, US (37.21533, -93.29824); …; and 16 more". */
function listed(places: Place[], total: number): string {
  const shown = places.slice(0, CANDIDATES_SHOWN).map(describePlaceAt);
  return `${shown.join('; ')}${total > shown.length ? `; and ${total - shown.length} more` : ''}`;
}

let loaded: Gazetteer | undefined;

/** The gazetteer the build wrote, read on first use. */
export function gazetteer(): Gazetteer {
  if (loaded) return loaded;
  const file = findBuiltFile(GAZETTEER_FILE);
  if (!file) throw new Error(`the gazetteer (${GAZETTEER_FILE}) is missing; run npm run build`);
  // node:zlib is required here, not imported: commands that build a request from coordinates never load it.
  const { gunzipSync } = createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib');
  loaded = new Gazetteer(gunzipSync(readFileSync(file)).toString('utf8'));
  return loaded;
}

/** The place `query` names, from the gazetteer (see Gazetteer.find). */
export function findPlace(query: string, label: string): FoundPlace {
  return gazetteer().find(query, label);
}
