// The raster: every row of the frame, sky (sky.ts) or ground, each ground pixel
// sampled where it lands (projection.ts, ground.ts) and then lit, graded and
// hazed in one loop; and the grain and vignette that sky and ground share.
import type { Atlas } from '../world/atlas.js';
import { FrameGeography } from '../world/frame-geography.js';
import { COVER, type FrameSize, type RenderedFrame } from './frame.js';
import { sampleGround } from './ground.js';
import { TOWN_EDGE, WORLD_SEED, type Layout } from './layout.js';
import type { Look } from './look.js';
import { clamp01, mix32 } from './noise.js';
import { RowProjection } from './projection.js';
import { FIELD_COUNT, FIELD_TOWN, Scene } from './scene.js';
import { SkyPainter } from './sky.js';
import { advanceFields, loadKnot, SmoothFields } from './smooth-fields.js';

/** The frame's geography on its knots (see ../world/frame-geography.ts). */
function frameGeography(world: Atlas, frame: FrameSize, look: Look, layout: Layout, projection: RowProjection, stride: number): FrameGeography {
  return new FrameGeography(world, {
    width: frame.width,
    height: frame.height,
    stride,
    columns: Math.ceil(frame.width / stride) + 2,
    rows: Math.ceil(frame.height / stride) + 2,
    lat: layout.lat,
    lng: layout.lng,
    line: (y) => projection.ground(y),
    farthest: look.perspective ? 40 * look.metresAcross : Infinity,
    metresPerPixel: look.metresAcross / Math.min(frame.width, frame.height),
    townScale: layout.townScale,
  });
}

/**
 * Paints sky rows and ground rows. The ground loop samples the world, then
 * applies snow, light, the colour matrix, lamp glow, haze, vignette and grain
 * inline: it runs for every pixel, and calls out of it would box the doubles.
 * Returns the frame's geography, for the label of its place.
 */
