// The world as a render thread sees it: the data file the build made
// (compile.ts), read once per thread into typed-array views, and the few
// lookups the renderer needs. Coastlines, shores, rivers and places are
// found through 1° cells; whether a point is on land is decided by its
// cell's centre (known from the build) and the crossings of that cell's
// edges on the way from the centre to the point.
import { readFileSync } from 'node:fs';
import { findBuiltFile } from '../../build-outputs/built-files.js';
import { CLIMATE_CHANNELS, type Climate } from './climate.js';
import { unpackWorld, type WorldFile } from './data-file.js';
import {
  CLIMATE_CELL_DEGREES,
  CLIMATE_COLUMNS,
  CLIMATE_ROWS,
  INDEX_CELL_DEGREES,
  INDEX_COLUMNS,
  INDEX_ROWS,
  indexCellCentre,
  wrapLongitude,
} from './grid.js';

/** The file's name, beside the bundle (dist/) where scripts/build.mjs writes it. */
export const WORLD_FILE_NAME = 'sandbox-world.bin';

/** Lines (rivers) or closed rings (coasts, shores), indexed by cell. */
export interface EdgeLayer {
  /** lng, lat of every vertex; the lines (or closed rings) follow one another. */
  vertices: Float32Array;
  /** Per index cell, where its edges start in cellEdges (one more entry than cells). */
  cellStarts: Uint32Array;
  /** Edge i runs from vertex i to vertex i + 1. */
  cellEdges: Uint32Array;
}

export interface PolygonLayer extends EdgeLayer {
  /** Per index cell: 1 when its centre is inside the polygons. */
  cellInside: Uint8Array;
}

export interface Places {
  /** lng, lat per place, places sorted by index cell. */
  positions: Float32Array;
  population: Uint32Array;
  /** Two ASCII letters per place (ISO 3166-1 alpha-2). */
  country: Uint8Array;
  /** UTF-8 names, one after another, and where each starts (one more entry than places). */
  names: Uint8Array;
  nameStarts: Uint32Array;
  /** Per index cell, its first place (one more entry than cells). */
  cellStarts: Uint32Array;
}

export interface Atlas {
  land: PolygonLayer;
  lakes: PolygonLayer;
  rivers: EdgeLayer;
  places: Places;
  /** CLIMATE_CHANNELS.length planes of CLIMATE_COLUMNS × CLIMATE_ROWS bytes. */
  climate: Uint8Array;
  font: Uint8Array;
  meta: unknown;
}

let loaded: Atlas | undefined;

/** The atlas of this thread, read from disk on first use. */
export function atlas(): Atlas {
  if (loaded) return loaded;
  const file = findBuiltFile(WORLD_FILE_NAME);
  if (!file) throw new Error(`the sandbox's world data (${WORLD_FILE_NAME}) is missing; run npm run build`);
  loaded = openAtlas(readFileSync(file));
  return loaded;
}

/** An atlas over the bytes of a world data file (copied if they are not 8-byte aligned). */
export function openAtlas(bytes: Uint8Array): Atlas {
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
  const file = unpackWorld(aligned);
  const polygons = (name: string): PolygonLayer => ({ ...edges(file, name), cellInside: file.section(`${name}.cellInside`, Uint8Array) });
  return {
    land: polygons('land'),
    lakes: polygons('lakes'),
    rivers: edges(file, 'rivers'),
    places: {
      positions: file.section('places.positions', Float32Array),
      population: file.section('places.population', Uint32Array),
      country: file.section('places.country', Uint8Array),
      names: file.section('places.names', Uint8Array),
      nameStarts: file.section('places.nameStarts', Uint32Array),
      cellStarts: file.section('places.cellStarts', Uint32Array),
    },
    climate: file.section('climate', Uint8Array),
    font: file.section('font', Uint8Array),
    meta: file.meta,
  };
}

function edges(file: WorldFile, name: string): EdgeLayer {
  return {
    vertices: file.section(`${name}.vertices`, Float32Array),
    cellStarts: file.section(`${name}.cellStarts`, Uint32Array),
    cellEdges: file.section(`${name}.cellEdges`, Uint32Array),
  };
}

/**
 * Whether (lng, lat) is inside the layer's polygons: the cell centre's answer,
 * flipped by every cell edge that the segment from the centre to the point
 * crosses. An edge end exactly on the segment's line counts as left of it,
 * so a path through a vertex is counted once.
 */
export function insideAt(layer: PolygonLayer, lng: number, lat: number): boolean {
  const x = wrapLongitude(lng);
  const column = Math.min(INDEX_COLUMNS - 1, Math.floor((x + 180) / INDEX_CELL_DEGREES));
  const row = Math.min(INDEX_ROWS - 1, Math.max(0, Math.floor((lat + 90) / INDEX_CELL_DEGREES)));
  const cell = row * INDEX_COLUMNS + column;
  const [cx, cy] = indexCellCentre(column, row);
  let inside = layer.cellInside[cell] === 1;
  const { vertices, cellStarts, cellEdges } = layer;
  const dx = x - cx;
  const dy = lat - cy;
  for (let k = cellStarts[cell]!; k < cellStarts[cell + 1]!; k++) {
    const e = cellEdges[k]! * 2;
    const ax = vertices[e]!;
    const ay = vertices[e + 1]!;
    const bx = vertices[e + 2]!;
    const by = vertices[e + 3]!;
    const sideA = dx * (ay - cy) - dy * (ax - cx) >= 0;
    const sideB = dx * (by - cy) - dy * (bx - cx) >= 0;
    if (sideA === sideB) continue;
    const ex = bx - ax;
    const ey = by - ay;
    const sideC = ex * (cy - ay) - ey * (cx - ax) >= 0;
    const sideP = ex * (lat - ay) - ey * (x - ax) >= 0;
    if (sideC !== sideP) inside = !inside;
  }
  return inside;
}

