// Layout: where the frame is on the Earth, and how the place is built there:
// the street grid's angle and block size, field sizes, the palettes of roofs,
// fields and cars, and the salts that keep hashed features apart. Everything
// is hashed from WORLD_SEED and a position on the Earth, so the same ground
// looks the same in every frame.
import type { Epoch } from '../../api/enums.js';
import type { GenerationRequest } from '../../api/schema.js';
import { forEachPlaceNear, type Atlas } from '../world/atlas.js';
import { METRES_PER_DEGREE, wrapLongitude } from '../world/grid.js';
import { createRandom, mix32 } from './noise.js';

/**
 * Every street, lot, field and tree is hashed from this seed and its
 * position on the Earth, so the same ground looks the same in every frame.
 */
export const WORLD_SEED = 0x5a4d_b0c5;

export interface Layout {
  epoch: Epoch;
  seed: number;
  /** The request's point. */
  lat: number;
  lng: number;
  /** Street grid orientation, radians clockwise from north; all sampling happens in grid coordinates. */
  gridAngle: number;
  /** The request's point in grid coordinates: metres, anchored to the Earth (see planLayout). */
  cameraX: number;
  cameraY: number;
  block: number;
  road: number;
  majorRoad: number;
  sidewalk: number;
  fieldWidth: number;
  fieldHeight: number;
  /** Historical streets wander: amplitude in metres of the warp applied to the grid. */
  streetWarp: number;
  /** How far built-up areas reach, as a share of today's. */
  townScale: number;
}

/**
 * The street grid of a place takes its orientation and block size from the
 * largest place near the point (or, far from any, from its 1° cell), so a
 * city keeps one grid at every zoom. Grid coordinates are metres east and
 * north on the Earth, rotated by the grid's angle: longitude scaled by the
 * cosine of the latitude rounded to half a degree (so nearby frames share one
 * scale), latitude by metres per degree.
 */
export function planLayout(request: GenerationRequest, world: Atlas): Layout {
  const { lat } = request.coordinates;
  // Longitude has no bounds in the API: 400° E is 40° E.
  const lng = wrapLongitude(request.coordinates.lng);
  const epoch = request.epoch;
  const anchor = largestPlaceNear(world, lat, lng);
  const random = createRandom(anchor);
  const angles = [0, 0, 8, -12, 17, -24, 30, -5];
  const modern = epoch === 'Nowadays';
  const historical = epoch === 'Historical';
  const gridAngle = (angles[Math.floor(random() * angles.length)]! * Math.PI) / 180;
  const band = Math.round(lat * 2) / 2;
  const east = lng * METRES_PER_DEGREE * Math.cos((band * Math.PI) / 180);
  const north = lat * METRES_PER_DEGREE;
  return {
    epoch,
    seed: WORLD_SEED,
    lat,
    lng,
    gridAngle,
    cameraX: east * Math.cos(gridAngle) - north * Math.sin(gridAngle),
    cameraY: east * Math.sin(gridAngle) + north * Math.cos(gridAngle),
    block: modern ? 95 + 35 * random() : 58 + 22 * random(),
    road: modern ? 12 : 6,
    majorRoad: modern ? 20 : 9,
    sidewalk: modern ? 3 : 0,
    fieldWidth: modern ? 150 + 60 * random() : historical ? 70 + 30 * random() : 45 + 20 * random(),
    fieldHeight: modern ? 100 + 40 * random() : historical ? 35 + 20 * random() : 30 + 15 * random(),
    streetWarp: historical ? 9 : 0,
    townScale: modern ? 1 : historical ? 0.45 : 0.25,
  };
}

/** A hash of the most populous place within half a degree, or of the 1° cell when there is none. */
function largestPlaceNear(world: Atlas, lat: number, lng: number): number {
  const { places } = world;
  let best = -1;
  let population = 0;
  forEachPlaceNear(places, lng - 0.5, lat - 0.5, lng + 0.5, lat + 0.5, (place) => {
    const near = Math.abs(places.positions[place * 2]! - lng) <= 0.5 && Math.abs(places.positions[place * 2 + 1]! - lat) <= 0.5;
    if (!near || places.population[place]! <= population) return;
    best = place;
    population = places.population[place]!;
  });
  return mix32(WORLD_SEED ^ (best >= 0 ? Math.imul(best + 1, 0x9e3779b1) : Math.floor(lat + 90) * 360 + Math.floor(lng + 180)));
}

/** Palettes as flat r,g,b triples so a hash picks an entry with one modulo. */
export const ROOFS_MODERN = [
  0.56, 0.55, 0.53, 0.42, 0.43, 0.46, 0.66, 0.38, 0.29, 0.74, 0.72, 0.68, 0.36, 0.39, 0.44, 0.52, 0.33, 0.27, 0.8, 0.79,
  0.76, 0.47, 0.48, 0.43,
];
/** Flat roofs of bigger buildings: concrete, gravel, membranes, the odd planted roof. */
export const ROOFS_FLAT = [
  0.6, 0.6, 0.58, 0.5, 0.5, 0.49, 0.7, 0.69, 0.66, 0.42, 0.42, 0.43, 0.56, 0.54, 0.5, 0.78, 0.78, 0.76, 0.35, 0.36, 0.37,
  0.46, 0.52, 0.4,
];
export const ROOFS_HISTORICAL = [
  0.66, 0.37, 0.25, 0.58, 0.33, 0.24, 0.48, 0.3, 0.24, 0.4, 0.38, 0.37, 0.7, 0.45, 0.3, 0.56, 0.46, 0.37,
];
export const FIELDS_MODERN = [
  0.45, 0.58, 0.26, 0.76, 0.68, 0.4, 0.54, 0.43, 0.3, 0.36, 0.52, 0.25, 0.66, 0.63, 0.35, 0.3, 0.46, 0.22, 0.6, 0.56,
  0.31,
];
export const FIELDS_HISTORICAL = [0.5, 0.56, 0.3, 0.72, 0.63, 0.4, 0.56, 0.45, 0.32, 0.42, 0.52, 0.28, 0.63, 0.57, 0.37];
export const FIELDS_ANCIENT = [0.6, 0.5, 0.34, 0.66, 0.58, 0.37, 0.48, 0.49, 0.3, 0.54, 0.43, 0.3, 0.46, 0.46, 0.31];
export const CAR_COLOURS = [
  0.86, 0.86, 0.87, 0.1, 0.1, 0.11, 0.64, 0.1, 0.1, 0.2, 0.3, 0.56, 0.56, 0.57, 0.59, 0.82, 0.77, 0.6, 0.28, 0.29, 0.31,
];

/** Town intensity below which a block is countryside. */
export const TOWN_EDGE = 0.25;

// Salts that keep the different hashed features independent of one another.
export const SALT_TERRAIN = 0x1111;
export const SALT_RIVER = 0x2222;
export const SALT_TOWN = 0x3333;
export const SALT_MOTTLE = 0x4444;
export const SALT_PATH = 0x5555;
export const SALT_WARP = 0x6666;
export const SALT_BLOCK = 0x7777;
export const SALT_LOT = 0x8888;
export const SALT_TREE = 0x9999;
export const SALT_FIELD = 0xaaaa;
export const SALT_CAR = 0xbbbb;
export const SALT_HUT = 0xcccc;
export const SALT_ROOF = 0xdddd;
export const SALT_SHORE = 0xeeee;
export const SALT_STRATA = 0x1234;