export function paintScene(frame: RenderedFrame, look: Look, layout: Layout, world: Atlas, grainSeed: number): FrameGeography {
  const { width, height, rgb, cover } = frame;
  const fields = new SmoothFields(frame, look, layout);
  const projection = new RowProjection(frame, look, layout);
  const geography = frameGeography(world, frame, look, layout, new RowProjection(frame, look, layout), fields.stride);
  const scene = new Scene(layout, look, new RowProjection(frame, look, layout), geography, fields.stride);
  fields.attach(scene);
  const horizonRow = look.perspective ? look.view.horizon * height : -Infinity;
  const vignette = columnVignette(width, look.vignette);
  const sky = look.perspective && horizonRow > 0 ? new SkyPainter(frame, look, grainSeed, horizonRow) : undefined;
  const [hazeR, hazeG, hazeB] = look.groundHaze;
  const [lampR, lampG, lampB] = look.lamp;
  const snowAmount = look.snow;
  const glowAmount = look.glow;
  const { levels: grainLevels, sparks } = grain();
  const grainAmount = look.grain;
  const here = scene.field;
  const slope = new Float64Array(FIELD_COUNT);
  const stride = fields.stride;
  const perStride = 1 / stride;
  const cityLights = layout.epoch === 'Nowadays' ? 0.5 : layout.epoch === 'Historical' ? 0.2 : 0.06;
  const m = look.ground;

  for (let y = 0; y < height; y++) {
    const rowVignette = 1 - look.vignette * ((y / height - 0.5) * 2) ** 2;
    if (sky && y < horizonRow + 0.5) {
      sky.paintRow(y, vignette, rowVignette, grainSeed);
      cover.fill(COVER.sky, y * width, (y + 1) * width);
      continue;
    }
    projection.at(y);
    const { originX, originY, stepX, stepY, metresPerPixel, haze } = projection;
    fields.prepareRow(y);
    geography.climateBetween(y / stride, scene);
    const knots = fields.row;
    scene.mpp = metresPerPixel;
    const farLights = cityLights * clamp01((metresPerPixel - 0.6) / 3);
    // The colour matrix, the row's haze and its share of the vignette folded into one affine map, in locals.
    const clear = (1 - haze) * 255 * rowVignette;
    const m0 = m[0]! * clear;
    const m1 = m[1]! * clear;
    const m2 = m[2]! * clear;
    const m3 = (m[3]! * (1 - haze) + hazeR * haze) * 255 * rowVignette;
    const m4 = m[4]! * clear;
    const m5 = m[5]! * clear;
    const m6 = m[6]! * clear;
    const m7 = (m[7]! * (1 - haze) + hazeG * haze) * 255 * rowVignette;
    const m8 = m[8]! * clear;
    const m9 = m[9]! * clear;
    const m10 = m[10]! * clear;
    const m11 = (m[11]! * (1 - haze) + hazeB * haze) * 255 * rowVignette;
    const lampRed = lampR * glowAmount * clear;
    const lampGreen = lampG * glowAmount * clear;
    const lampBlue = lampB * glowAmount * clear;

    let i = y * width * 3;
    let c = y * width;
    let g0 = (grainSeed + y * GRAIN_ROW_STEP) & GRAIN_MASK;
    let toKnot = 0;
    let knot = 0;
    for (let x = 0; x < width; x++, i += 3, c++, g0 = (g0 + 1) & GRAIN_MASK) {
      if (toKnot === 0) {
        loadKnot(here, slope, knots, knot * FIELD_COUNT, perStride);
        knot++;
        toKnot = stride;
      } else {
        advanceFields(here, slope);
      }
      toKnot--;
      scene.gx = originX + x * stepX;
      scene.gy = originY + x * stepY;
      sampleGround(scene);
      cover[c] = scene.cover;
      let r = scene.r;
      let g = scene.g;
      let b = scene.b;
      if (snowAmount > 0) {
        const snow = scene.snow * snowAmount;
        r += (0.95 - r) * snow;
        g += (0.96 - g) * snow;
        b += (0.99 - b) * snow;
      }
      // Light after snow, so snow keeps the shadows and the shape of roofs.
      const light = scene.shade;
      r *= light;
      g *= light;
      b *= light;
      let R = m0 * r + m1 * g + m2 * b + m3;
      let G = m4 * r + m5 * g + m6 * b + m7;
      let B = m8 * r + m9 * g + m10 * b + m11;
      if (glowAmount > 0) {
        let glow = scene.glow;
        const town = here[FIELD_TOWN]! - TOWN_EDGE;
        if (farLights > 0 && town > 0 && scene.cover === COVER.builtUp) {
          // Lamps and windows too small to draw still light up the town: a dim glow with scattered bright points.
          glow += farLights * Math.min(1, town * 2) * (sparks[g0] === 1 ? 3 : 0.2);
        }
        R += lampRed * glow;
        G += lampGreen * glow;
        B += lampBlue * glow;
      }
      const shade = vignette[x]!;
      // Sensor grain hides banding in the smooth sky and haze; improveOutput leaves it out.
      const speck = grainLevels[g0]! * grainAmount;
      rgb[i] = R * shade + speck;
      rgb[i + 1] = G * shade + speck;
      rgb[i + 2] = B * shade + speck;
    }
  }
  return geography;
}

/**
 * Sensor grain and the sparks of distant towns at night, looked up per pixel
 * rather than hashed: one table per thread, entered at a place that depends
 * on the request. Values repeat every GRAIN_MASK + 1 pixels; each row starts
 * GRAIN_ROW_STEP further on, so no pattern lines up.
 */
const GRAIN_MASK = 0x3fff;
const GRAIN_ROW_STEP = 40_503;

let grainTable: { levels: Float32Array; sparks: Uint8Array } | undefined;

function grain(): { levels: Float32Array; sparks: Uint8Array } {
  if (grainTable) return grainTable;
  const levels = new Float32Array(GRAIN_MASK + 1);
  const sparks = new Uint8Array(GRAIN_MASK + 1);
  for (let i = 0; i <= GRAIN_MASK; i++) {
    const noise = mix32(WORLD_SEED + i);
    levels[i] = (noise & 7) - 3.5;
    sparks[i] = ((noise >>> 8) & 15) === 0 ? 1 : 0;
  }
  grainTable = { levels, sparks };
  return grainTable;
}

/** Horizontal part of a gentle lens vignette of strength `amount` (the vertical part is computed per row). */
function columnVignette(width: number, amount: number): Float32Array {
  const v = new Float32Array(width);
  for (let x = 0; x < width; x++) v[x] = 1 - amount * ((x / width - 0.5) * 2) ** 2;
  return v;
}
