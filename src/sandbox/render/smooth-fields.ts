// Smooth fields: slowly varying values that decide what is where (terrain,
// rivers, town extent, water, wandering streets), evaluated on a sparse grid of
// knots and interpolated, since they vary slowly on screen.
import { RIVER_HALF_WIDTH } from '../world/frame-geography.js';
import type { FrameSize } from './frame.js';
import { SALT_MOTTLE, SALT_PATH, SALT_RIVER, SALT_SHORE, SALT_TERRAIN, SALT_WARP, type Layout } from './layout.js';
import type { Look } from './look.js';
import { fractalNoise, valueNoise } from './noise.js';
import { RowProjection } from './projection.js';
import { FIELD_COUNT, FIELD_MOTTLE, FIELD_PATH, FIELD_RIVER, FIELD_TERRAIN, FIELD_TOWN, FIELD_WARP_X, FIELD_WARP_Y, FIELD_WATER, roughTown, type Scene } from './scene.js';

/** How far (share of the shore filter's span) and how fine the shore wanders about the mapped coastline. */
const SHORE_WANDER = 0.75;

/**
 * Evaluates every smooth field at grid point (gx, gy), knot (k, K) of the
 * frame, into `out` at `offset`.
 */
function evaluateFields(scene: Scene, gx: number, gy: number, k: number, K: number, out: Float32Array, offset: number): void {
  const seed = scene.seed;
  const geography = scene.geography;
  const knot = geography.knot(k, K);
  out[offset + FIELD_TERRAIN] = fractalNoise(gx / 650, gy / 650, seed ^ SALT_TERRAIN);
  const river = geography.river[knot]!;
  // Rivers meander about their mapped line; far from any, the distance needs no wiggle.
  out[offset + FIELD_RIVER] = river < RIVER_HALF_WIDTH * 20 ? river + (fractalNoise(gx / 900, gy / 900, seed ^ SALT_RIVER) - 0.5) * RIVER_HALF_WIDTH : river;
  out[offset + FIELD_TOWN] = roughTown(geography.urban[knot]!, gx, gy, seed);
  out[offset + FIELD_MOTTLE] =
    valueNoise(gx / 22, gy / 22, seed ^ SALT_MOTTLE) * 0.55 + valueNoise(gx / 110, gy / 110, seed ^ SALT_MOTTLE) * 0.45;
  out[offset + FIELD_PATH] = scene.ancient ? fractalNoise(gx / 420, gy / 420, seed ^ SALT_PATH) : 0;
  const warp = scene.streetWarp;
  out[offset + FIELD_WARP_X] = warp > 0 ? (valueNoise(gx / 230, gy / 230, seed ^ SALT_WARP) - 0.5) * 2 * warp : 0;
  out[offset + FIELD_WARP_Y] = warp > 0 ? (valueNoise(gx / 230 + 50, gy / 230, seed ^ SALT_WARP) - 0.5) * 2 * warp : 0;
  const water = geography.water[knot]!;
  out[offset + FIELD_WATER] = water > 0 && water < 1 ? water + (fractalNoise(gx / 70, gy / 70, seed ^ SALT_SHORE) - 0.5) * SHORE_WANDER : water;
}

/**
 * The smooth fields are exact only on a sparse grid of knots (every `stride`
 * pixels both ways) and linear in between: they vary over tens of pixels or
 * more, and evaluating noise at every pixel of a UHD frame would cost more than
 * all the rest of the drawing.
 */
export class SmoothFields {
  readonly stride: number;
  readonly knots: number;
  /** Knot values of the current pixel row, blended from the knot rows above and below it. */
  readonly row: Float32Array;
  private above: Float32Array;
  private below: Float32Array;
  private aboveY = NaN;
  private readonly knotProjection: RowProjection;
  private scene: Scene | undefined;

  constructor(frame: FrameSize, look: Look, layout: Layout) {
    this.stride = knotStride(frame);
    this.knots = Math.ceil(frame.width / this.stride) + 2;
    this.row = new Float32Array(this.knots * FIELD_COUNT);
    this.above = new Float32Array(this.knots * FIELD_COUNT);
    this.below = new Float32Array(this.knots * FIELD_COUNT);
    this.knotProjection = new RowProjection(frame, look, layout);
  }

  attach(scene: Scene): void {
    this.scene = scene;
  }

  /** Prepares `row` for pixel row y. */
  prepareRow(y: number): void {
    const stride = this.stride;
    const top = Math.floor(y / stride) * stride;
    if (top !== this.aboveY) {
      if (top === this.aboveY + stride) {
        const swap = this.above;
        this.above = this.below;
        this.below = swap;
      } else {
        this.evaluateKnotRow(top, this.above);
      }
      this.evaluateKnotRow(top + stride, this.below);
      this.aboveY = top;
    }
    const t = (y - top) / stride;
    const { row, above, below } = this;
    for (let i = 0; i < row.length; i++) row[i] = above[i]! + (below[i]! - above[i]!) * t;
  }

  private evaluateKnotRow(y: number, out: Float32Array): void {
    const p = this.knotProjection;
    p.at(y);
    const K = y / this.stride;
    for (let k = 0; k < this.knots; k++) {
      const x = k * this.stride;
      evaluateFields(this.scene!, p.originX + x * p.stepX, p.originY + x * p.stepY, k, K, out, k * FIELD_COUNT);
    }
  }
}

/** Pixels between knots: about 135 knot rows on the short side, never closer than 6 pixels. */
function knotStride(frame: FrameSize): number {
  return Math.max(6, Math.round(Math.min(frame.width, frame.height) / 135));
}

/** Starts a knot interval: field values at knot `a` and their change per pixel towards the next knot (unrolled, as advanceFields). */
export function loadKnot(here: Float64Array, slope: Float64Array, knots: Float32Array, a: number, perStride: number): void {
  const b = a + FIELD_COUNT;
  here[0] = knots[a]!;
  here[1] = knots[a + 1]!;
  here[2] = knots[a + 2]!;
  here[3] = knots[a + 3]!;
  here[4] = knots[a + 4]!;
  here[5] = knots[a + 5]!;
  here[6] = knots[a + 6]!;
  here[7] = knots[a + 7]!;
  slope[0] = (knots[b]! - here[0]!) * perStride;
  slope[1] = (knots[b + 1]! - here[1]!) * perStride;
  slope[2] = (knots[b + 2]! - here[2]!) * perStride;
  slope[3] = (knots[b + 3]! - here[3]!) * perStride;
  slope[4] = (knots[b + 4]! - here[4]!) * perStride;
  slope[5] = (knots[b + 5]! - here[5]!) * perStride;
  slope[6] = (knots[b + 6]! - here[6]!) * perStride;
  slope[7] = (knots[b + 7]! - here[7]!) * perStride;
}

/** One pixel to the right inside a knot interval; unrolled because it runs for every pixel. */
export function advanceFields(here: Float64Array, slope: Float64Array): void {
  here[0] += slope[0]!;
  here[1] += slope[1]!;
  here[2] += slope[2]!;
  here[3] += slope[3]!;
  here[4] += slope[4]!;
  here[5] += slope[5]!;
  here[6] += slope[6]!;
  here[7] += slope[7]!;
}