/** Calls `each` once for every edge of the layer whose cell meets the box (lng may run past ±180). */
export function forEachEdgeNear(
  layer: EdgeLayer,
  west: number,
  south: number,
  east: number,
  north: number,
  seen: EdgeStamps,
  each: (edge: number) => void,
): void {
  seen.next();
  forEachCell(west, south, east, north, (cell) => {
    for (let k = layer.cellStarts[cell]!; k < layer.cellStarts[cell + 1]!; k++) {
      const edge = layer.cellEdges[k]!;
      if (seen.mark(edge)) each(edge);
    }
  });
}

/** Every index cell the box meets, each once (the box may run past ±180 in longitude). */
function forEachCell(west: number, south: number, east: number, north: number, each: (cell: number) => void): void {
  const firstColumn = Math.floor((wrapLongitude(west) + 180) / INDEX_CELL_DEGREES);
  // Counted from the first column, so a box of any width visits each column once at most.
  const columns = Math.min(INDEX_COLUMNS, Math.floor((east - west) / INDEX_CELL_DEGREES) + 2);
  const firstRow = Math.max(0, Math.floor((south + 90) / INDEX_CELL_DEGREES));
  const lastRow = Math.min(INDEX_ROWS - 1, Math.floor((north + 90) / INDEX_CELL_DEGREES));
  for (let row = firstRow; row <= lastRow; row++) {
    for (let i = 0; i < columns; i++) each(row * INDEX_COLUMNS + ((firstColumn + i) % INDEX_COLUMNS));
  }
}

/** Marks edges seen in the current query, without clearing anything between queries. */
export class EdgeStamps {
  private stamps = new Uint32Array(0);
  private current = 0;

  next(): void {
    this.current++;
    if (this.current === 0xffffffff) {
      this.stamps.fill(0);
      this.current = 1;
    }
  }

  /** True the first time `edge` is marked in this query. */
  mark(edge: number): boolean {
    if (edge >= this.stamps.length) {
      const grown = new Uint32Array(Math.max(edge + 1, this.stamps.length * 2, 1024));
      grown.set(this.stamps);
      this.stamps = grown;
    }
    if (this.stamps[edge] === this.current) return false;
    this.stamps[edge] = this.current;
    return true;
  }
}

/** Calls `each` with every place in the cells the box meets. */
export function forEachPlaceNear(places: Places, west: number, south: number, east: number, north: number, each: (place: number) => void): void {
  forEachCell(west, south, east, north, (cell) => {
    for (let place = places.cellStarts[cell]!; place < places.cellStarts[cell + 1]!; place++) each(place);
  });
}

export function placeName(places: Places, place: number): string {
  return new TextDecoder().decode(places.names.subarray(places.nameStarts[place]!, places.nameStarts[place + 1]!));
}

export function placeCountry(places: Places, place: number): string {
  return String.fromCharCode(places.country[place * 2]!, places.country[place * 2 + 1]!);
}

/** The climate at (lng, lat), bilinear between 0.5° cell centres, as CLIMATE_CHANNELS shares into `out` from `offset`. */
export function climateInto(world: Atlas, lng: number, lat: number, out: Float32Array, offset: number): void {
  const gx = (wrapLongitude(lng) + 180) / CLIMATE_CELL_DEGREES - 0.5;
  const gy = Math.min(CLIMATE_ROWS - 1, Math.max(0, (lat + 90) / CLIMATE_CELL_DEGREES - 0.5));
  const x0 = Math.floor(gx);
  const y0 = Math.min(CLIMATE_ROWS - 2, Math.floor(gy));
  const fx = gx - x0;
  const fy = gy - y0;
  const c0 = (x0 + CLIMATE_COLUMNS) % CLIMATE_COLUMNS;
  const c1 = (x0 + 1) % CLIMATE_COLUMNS;
  const cells = CLIMATE_COLUMNS * CLIMATE_ROWS;
  for (let c = 0; c < CLIMATE_CHANNELS.length; c++) {
    const plane = c * cells;
    const a = world.climate[plane + y0 * CLIMATE_COLUMNS + c0]!;
    const b = world.climate[plane + y0 * CLIMATE_COLUMNS + c1]!;
    const d = world.climate[plane + (y0 + 1) * CLIMATE_COLUMNS + c0]!;
    const e = world.climate[plane + (y0 + 1) * CLIMATE_COLUMNS + c1]!;
    out[offset + c] = ((a + (b - a) * fx) * (1 - fy) + (d + (e - d) * fx) * fy) / 255;
  }
}

/** The climate at (lng, lat) as named shares. */
export function climateAt(world: Atlas, lng: number, lat: number): Climate {
  const shares = new Float32Array(CLIMATE_CHANNELS.length);
  climateInto(world, lng, lat, shares, 0);
  return Object.fromEntries(CLIMATE_CHANNELS.map((channel, c) => [channel, shares[c]!])) as Climate;
}
