// The per-pixel sampler's state: one Scene object of fixed shape that the
// samplers (ground.ts and the files it calls) read and write, rather than pass
// numbers to one another (see the class for why), the smooth fields' indexes in
// it, and how built-up the ground is at a point (townAt).
import type { FrameGeography } from '../world/frame-geography.js';
import { FIELDS_ANCIENT, FIELDS_HISTORICAL, FIELDS_MODERN, ROOFS_HISTORICAL, ROOFS_MODERN, SALT_TOWN, type Layout } from './layout.js';
import type { Look } from './look.js';
import { valueNoise } from './noise.js';
import type { Rgb } from './overlays.js';
import type { RowProjection } from './projection.js';

// Indexes of the smooth fields (smooth-fields.ts) in Scene.field: slowly varying values that decide what is where.
export const FIELD_TERRAIN = 0; // picks the land cover among the climate's shares
export const FIELD_RIVER = 1; // metres from the nearest great river's centre line, meandering
export const FIELD_TOWN = 2; // how built-up (see townAt)
export const FIELD_MOTTLE = 3; // gentle light/dark variation of natural ground
export const FIELD_PATH = 4; // ancient footpaths follow level lines
export const FIELD_WARP_X = 5; // historical streets wander by this many metres
export const FIELD_WARP_Y = 6;
export const FIELD_WATER = 7; // share of open water around, with a wandering shore: above 0.5 is sea or lake
export const FIELD_COUNT = 8;

/** Slots of the table in which townReaches (streets.ts) remembers its answers. */
export const MEMO_SIZE = 256;

/**
 * Everything the sampler needs, flattened onto one object of fixed shape so
 * property access stays fast; it also caches the current block and lot, since
 * consecutive pixels of a row usually fall in the same one.
 */
export class Scene {
  // Result of the last sample: colour before light, glow (lamps, windows), snow-holding capacity.
  r = 0.5;
  g = 0.5;
  b = 0.5;
  glow = 0.5;
  snow = 0.5;
  /** Light falling on the sample, applied after snow: facing the sun or away, cast shadows. */
  shade = 0.5;

  readonly seed: number;
  readonly modern: boolean;
  readonly ancient: boolean;
  readonly block: number;
  /** 1 / block: a multiplication per pixel instead of a division. */
  readonly perBlock: number;
  readonly road: number;
  readonly majorRoad: number;
  readonly sidewalk: number;
  readonly fieldWidth: number;
  readonly fieldHeight: number;
  readonly streetWarp: number;
  /** Where grid positions fall on screen, and the frame's geography there (for townAt). */
  readonly projection: RowProjection;
  readonly geography: FrameGeography;
  readonly stride: number;

  // The climate of the current row (see ../world/climate.ts), as shares.
  ice = 0.5;
  sand = 0.5;
  rock = 0.5;
  tundra = 0.5;
  forest = 0.5;
  dry = 0.5;
  /** COVER of the last sample. */
  cover = 0;
  readonly roofs: readonly number[];
  readonly fields: readonly number[];
  readonly grass: Rgb;

  // Light direction in grid coordinates: the way shadows fall, and their length per metre of height.
  readonly shadowX: number;
  readonly shadowY: number;
  readonly shadowLength: number;
  readonly shadowDepth: number;
  readonly lamps: boolean;

  /** Smooth fields at the current pixel, indexed by the FIELD_* constants (see SmoothFields). */
  readonly field = new Float64Array(FIELD_COUNT);

  // The samplers below hand positions to one another through these fields rather
  // than as arguments: a double passed to a function V8 does not inline is boxed
  // on the heap, and at millions of pixels that garbage cost more than drawing.

  /** The current sample's grid position and the ground size of its pixel. */
  gx = 0.5;
  gy = 0.5;
  mpp = 0.5;

  // Position in the street grid.
  blockX = 0;
  blockY = 0;
  inBlockX = 0.5;
  inBlockY = 0.5;
  roadV = 0.5;
  roadH = 0.5;

  /** Position inside a lot, park or parking lot (metres from its corner). */
  px = 0.5;
  py = 0.5;

  // A road cross-section: metres from one kerb, road width, metres along the road,
  // metres into the segment between crossings (negative: on the crossing), segment length.
  across = 0.5;
  roadWidth = 0.5;
  along = 0.5;
  fromCrossing = 0.5;
  segment = 0.5;

  // Cached description of the current block.
  cachedBlockX = NaN;
  cachedBlockY = NaN;
  blockTown = 0.5;
  blockUse = 0;
  lotsX = 1;
  lotsY = 1;
  setback = 0.5;
  occupancy = 0.5;
  /** Block interior inside the sidewalks, and the size of one lot in it. */
  innerWidth = 0.5;
  innerHeight = 0.5;
  lotWidth = 0.5;
  lotHeight = 0.5;

  // Cached description of the current lot.
  cachedLot = -1;
  built = false;
  houseX0 = 0.5;
  houseY0 = 0.5;
  houseX1 = 0.5;
  houseY1 = 0.5;
  houseHeight = 0.5;
  roofType = 0;
  roofR = 0.5;
  roofG = 0.5;
  roofB = 0.5;
  lit = false;
  lotHash = 0;
  pool = false;

  // Cached field row (its brick-bond shift) and field (its hash).
  fieldRow = NaN;
  fieldShift = 0.5;
  fieldCol = NaN;
  fieldHash = 0;

  /** townReaches' table: i, j, kind, answer (1 or 0) per slot. */
  readonly townMemo = new Float64Array(MEMO_SIZE * 4).fill(NaN);

  /** The last tree crown hit: its brightness at the sample and its tint variation, 0–1. */
  crown = 0.5;
  treeVariant = 0.5;

  constructor(layout: Layout, look: Look, projection: RowProjection, geography: FrameGeography, stride: number) {
    this.projection = projection;
    this.geography = geography;
    this.stride = stride;
    this.seed = layout.seed;
    this.modern = layout.epoch === 'Nowadays';
    this.ancient = layout.epoch === 'Ancient';
    this.block = layout.block;
    this.perBlock = 1 / layout.block;
    this.road = layout.road;
    this.majorRoad = layout.majorRoad;
    this.sidewalk = layout.sidewalk;
    this.fieldWidth = layout.fieldWidth;
    this.fieldHeight = layout.fieldHeight;
    this.streetWarp = layout.streetWarp;
    this.roofs = this.modern ? ROOFS_MODERN : ROOFS_HISTORICAL;
    this.fields = this.modern ? FIELDS_MODERN : this.ancient ? FIELDS_ANCIENT : FIELDS_HISTORICAL;
    this.grass = this.modern ? [0.4, 0.5, 0.29] : this.ancient ? [0.5, 0.5, 0.3] : [0.43, 0.52, 0.28];

    // Azimuth relative to the grid: a direction with azimuth a has grid components (sin(a-φ), cos(a-φ)).
    const away = look.sunAzimuth + Math.PI - layout.gridAngle;
    this.shadowX = Math.sin(away);
    this.shadowY = Math.cos(away);
    this.shadowLength = look.shadowLength;
    this.shadowDepth = look.shadowDepth;
    this.lamps = look.glow > 0;
  }
}

export function setColour(scene: Scene, r: number, g: number, b: number, snow: number): void {
  scene.r = r;
  scene.g = g;
  scene.b = b;
  scene.snow = snow;
}

export function blendColour(scene: Scene, r: number, g: number, b: number, amount: number): void {
  scene.r += (r - scene.r) * amount;
  scene.g += (g - scene.g) * amount;
  scene.b += (b - scene.b) * amount;
}

/**
 * How built-up the ground is at a grid position: the frame's urban field
 * there (from the places around and their populations), roughened by noise
 * so a town's edge is not round. Positions off screen take the nearest knot's.
 */
export function townAt(scene: Scene, gx: number, gy: number): number {
  scene.projection.screenOf(gx, gy);
  const urban = scene.geography.urbanAtScreen(scene.projection.screenX, scene.projection.screenY, scene.stride);
  return roughTown(urban, gx, gy, scene.seed);
}

/** A town's edge, roughened: the urban field plus noise a few hundred metres across. */
export function roughTown(urban: number, gx: number, gy: number, seed: number): number {
  return urban + (valueNoise(gx / 420, gy / 420, seed ^ SALT_TOWN) - 0.5) * 0.34;
}
