// Procedural aerial scenes for the sandbox server: a deterministic stand-in for the
// real generator, drawn from real geography. Every request field changes the
// picture in a way a person can see (and a test can measure).
//
// How a frame is made:
//  1. The request's point is placed on the Earth: the world data (world/) says
//     where the sea, lakes and great rivers are, how built-up the ground is
//     (from the populations of the places around) and what the climate makes
//     of the rest (ice, sand, rock, tundra, forest, fields). Zoom sets how many
//     metres the frame spans, so zooming out shows more of the same place.
//  2. The *look* (zoom, angle, bearing, weather, daytime, epoch) becomes
//     numbers and colour matrices. Streets, lots and fields are laid on a grid
//     anchored to the Earth, so the same ground looks the same in every frame.
//  3. Each ground pixel is mapped to a point on the ground (orthographic for
//     Top, a pinhole-like projection with a horizon for the oblique angles) and
//     sampled there.
//  4. Overlays that live in screen space follow: clouds, rain, snowflakes, the
//     muted surroundings, the place's label, the caption band, the compass and
//     the SANDBOX mark (overlays.ts). libvips (through sharp) encodes the JPEG.
//
// Speed: the per-pixel sampler is a chain of plain functions that pass state on
// one reusable Scene object (no allocation, no closures, no boxed doubles per
// pixel). Smooth large-scale fields (geography, terrain, town extent) are
// evaluated on a sparse grid of knots and interpolated, since they vary slowly
// on screen.
import { BEARING_DEGREES, imageDimensions } from '../../api/enums.js';
import type { Angle, Daytime, Epoch, Weather, Zoom } from '../../api/enums.js';
import type { GenerationRequest } from '../../api/schema.js';
import {
  asciiText,
  blendPixel,
  distance,
  muteSurroundings,
  paintCaptionBand,
  paintCompass,
  paintPlaceLabel,
  paintSandboxMark,
  PixelFont,
  textScale,
  type Frame,
  type Rgb,
} from './overlays.js';
import { atlas, forEachPlaceNear, type Atlas } from '../world/atlas.js';
import { FrameGeography, RIVER_HALF_WIDTH, type GroundLine, type Place } from '../world/frame-geography.js';
import { METRES_PER_DEGREE, wrapLongitude } from '../world/grid.js';

/**
 * The JPEG of a request: baseline, of imageDimensions(resolution, aspectRatio)
 * pixels. Pure and deterministic: the same request (whatever its key order)
 * always gives the same bytes.
 *
 * `size` overrides the dimensions; the sandbox only uses that for warm-up
 * frames, which run every code path of a full frame on a few pixels.
 */
export async function renderAerialJpeg(request: GenerationRequest, size?: FrameSize): Promise<Buffer> {
  const { width, height } = size ?? imageDimensions(request.resolution, request.aspectRatio);
  const spare = spareBuffers.findIndex((buffers) => buffers.cover.length === width * height);
  const buffers = spare >= 0 ? spareBuffers.splice(spare, 1)[0]! : newBuffers(width, height);
  try {
    return await encodeJpeg(renderAerialFrame(request, size, buffers));
  } finally {
    // Back for the next frame of this size once libvips is done with the pixels.
    if (spareBuffers.length < 2) spareBuffers.push(buffers);
  }
}

interface FrameBuffers {
  rgb: Uint8ClampedArray;
  cover: Uint8Array;
}

/**
 * Pixel buffers of frames already encoded, reused: allocating megabytes
 * outside the heap for every frame made the collector run about a tenth of
 * the time. Only renderAerialJpeg hands them out and takes them back.
 */
const spareBuffers: FrameBuffers[] = [];

function newBuffers(width: number, height: number): FrameBuffers {
  return { rgb: new Uint8ClampedArray(width * height * 3), cover: new Uint8Array(width * height) };
}

export interface FrameSize {
  width: number;
  height: number;
}

/** Land cover of a pixel, as the renderer decided it (RenderedFrame.cover). */
export const COVER = {
  sky: 0,
  water: 1,
  ice: 2,
  sand: 3,
  builtUp: 4,
  forest: 5,
  openLand: 6,
  tundra: 7,
  rock: 8,
} as const;

export interface RenderedFrame extends Frame {
  /** One COVER value per pixel, before overlays. */
  cover: Uint8Array;
  /** improveOutput: encode at higher quality, full-resolution colour, sharpened. */
  improved: boolean;
  /** The place includeContext names, when the data knows one near the point. */
  place?: string;
}

/** The frame's pixels (RGB) and what each shows; encodeJpeg turns them into the JPEG. */
export function renderAerialFrame(
  request: GenerationRequest,
  size: FrameSize = imageDimensions(request.resolution, request.aspectRatio),
  buffers: FrameBuffers = newBuffers(size.width, size.height),
): RenderedFrame {
  const { width, height } = size;
  const world = atlas();
  const font = new PixelFont(world.font);
  const frame: RenderedFrame = { width, height, ...buffers, improved: request.improveOutput === true };
  const look = describeLook(request);
  const layout = planLayout(request, world);
  const requestSeed = hashString(canonicalJson(request));
  const random = createRandom(requestSeed);

  const geography = paintScene(frame, look, layout, world, requestSeed);
  if (look.cloudLayer > 0) paintCloudLayer(frame, look, random);
  if (look.rain) paintRain(frame, look, random);
  if (look.snowfall) paintSnowfall(frame, look, random);

  const subject = subjectOnScreen(frame, look);
  const shortSide = Math.min(width, height);
  if (request.includeSurroundings === false) muteSurroundings(frame, subject.x, subject.y, shortSide * 0.24);
  if (request.includeContext === true) {
    const place = geography.landmark();
    frame.place = describePlace(place, request);
    paintPlaceLabel(frame, font, subject.x, subject.y, frame.place);
  }
  const captionTop = paintCaptionBand(frame, font, captionLines(request, font, frame));
  paintCompass(frame, font, request.bearing);
  paintSandboxMark(frame, font, captionTop);
  return frame;
}

/**
 * libvips, through sharp, encodes the frame: a baseline JPEG with the
 * standard Huffman tables (optimising them would cost three times the time
 * for 2 % fewer bytes); improveOutput adds quality, full-resolution colour and
 * a light sharpening. Loaded on first use, so the rest of the CLI never loads it.
 */
export async function encodeJpeg(frame: RenderedFrame): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  const pixels = Buffer.from(frame.rgb.buffer, frame.rgb.byteOffset, frame.rgb.byteLength);
  let image = sharp(pixels, { raw: { width: frame.width, height: frame.height, channels: 3 } });
  if (frame.improved) image = image.sharpen({ sigma: 1.1, m1: 0.8, m2: 2 });
  return image
    .jpeg({
      quality: frame.improved ? 92 : JPEG_QUALITY,
      chromaSubsampling: frame.improved ? '4:4:4' : '4:2:0',
      optimiseCoding: false,
      progressive: false,
      mozjpeg: false,
    })
    .toBuffer();
}

/** Quality of ordinary frames: crisp roofs and lane markings while UHD stays a few MB. */
const JPEG_QUALITY = 80;

/** The caption band's lines: the prompt, which the sandbox shows rather than follows, and the tags. */
function captionLines(request: GenerationRequest, font: PixelFont, frame: Frame): string[] {
  const lines: string[] = [];
  const scale = textScale(frame);
  const maxWidth = frame.width - 8 * scale;
  const prompt = request.prompt?.trim();
  if (prompt) lines.push(...font.wrap(`Prompt (shown, not followed): ${asciiText(prompt)}`, scale, maxWidth, 2));
  if (request.tags.length > 0) lines.push(font.fit(`Tags: ${request.tags.map((tag) => asciiText(tag)).join(', ')}`, scale, maxWidth));
  return lines;
}

/** "Jersey City, US", or "Open water, 12 km SW of Jersey City, US" away from it. */
function describePlace(place: Place | undefined, request: GenerationRequest): string {
  const { lat } = request.coordinates;
  const lng = wrapLongitude(request.coordinates.lng);
  const position = `${Math.abs(lat).toFixed(3)}${lat < 0 ? 'S' : 'N'} ${Math.abs(lng).toFixed(3)}${lng < 0 ? 'W' : 'E'}`;
  if (!place) return `${position}: no place of 1000 people within 40 km`;
  const name = `${asciiText(place.name)}, ${place.country}`;
  const away = Math.hypot(place.east, place.north);
  if (away <= Math.max(place.radius, 1500)) return name;
  const bearing = (Math.atan2(-place.east, -place.north) * 180) / Math.PI;
  const points = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
  const point = points[Math.round((((bearing % 360) + 360) % 360) / 45) % 8];
  return `${(away / 1000).toFixed(away < 10_000 ? 1 : 0)} km ${point} of ${name}`;
}

// ---------------------------------------------------------------------------
// Seeds and hashing
// ---------------------------------------------------------------------------

/** JSON with object keys sorted and undefined members dropped, so equal requests hash equally. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** FNV-1a over UTF-16 code units, finished with a mixer so similar strings land far apart. */
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return mix32(hash);
}

/**
 * Integer avalanche (xor-shift-multiply), the basis of every hash below. Returns
 * a signed 32-bit integer: V8 keeps those unboxed, where an unsigned value above
 * 2³¹ would be a heap-allocated double.
 */
function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** Hash of an integer lattice point; the backbone of noise, lots, trees and cars. */
function hash2(x: number, y: number, seed: number): number {
  return mix32(seed ^ Math.imul(x | 0, 0x27d4eb2d) ^ Math.imul(y | 0, 0x165667b1));
}

/** A hash as a number in [0, 1). */
function unit(hash: number): number {
  return (hash >>> 0) / 4294967296;
}

/** A counter run through the mixer: tiny, seedable, good enough for placing raindrops. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    return unit(mix32(state));
  };
}

/** Smoothly interpolated lattice noise in [0, 1]. */
function valueNoise(x: number, y: number, seed: number): number {
  const ix = Math.floor(x);
  const iy = Math.floor(y);
  const fx = x - ix;
  const fy = y - iy;
  const sx = fx * fx * (3 - 2 * fx);
  const sy = fy * fy * (3 - 2 * fy);
  const a = unit(hash2(ix, iy, seed));
  const b = unit(hash2(ix + 1, iy, seed));
  const c = unit(hash2(ix, iy + 1, seed));
  const d = unit(hash2(ix + 1, iy + 1, seed));
  return a + (b - a) * sx + (c - a) * sy + (a - b - c + d) * sx * sy;
}

/** Two octaves; the second is offset so lattice lines of the two do not coincide. */
function fractalNoise(x: number, y: number, seed: number): number {
  return 0.65 * valueNoise(x, y, seed) + 0.35 * valueNoise(x * 2.13 + 31.7, y * 2.13 - 17.3, seed + 1);
}

function clamp01(value: number): number {
  return value < 0 ? 0 : value > 1 ? 1 : value;
}

function smoothstep(edge0: number, edge1: number, value: number): number {
  const t = clamp01((value - edge0) / (edge1 - edge0));
  return t * t * (3 - 2 * t);
}

// ---------------------------------------------------------------------------
// Look: what zoom, angle, bearing, weather, daytime and epoch do to the picture
// ---------------------------------------------------------------------------

/** Ground metres spanned by the frame's short side (at the bottom edge for oblique views). */
const METRES_ACROSS: Record<Zoom, number> = { ExtraLow: 5000, Low: 2000, Medium: 800, High: 300, ExtraHigh: 110 };

interface ViewGeometry {
  /** Horizon row as a fraction of the height; negative puts it above the frame (no sky). */
  horizon: number;
  /** Forward ground metres per lateral metre at the bottom row: how flattened the ground looks. */
  foreshorten: number;
  /** Distance, in multiples of the ground the frame's short side spans, at which haze reaches ~63 %. */
  hazeReach: number;
}

const VIEWS: Record<Exclude<Angle, 'Top'>, ViewGeometry> = {
  High: { horizon: -1.3, foreshorten: 1.15, hazeReach: 14 },
  Medium: { horizon: 0.19, foreshorten: 1.7, hazeReach: 9 },
  Low: { horizon: 0.34, foreshorten: 2.5, hazeReach: 7 },
};


interface DaytimeLight {
  ambient: Rgb;
  /** How strongly street lamps and windows show. */
  glow: number;
  skyTop: Rgb;
  skyHorizon: Rgb;
  sunAzimuth: number;
  sunElevation: number;
}

const DAYTIMES: Record<Daytime, DaytimeLight> = {
  Day: {
    ambient: [1, 1, 1],
    glow: 0,
    skyTop: [0.34, 0.55, 0.86],
    skyHorizon: [0.74, 0.84, 0.94],
    sunAzimuth: 180,
    sunElevation: 55,
  },
  Dawn: {
    ambient: [0.8, 0.74, 0.86],
    glow: 0.3,
    skyTop: [0.42, 0.5, 0.74],
    skyHorizon: [0.98, 0.76, 0.68],
    sunAzimuth: 100,
    sunElevation: 9,
  },
  Dusk: {
    ambient: [0.82, 0.6, 0.55],
    glow: 0.55,
    skyTop: [0.25, 0.22, 0.46],
    skyHorizon: [0.98, 0.56, 0.32],
    sunAzimuth: 260,
    sunElevation: 8,
  },
  Night: {
    ambient: [0.19, 0.22, 0.36],
    glow: 1,
    skyTop: [0.015, 0.025, 0.07],
    skyHorizon: [0.09, 0.11, 0.2],
    sunAzimuth: 200,
    sunElevation: 40,
  },
};

interface WeatherLook {
  tint: Rgb;
  saturation: number;
  contrast: number;
  /** Multiplier inside cast shadows: harsh sun gives deep shadows, overcast almost none. */
  shadowDepth: number;
  /** Fraction of the sky covered by clouds. */
  skyClouds: number;
  /** Grey applied to the sky, and how much of it. */
  skyVeil: Rgb;
  skyVeilAmount: number;
  /** Scales how far one sees through the air: far on clear days, not far in rain. */
  hazeFactor: number;
}

const WEATHERS: Record<Weather, WeatherLook> = {
  Sunny: {
    tint: [1.02, 1.01, 1],
    saturation: 1.12,
    contrast: 1.08,
    shadowDepth: 0.5,
    skyClouds: 0.18,
    skyVeil: [1, 1, 1],
    skyVeilAmount: 0,
    hazeFactor: 1.3,
  },
  Rainy: {
    tint: [0.66, 0.7, 0.78],
    saturation: 0.55,
    contrast: 0.9,
    shadowDepth: 0.9,
    skyClouds: 0.95,
    skyVeil: [0.42, 0.45, 0.5],
    skyVeilAmount: 0.8,
    hazeFactor: 0.45,
  },
  Cloudy: {
    tint: [0.88, 0.9, 0.94],
    saturation: 0.7,
    contrast: 0.88,
    shadowDepth: 0.86,
    skyClouds: 0.8,
    skyVeil: [0.66, 0.68, 0.72],
    skyVeilAmount: 0.65,
    hazeFactor: 0.7,
  },
  GoldenHour: {
    tint: [1.2, 0.97, 0.66],
    saturation: 1.1,
    contrast: 1.05,
    shadowDepth: 0.55,
    skyClouds: 0.25,
    skyVeil: [1, 0.72, 0.38],
    skyVeilAmount: 0.45,
    hazeFactor: 1,
  },
  Snow: {
    tint: [0.97, 1, 1.05],
    saturation: 0.85,
    contrast: 1,
    shadowDepth: 0.68,
    skyClouds: 0.6,
    skyVeil: [0.84, 0.86, 0.9],
    skyVeilAmount: 0.55,
    hazeFactor: 0.6,
  },
};

interface Look {
  metresAcross: number;
  perspective: boolean;
  view: ViewGeometry;
  /** Camera heading, radians clockwise from north. */
  bearing: number;
  /** Colour matrix for lit ground (light, weather tint, grading). */
  ground: ColourMatrix;
  /** Colour matrix for things that bring their own light: sky, clouds. */
  grade: ColourMatrix;
  glow: number;
  lamp: Rgb;
  snow: number;
  shadowDepth: number;
  /** Shadow metres per metre of height. */
  shadowLength: number;
  /** Where light comes from, radians clockwise from north. */
  sunAzimuth: number;
  /** Strength of the sun's glow in the sky band (low sun only). */
  sunGlow: number;
  skyTop: Rgb;
  skyHorizon: Rgb;
  skyClouds: number;
  cloudColour: Rgb;
  /** What the sky looks like at the horizon; far hills fade into it. */
  haze: Rgb;
  /** Far ground fades into this: the horizon's haze with a touch of land in it, so the horizon stays visible. */
  groundHaze: Rgb;
  /** Metres ahead at which haze reaches ~63 %. */
  hazeReach: number;
  stars: boolean;
  cloudLayer: number;
  rain: boolean;
  snowfall: boolean;
  /** Ground colour of far hills on the horizon, already lit. */
  hills: Rgb;
  /** Sensor grain, in levels either way. */
  grain: number;
  /** How much the corners darken. */
  vignette: number;
}

function describeLook(request: GenerationRequest): Look {
  const light = DAYTIMES[request.daytime];
  const weather = WEATHERS[request.weather];
  const night = request.daytime === 'Night';

  // A low sun: golden hour (morning if it is dawn, else late afternoon), dawn or dusk.
  let sunAzimuth = light.sunAzimuth;
  let sunElevation = light.sunElevation;
  if (request.weather === 'GoldenHour' && !night) {
    sunAzimuth = request.daytime === 'Dawn' ? 100 : 245;
    sunElevation = Math.min(sunElevation, 13);
  }
  // Midday sun stands in the south north of the equator and in the north south of it.
  if (request.daytime === 'Day' && request.weather !== 'GoldenHour' && request.coordinates.lat < 0) sunAzimuth = 0;

  const epochTint: Rgb = request.epoch === 'Ancient' ? [1.05, 0.98, 0.86] : [1, 1, 1];
  // improveOutput: livelier colour, more local contrast, clearer air, no grain, a lighter vignette.
  const improved = request.improveOutput === true;
  // Old times are a little faded; historical ones also toned like an old print.
  const saturation = weather.saturation * (request.epoch === 'Nowadays' ? 1 : 0.85) * (improved ? 1.22 : 1);
  const sepia = request.epoch === 'Historical' ? 0.55 : 0;
  const contrast = weather.contrast * (improved ? 1.12 : 1);
  const grade = compose(contrastMatrix(contrast), compose(sepiaMatrix(sepia), saturationMatrix(saturation)));
  const ambient: Rgb = [
    light.ambient[0] * weather.tint[0] * epochTint[0],
    light.ambient[1] * weather.tint[1] * epochTint[1],
    light.ambient[2] * weather.tint[2] * epochTint[2],
  ];
  const ground = compose(grade, scaleMatrix(ambient));

  const skyTop = applyMatrix(grade, veil(light.skyTop, weather, light));
  const skyHorizon = applyMatrix(grade, veil(light.skyHorizon, weather, light));
  const cloudBase: Rgb = night ? [0.12, 0.13, 0.18] : request.weather === 'Rainy' ? [0.55, 0.57, 0.6] : [0.93, 0.93, 0.94];
  const cloudColour = applyMatrix(grade, multiply(cloudBase, night ? [1, 1, 1] : light.ambient));
  const snowy = request.weather === 'Snow';
  const hillsBase: Rgb = snowy ? [0.8, 0.83, 0.88] : request.epoch === 'Ancient' ? [0.45, 0.42, 0.3] : [0.26, 0.34, 0.27];

  const hills = applyMatrix(ground, hillsBase);
  return {
    metresAcross: METRES_ACROSS[request.zoom],
    perspective: request.angle !== 'Top',
    view: request.angle === 'Top' ? { horizon: -Infinity, foreshorten: 1, hazeReach: Infinity } : VIEWS[request.angle],
    bearing: (BEARING_DEGREES[request.bearing] * Math.PI) / 180,
    ground,
    grade,
    glow: light.glow,
    lamp: [1, 0.78, 0.46],
    snow: snowy ? 0.92 : 0,
    shadowDepth: night ? 0.93 : weather.shadowDepth,
    shadowLength: Math.min(4, 1 / Math.tan((sunElevation * Math.PI) / 180)),
    sunAzimuth: (sunAzimuth * Math.PI) / 180,
    sunGlow: night ? 0 : sunElevation < 15 ? (request.weather === 'Rainy' || request.weather === 'Cloudy' ? 0.25 : 0.75) : 0,
    skyTop,
    skyHorizon,
    skyClouds: weather.skyClouds,
    cloudColour,
    haze: skyHorizon,
    groundHaze: mixRgb(skyHorizon, hills, 0.35),
    hazeReach:
      (request.angle === 'Top' ? Infinity : VIEWS[request.angle].hazeReach) *
      METRES_ACROSS[request.zoom] *
      weather.hazeFactor *
      (improved ? 1.8 : 1),
    grain: improved ? 0 : 1.1,
    vignette: improved ? 0.08 : 0.2,
    stars: night && weather.skyClouds < 0.7,
    cloudLayer: request.weather === 'Cloudy' ? 1 : request.weather === 'Rainy' ? 0.55 : 0,
    rain: request.weather === 'Rainy',
    snowfall: snowy,
    hills,
  };
}

/** Overcast, rain or snow greys the sky; at night the grey is dimmed with everything else. */
function veil(colour: Rgb, weather: WeatherLook, light: DaytimeLight): Rgb {
  const dim = (light.ambient[0] + light.ambient[1] + light.ambient[2]) / 3;
  const k = weather.skyVeilAmount;
  return [
    colour[0] * (1 - k) + weather.skyVeil[0] * dim * k,
    colour[1] * (1 - k) + weather.skyVeil[1] * dim * k,
    colour[2] * (1 - k) + weather.skyVeil[2] * dim * k,
  ];
}

function mixRgb(a: Rgb, b: Rgb, amount: number): Rgb {
  return [a[0] + (b[0] - a[0]) * amount, a[1] + (b[1] - a[1]) * amount, a[2] + (b[2] - a[2]) * amount];
}

function multiply(a: Rgb, b: Rgb): Rgb {
  return [a[0] * b[0], a[1] * b[1], a[2] * b[2]];
}

// Colour grading is a chain of linear operations (light tint, saturation, sepia,
// contrast), so it is folded into one 3×4 affine matrix and applied once per pixel.

/** Row-major 3×4: out_r = m0·r + m1·g + m2·b + m3, and so on. */
type ColourMatrix = readonly number[];

const LUMA: Rgb = [0.299, 0.587, 0.114];

function scaleMatrix(scale: Rgb): ColourMatrix {
  return [scale[0], 0, 0, 0, 0, scale[1], 0, 0, 0, 0, scale[2], 0];
}

function saturationMatrix(saturation: number): ColourMatrix {
  const m: number[] = [];
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 3; col++) m.push((1 - saturation) * LUMA[col]! + (row === col ? saturation : 0));
    m.push(0);
  }
  return m;
}

/** Blend towards a warm monochrome, the look of an old print. */
function sepiaMatrix(amount: number): ColourMatrix {
  const tone: Rgb = [1.1, 0.93, 0.7];
  const m: number[] = [];
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 3; col++) m.push(amount * tone[row]! * LUMA[col]! + (1 - amount) * (row === col ? 1 : 0));
    m.push(0);
  }
  return m;
}

function contrastMatrix(contrast: number, pivot = 0.45): ColourMatrix {
  const offset = pivot * (1 - contrast);
  return [contrast, 0, 0, offset, 0, contrast, 0, offset, 0, 0, contrast, offset];
}

/** The matrix that applies `first` and then `second`. */
function compose(second: ColourMatrix, first: ColourMatrix): ColourMatrix {
  const m: number[] = [];
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 4; col++) {
      let sum = col === 3 ? second[row * 4 + 3]! : 0;
      for (let k = 0; k < 3; k++) sum += second[row * 4 + k]! * first[k * 4 + col]!;
      m.push(sum);
    }
  }
  return m;
}

function applyMatrix(m: ColourMatrix, c: Rgb): Rgb {
  return [
    m[0]! * c[0] + m[1]! * c[1] + m[2]! * c[2] + m[3]!,
    m[4]! * c[0] + m[5]! * c[1] + m[6]! * c[2] + m[7]!,
    m[8]! * c[0] + m[9]! * c[1] + m[10]! * c[2] + m[11]!,
  ];
}

// ---------------------------------------------------------------------------
// Layout: where the frame is on the Earth, and how the place is built
// ---------------------------------------------------------------------------

/**
 * Every street, lot, field and tree is hashed from this seed and its
 * position on the Earth, so the same ground looks the same in every frame.
 */
const WORLD_SEED = 0x5a4d_b0c5;

interface Layout {
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
function planLayout(request: GenerationRequest, world: Atlas): Layout {
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
const ROOFS_MODERN = [
  0.56, 0.55, 0.53, 0.42, 0.43, 0.46, 0.66, 0.38, 0.29, 0.74, 0.72, 0.68, 0.36, 0.39, 0.44, 0.52, 0.33, 0.27, 0.8, 0.79,
  0.76, 0.47, 0.48, 0.43,
];
/** Flat roofs of bigger buildings: concrete, gravel, membranes, the odd planted roof. */
const ROOFS_FLAT = [
  0.6, 0.6, 0.58, 0.5, 0.5, 0.49, 0.7, 0.69, 0.66, 0.42, 0.42, 0.43, 0.56, 0.54, 0.5, 0.78, 0.78, 0.76, 0.35, 0.36, 0.37,
  0.46, 0.52, 0.4,
];
const ROOFS_HISTORICAL = [
  0.66, 0.37, 0.25, 0.58, 0.33, 0.24, 0.48, 0.3, 0.24, 0.4, 0.38, 0.37, 0.7, 0.45, 0.3, 0.56, 0.46, 0.37,
];
const FIELDS_MODERN = [
  0.45, 0.58, 0.26, 0.76, 0.68, 0.4, 0.54, 0.43, 0.3, 0.36, 0.52, 0.25, 0.66, 0.63, 0.35, 0.3, 0.46, 0.22, 0.6, 0.56,
  0.31,
];
const FIELDS_HISTORICAL = [0.5, 0.56, 0.3, 0.72, 0.63, 0.4, 0.56, 0.45, 0.32, 0.42, 0.52, 0.28, 0.63, 0.57, 0.37];
const FIELDS_ANCIENT = [0.6, 0.5, 0.34, 0.66, 0.58, 0.37, 0.48, 0.49, 0.3, 0.54, 0.43, 0.3, 0.46, 0.46, 0.31];
const CAR_COLOURS = [
  0.86, 0.86, 0.87, 0.1, 0.1, 0.11, 0.64, 0.1, 0.1, 0.2, 0.3, 0.56, 0.56, 0.57, 0.59, 0.82, 0.77, 0.6, 0.28, 0.29, 0.31,
];

/** Town intensity below which a block is countryside. */
const TOWN_EDGE = 0.25;

// Land uses of a city block.
const USE_BUILDINGS = 0;
const USE_PARK = 1;
const USE_SQUARE = 2;

// Roof shapes.
const ROOF_FLAT = 0;
const ROOF_HIP = 1;
const ROOF_GABLE = 2;
const ROOF_COURTYARD = 3;

// Salts that keep the different hashed features independent of one another.
const SALT_TERRAIN = 0x1111;
const SALT_RIVER = 0x2222;
const SALT_TOWN = 0x3333;
const SALT_MOTTLE = 0x4444;
const SALT_PATH = 0x5555;
const SALT_WARP = 0x6666;
const SALT_BLOCK = 0x7777;
const SALT_LOT = 0x8888;
const SALT_TREE = 0x9999;
const SALT_FIELD = 0xaaaa;
const SALT_CAR = 0xbbbb;
const SALT_HUT = 0xcccc;
const SALT_ROOF = 0xdddd;
const SALT_SHORE = 0xeeee;
const SALT_STRATA = 0x1234;

// ---------------------------------------------------------------------------
// The per-pixel world sampler
// ---------------------------------------------------------------------------

/**
 * Everything the sampler needs, flattened onto one object of fixed shape so
 * property access stays fast; it also caches the current block and lot, since
 * consecutive pixels of a row usually fall in the same one.
 */
class Scene {
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

function setColour(scene: Scene, r: number, g: number, b: number, snow: number): void {
  scene.r = r;
  scene.g = g;
  scene.b = b;
  scene.snow = snow;
}

function blendColour(scene: Scene, r: number, g: number, b: number, amount: number): void {
  scene.r += (r - scene.r) * amount;
  scene.g += (g - scene.g) * amount;
  scene.b += (b - scene.b) * amount;
}

/**
 * How built-up the ground is at a grid position: the frame's urban field
 * there (from the places around and their populations), roughened by noise
 * so a town's edge is not round. Positions off screen take the nearest knot's.
 */
function townAt(scene: Scene, gx: number, gy: number): number {
  scene.projection.screenOf(gx, gy);
  const urban = scene.geography.urbanAtScreen(scene.projection.screenX, scene.projection.screenY, scene.stride);
  return roughTown(urban, gx, gy, scene.seed);
}

/** A town's edge, roughened: the urban field plus noise a few hundred metres across. */
function roughTown(urban: number, gx: number, gy: number, seed: number): number {
  return urban + (valueNoise(gx / 420, gy / 420, seed ^ SALT_TOWN) - 0.5) * 0.34;
}

/**
 * Samples the world at (scene.gx, scene.gy), with scene.field holding the smooth
 * fields there; features much smaller than scene.mpp (a pixel's ground size)
 * fade out rather than alias.
 */
function sampleGround(scene: Scene): void {
  scene.glow = 0;
  scene.shade = 1;
  const field = scene.field;
  const sea = field[FIELD_WATER]!;
  const river = field[FIELD_RIVER]!;
  const wet = sea > 0.5 || river < RIVER_HALF_WIDTH;

  if (!scene.ancient) {
    locateInGrid(scene);
    if (sampleRoad(scene, sea > 0.5, river < RIVER_HALF_WIDTH)) {
      scene.cover = COVER.builtUp;
      return;
    }
  }
  if (wet) {
    // Shallow near the shore or the river bank, deep away from it.
    const depth = Math.max(clamp01((sea - 0.5) / 0.4), clamp01((RIVER_HALF_WIDTH - river) / (RIVER_HALF_WIDTH * 0.6)));
    const shallow = 1 - depth;
    // Ripples, and wider patches where the wind roughens the surface.
    const ripple = 0.95 + 0.07 * field[FIELD_MOTTLE]! + 0.12 * (field[FIELD_TERRAIN]! - 0.5);
    setColour(scene, (0.09 + 0.12 * shallow) * ripple, (0.22 + 0.18 * shallow) * ripple, (0.33 + 0.11 * shallow) * ripple, 0.05);
    scene.cover = COVER.water;
    return;
  }
  const town = field[FIELD_TOWN]!;
  if (scene.ancient) {
    if (sampleAncientPath(scene) || (town > TOWN_EDGE && sampleVillage(scene))) {
      scene.cover = COVER.builtUp;
      return;
    }
  } else if (town > TOWN_EDGE - 0.1 && sampleBlock(scene)) {
    return;
  }
  if (sea > 0.36 || river < RIVER_HALF_WIDTH * 1.3) {
    setColour(scene, 0.78, 0.72, 0.55, 0.9); // beach, or a river's sandy bank
    scene.cover = COVER.sand;
    return;
  }
  sampleLand(scene);
  const mottle = 0.9 + 0.2 * field[FIELD_MOTTLE]!;
  scene.r *= mottle;
  scene.g *= mottle;
  scene.b *= mottle;
}

/**
 * Land away from towns and water, by the climate of the row: the terrain
 * noise picks among ice, sand, rock, tundra, forest and open land in
 * proportion to their shares, in patches a few hundred metres across.
 */
function sampleLand(scene: Scene): void {
  const pick = evenly(scene.field[FIELD_TERRAIN]!);
  let edge = scene.ice;
  if (pick < edge) return paintIce(scene);
  edge += scene.sand;
  if (pick < edge) return paintDunes(scene);
  edge += scene.rock;
  if (pick < edge) return paintRock(scene);
  edge += scene.tundra;
  if (pick < edge) return paintTundra(scene);
  edge += scene.forest;
  if (pick < edge) {
    scene.cover = COVER.forest;
    return sampleForest(scene);
  }
  scene.cover = COVER.openLand;
  if (scene.dry > 0.45) paintSteppe(scene);
  else sampleFields(scene);
}

/**
 * Sixteenths of fractalNoise's distribution (measured over 400 000 samples):
 * terrain values mapped through them are spread evenly over [0, 1), so a
 * land cover with a share s covers about s of the ground.
 */
const TERRAIN_QUANTILES = [0, 0.255, 0.31, 0.351, 0.385, 0.417, 0.446, 0.473, 0.5, 0.528, 0.555, 0.584, 0.615, 0.649, 0.69, 0.745, 1];

function evenly(terrain: number): number {
  let i = 1;
  while (i < 16 && terrain > TERRAIN_QUANTILES[i]!) i++;
  const low = TERRAIN_QUANTILES[i - 1]!;
  const share = (i - 1 + clamp01((terrain - low) / (TERRAIN_QUANTILES[i]! - low))) / 16;
  return Math.min(0.999, share);
}

/** An ice sheet: blue-white, with soft wind-carved drifts where the pixels are small enough to show them. */
function paintIce(scene: Scene): void {
  const drift = (scene.field[FIELD_MOTTLE]! - 0.5) * 0.05;
  setColour(scene, 0.86 + drift, 0.9 + drift, 0.96 + drift * 0.5, 1);
  scene.cover = COVER.ice;
}

/**
 * Sand seas: long dune ridges across the prevailing wind, wandering with the
 * terrain, each with a gentle windward slope and a steep lee face in shade.
 */
function paintDunes(scene: Scene): void {
  const wave = (scene.gx * 0.8 + scene.gy * 0.6) / 140 + scene.field[FIELD_TERRAIN]! * 6;
  const phase = wave - Math.floor(wave);
  const fade = clamp01(14 / scene.mpp - 0.5);
  const slope = phase < 0.78 ? 0.12 * (phase / 0.78) : -0.2;
  const light = 1 + slope * fade * (scene.shadowX * 0.8 + scene.shadowY * 0.6 > 0 ? -1 : 1);
  setColour(scene, 0.86 * light, 0.68 * light, 0.46 * light, 0.85);
  scene.cover = COVER.sand;
}

/** Bare rock and scree, with snow lying in the hollows. */
function paintRock(scene: Scene): void {
  const strata = valueNoise(scene.gx / 14, scene.gy / 40, scene.seed ^ SALT_STRATA);
  if (scene.field[FIELD_MOTTLE]! > 0.7) setColour(scene, 0.88, 0.9, 0.94, 1);
  else setColour(scene, 0.42 + 0.12 * strata, 0.4 + 0.1 * strata, 0.37 + 0.08 * strata, 0.6);
  scene.cover = COVER.rock;
}

/** Tundra: low olive and russet vegetation with small ponds. */
function paintTundra(scene: Scene): void {
  const mottle = scene.field[FIELD_MOTTLE]!;
  if (mottle < 0.16) setColour(scene, 0.2, 0.28, 0.32, 0.3);
  else setColour(scene, 0.44 + 0.12 * mottle, 0.46 + 0.05 * mottle, 0.33, 0.95);
  scene.cover = COVER.tundra;
}

/** Dry grassland and savanna: golden grass with scattered trees and shrubs. */
function paintSteppe(scene: Scene): void {
  const dry = scene.dry;
  setColour(scene, 0.55 + 0.17 * dry, 0.53 + 0.07 * dry, 0.33, 0.95);
  if (treeCrown(scene, 16, 0.3 * (1.2 - dry))) paintTree(scene);
}

/** Finds the street-grid block of the sample (historical streets wander); every fourth line is a wide avenue. */
function locateInGrid(scene: Scene): void {
  const cx = scene.gx + scene.field[FIELD_WARP_X]!;
  const cy = scene.gy + scene.field[FIELD_WARP_Y]!;
  const block = scene.block;
  const bx = Math.floor(cx * scene.perBlock);
  const by = Math.floor(cy * scene.perBlock);
  scene.blockX = bx;
  scene.blockY = by;
  scene.inBlockX = cx - bx * block;
  scene.inBlockY = cy - by * block;
  scene.roadV = (bx & 3) === 0 ? scene.majorRoad : scene.road;
  scene.roadH = (by & 3) === 0 ? scene.majorRoad : scene.road;
}

/** Every twelfth line of the grid runs on through the countryside as a highway. */
function isHighway(line: number): boolean {
  return line - Math.floor(line / 12) * 12 === 0;
}

/**
 * Paints a road if the sample is on one. Streets exist where the town reaches
 * (judged at the middle of each street segment, so a street is all there or not
 * at all) and stop at water; highways link the settled countryside and bridge
 * rivers, but never run out to sea or across ice, sand and bare rock.
 */
function sampleRoad(scene: Scene, sea: boolean, river: boolean): boolean {
  const onV = scene.inBlockX < scene.roadV;
  const onH = scene.inBlockY < scene.roadH;
  if (!onV && !onH) return false;
  const bx = scene.blockX;
  const by = scene.blockY;
  const water = sea || river;
  const settled = scene.field[FIELD_TOWN]! > TOWN_EDGE - 0.12 && scene.ice + scene.sand + scene.rock + scene.tundra < 0.5;
  const highway = !sea && settled;
  if (onV && onH) {
    const town = !water && townReaches(scene, MEMO_CROSSING, bx, by);
    if (!town && !(highway && (isHighway(bx) || isHighway(by)))) return false;
    scene.fromCrossing = -1;
    paintRoadSurface(scene, 0, false, town);
    return true;
  }
  const block = scene.block;
  if (onV) {
    const town = !water && townReaches(scene, MEMO_STREET_V, bx, by);
    if (!town && !(highway && isHighway(bx))) return false;
    scene.across = scene.inBlockX;
    scene.roadWidth = scene.roadV;
    scene.along = by * block + scene.inBlockY;
    scene.fromCrossing = scene.inBlockY - scene.roadH;
    scene.segment = block - scene.roadH;
    paintRoadSurface(scene, bx * 4, (bx & 3) === 0, town);
    if (town) shadeStreetCanyon(scene, bx * 4, scene.shadowX);
  } else {
    const town = !water && townReaches(scene, MEMO_STREET_H, bx, by);
    if (!town && !(highway && isHighway(by))) return false;
    scene.across = scene.inBlockY;
    scene.roadWidth = scene.roadH;
    scene.along = bx * block + scene.inBlockX;
    scene.fromCrossing = scene.inBlockX - scene.roadV;
    scene.segment = block - scene.roadV;
    paintRoadSurface(scene, by * 4 + 2, (by & 3) === 0, town);
    if (town) shadeStreetCanyon(scene, by * 4 + 2, scene.shadowY);
  }
  return true;
}

/**
 * Downtown, the buildings along a street throw their shadows across it. Lots
 * only shade themselves, so the street estimates its neighbours' heights from
 * the town density, varying them every 28 m along the street.
 * `shadowAcross` is the shadow direction's component across the road.
 */
function shadeStreetCanyon(scene: Scene, lineId: number, shadowAcross: number): void {
  const dense = clamp01((scene.field[FIELD_TOWN]! - TOWN_EDGE) * 2.2);
  if (dense < 0.5 || scene.fromCrossing < 0) return;
  const tall = unit(hash2(Math.floor(scene.along / 28), lineId, scene.seed ^ SALT_LOT));
  const height = 5 + tall * 70 * dense * dense * dense;
  // Distance from the kerb on the sun side, plus the sidewalk and setback in front of the buildings there.
  const fromSunnyKerb = (shadowAcross > 0 ? scene.across : scene.roadWidth - scene.across) + scene.sidewalk + 1;
  if (fromSunnyKerb < height * scene.shadowLength * Math.abs(shadowAcross)) scene.shade *= scene.shadowDepth;
}

const MEMO_SIZE = 256;
// What townReaches is asked about: a crossing, or the middle of a street along x = const or y = const.
const MEMO_CROSSING = 0;
const MEMO_STREET_V = 1;
const MEMO_STREET_H = 2;

/**
 * Whether the town reaches a crossing or street middle of block (i, j): townAt
 * there against the street threshold, remembered in a small direct-mapped table
 * because road pixels ask about the same few segments again and again.
 */
function townReaches(scene: Scene, kind: number, i: number, j: number): boolean {
  const slot = hash2(i * 3 + kind, j, 0) & (MEMO_SIZE - 1);
  const memo = scene.townMemo;
  if (memo[slot * 4] === i && memo[slot * 4 + 1] === j && memo[slot * 4 + 2] === kind) return memo[slot * 4 + 3] === 1;
  const block = scene.block;
  const gx = (i + (kind === MEMO_STREET_H ? 0.5 : 0)) * block;
  const gy = (j + (kind === MEMO_STREET_V ? 0.5 : 0)) * block;
  const reaches = townAt(scene, gx, gy) > TOWN_EDGE - 0.05;
  memo[slot * 4] = i;
  memo[slot * 4 + 1] = j;
  memo[slot * 4 + 2] = kind;
  memo[slot * 4 + 3] = reaches ? 1 : 0;
  return reaches;
}

/**
 * The road cross-section in scene.across/roadWidth/along/fromCrossing/segment:
 * asphalt with markings, zebra crossings and cars today; packed earth with
 * wheel ruts in the past.
 */
function paintRoadSurface(scene: Scene, lineId: number, major: boolean, inTown: boolean): void {
  const across = scene.across;
  const width = scene.roadWidth;
  if (!scene.modern) {
    const rut = Math.min(Math.abs(across - width * 0.32), Math.abs(across - width * 0.68));
    const rutShade = scene.fromCrossing >= 0 && rut < 0.35 ? 0.88 : 1;
    setColour(scene, 0.6 * rutShade, 0.54 * rutShade, 0.43 * rutShade, 0.75);
    if (scene.lamps && inTown && scene.fromCrossing >= 0) addStreetLight(scene, 44, 0.7);
    return;
  }
  const tone = major ? 0.27 : 0.31;
  setColour(scene, tone, tone + 0.01, tone + 0.03, 0.35);
  const fromCrossing = scene.fromCrossing;
  if (fromCrossing < 0) return;
  // Paint fades out once a pixel is much wider than the line, instead of aliasing.
  const mpp = scene.mpp;
  const paint = clamp01(0.5 / mpp);
  const lineHalf = Math.max(0.12, mpp * 0.5);
  const kerb = Math.min(across, width - across);
  if (inTown && (fromCrossing < 3 || fromCrossing > scene.segment - 3)) {
    if ((Math.floor(across / 0.7) & 1) === 0 && kerb > 0.6) blendColour(scene, 0.86, 0.86, 0.84, paint);
    return;
  }
  const centre = Math.abs(across - width / 2);
  const along = scene.along;
  if (major) {
    if (Math.abs(centre - 0.25) < lineHalf) blendColour(scene, 0.86, 0.74, 0.3, paint);
    else if (Math.abs(centre - width / 4) < lineHalf && along - Math.floor(along / 9) * 9 < 4) {
      blendColour(scene, 0.85, 0.85, 0.83, paint); // dashed lane lines
    }
    else if (!inTown && Math.abs(kerb - 0.8) < lineHalf) blendColour(scene, 0.85, 0.85, 0.83, paint);
  } else if (centre < lineHalf && along - Math.floor(along / 8) * 8 < 4) {
    blendColour(scene, 0.85, 0.85, 0.83, paint);
  }
  paintCar(scene, lineId, major, inTown);
  if (scene.lamps && inTown) addStreetLight(scene, 30, 1);
}

/** Parked and moving cars: one hashed slot every 7.5 m per lane, most empty, fewer out of town. */
function paintCar(scene: Scene, lineId: number, major: boolean, inTown: boolean): void {
  const across = scene.across;
  const laneWidth = scene.roadWidth / (major ? 4 : 2);
  const lane = Math.floor(across / laneWidth);
  const offCentre = across - (lane + 0.5) * laneWidth;
  if (offCentre > 0.9 || offCentre < -0.9) return;
  const along = scene.along;
  const slot = Math.floor(along / 7.5);
  const h = hash2(slot, lineId * 8 + lane, scene.seed ^ SALT_CAR);
  if (unit(h) > (inTown ? 0.3 : 0.08)) return;
  const start = 1 + ((h >>> 20) & 3) * 0.5;
  const inCar = along - slot * 7.5 - start;
  if (inCar < 0 || inCar > 4.4) return;
  const colour = ((h >>> 8) % (CAR_COLOURS.length / 3)) * 3;
  // Windscreen and rear window: dark bands across the car.
  const glass = inCar > 1 && inCar < 1.7 ? 0.35 : inCar > 3.5 && inCar < 3.9 ? 0.5 : 1;
  setColour(scene, CAR_COLOURS[colour]! * glass, CAR_COLOURS[colour + 1]! * glass, CAR_COLOURS[colour + 2]! * glass, 0.2);
}

/** Pools of lamp light every `spacing` metres, staggered along the two kerbs. */
function addStreetLight(scene: Scene, spacing: number, power: number): void {
  const across = scene.across;
  const width = scene.roadWidth;
  const farSide = across > width / 2;
  const shifted = farSide ? scene.along + spacing / 2 : scene.along;
  const m = shifted - Math.floor(shifted / spacing) * spacing;
  const da = Math.min(m, spacing - m);
  const dk = (farSide ? width - across : across) - 0.5;
  const d2 = da * da + dk * dk;
  const reach = 42;
  if (d2 < reach) {
    const falloff = 1 - d2 / reach;
    scene.glow = power * (d2 < 0.4 ? 2.2 : falloff * falloff * 0.6);
  }
}

/** Refreshes the cached block description when the sample moved into another block. */
function describeBlock(scene: Scene): void {
  if (scene.blockX === scene.cachedBlockX && scene.blockY === scene.cachedBlockY) return;
  scene.cachedBlockX = scene.blockX;
  scene.cachedBlockY = scene.blockY;
  scene.cachedLot = -1;
  const block = scene.block;
  const town = townAt(scene, (scene.blockX + 0.5) * block, (scene.blockY + 0.5) * block);
  scene.blockTown = town;
  const h = hash2(scene.blockX, scene.blockY, scene.seed ^ SALT_BLOCK);
  const pick = unit(h);
  scene.blockUse = pick < 0.07 ? USE_PARK : pick < 0.11 ? USE_SQUARE : USE_BUILDINGS;
  // Downtown: few big lots, built to the edge. Suburbs: many small lots with gardens.
  const dense = clamp01((town - TOWN_EDGE) * 2.2);
  if (scene.modern) {
    scene.lotsX = dense > 0.6 ? 1 + ((h >>> 8) % 3) : 2 + ((h >>> 8) % 3);
    scene.lotsY = dense > 0.6 ? 1 + ((h >>> 10) & 1) : 2;
    scene.setback = dense > 0.6 ? 1 : 3 + 2 * (1 - dense);
    scene.occupancy = 0.75 + 0.2 * dense;
  } else {
    scene.lotsX = 2 + ((h >>> 8) % 3);
    scene.lotsY = 1 + ((h >>> 10) & 1);
    scene.setback = 1;
    scene.occupancy = 0.35 + 0.3 * dense;
  }
  scene.innerWidth = block - scene.roadV - 2 * scene.sidewalk;
  scene.innerHeight = block - scene.roadH - 2 * scene.sidewalk;
  scene.lotWidth = scene.innerWidth / scene.lotsX;
  scene.lotHeight = scene.innerHeight / scene.lotsY;
}

/** Paints the inside of a town block; false when the block is countryside. */
function sampleBlock(scene: Scene): boolean {
  describeBlock(scene);
  if (scene.blockTown < TOWN_EDGE) return false;
  scene.cover = COVER.builtUp;
  // Position inside the sidewalks.
  const ix = scene.inBlockX - scene.roadV - scene.sidewalk;
  const iy = scene.inBlockY - scene.roadH - scene.sidewalk;
  if (ix < 0 || iy < 0 || ix > scene.innerWidth || iy > scene.innerHeight) {
    setColour(scene, 0.63, 0.62, 0.6, 0.8);
    return true;
  }
  if (scene.blockUse === USE_PARK) {
    scene.px = ix;
    scene.py = iy;
    paintPark(scene);
    return true;
  }
  if (scene.blockUse === USE_SQUARE) {
    scene.px = ix;
    scene.py = iy;
    if (scene.modern) paintParkingLot(scene);
    else setColour(scene, 0.66, 0.6, 0.5, 0.85); // market square
    return true;
  }
  const li = Math.min(scene.lotsX - 1, Math.floor(ix / scene.lotWidth));
  const lj = Math.min(scene.lotsY - 1, Math.floor(iy / scene.lotHeight));
  describeLot(scene, li, lj);
  scene.px = ix - li * scene.lotWidth;
  scene.py = iy - lj * scene.lotHeight;
  paintLot(scene);
  return true;
}

/** Refreshes the cached description of lot (li, lj) of the current block: its building, roof and yard. */
function describeLot(scene: Scene, li: number, lj: number): void {
  const key = li * 8 + lj;
  if (key === scene.cachedLot) return;
  scene.cachedLot = key;
  const h = hash2(scene.blockX * 8 + li, scene.blockY * 8 + lj, scene.seed ^ SALT_LOT);
  const h2 = mix32(h ^ SALT_ROOF);
  scene.lotHash = h;
  scene.built = unit(h) < scene.occupancy;
  const dense = clamp01((scene.blockTown - TOWN_EDGE) * 2.2);
  const jitterX = (h2 & 15) / 15;
  const jitterY = ((h2 >>> 4) & 15) / 15;
  // Suburban houses take part of their lot; downtown buildings fill it.
  const fill = scene.modern ? 0.5 + 0.45 * dense : 0.8;
  const { lotWidth, lotHeight, setback } = scene;
  const spareX = Math.max(0, lotWidth - 2 * setback) * (1 - fill);
  const spareY = Math.max(0, lotHeight - 2 * setback) * (1 - fill);
  scene.houseX0 = setback + spareX * jitterX;
  scene.houseX1 = lotWidth - setback - spareX * (1 - jitterX) * 0.8;
  scene.houseY0 = setback + spareY * jitterY * 0.5;
  scene.houseY1 = lotHeight - setback - spareY * (1 - jitterY * 0.5);
  const tall = unit(h2);
  scene.houseHeight = scene.modern ? 5 + tall * (4 + 70 * dense * dense * dense) : 5 + 7 * tall;
  const smallRoof = scene.houseX1 - scene.houseX0 < 26 && scene.houseY1 - scene.houseY0 < 26;
  const shape = (h2 >>> 12) % 10;
  if (!scene.modern) {
    scene.roofType = !smallRoof && shape < 6 ? ROOF_COURTYARD : shape < 5 ? ROOF_GABLE : ROOF_HIP;
  } else if (smallRoof && dense < 0.6) {
    scene.roofType = shape < 6 ? ROOF_HIP : shape < 9 ? ROOF_GABLE : ROOF_FLAT; // houses
  } else {
    scene.roofType = ROOF_FLAT;
  }
  const palette = scene.roofType === ROOF_FLAT ? ROOFS_FLAT : scene.roofs;
  const colour = ((h2 >>> 16) % (palette.length / 3)) * 3;
  scene.roofR = palette[colour]!;
  scene.roofG = palette[colour + 1]!;
  scene.roofB = palette[colour + 2]!;
  scene.lit = unit(mix32(h2)) < (scene.modern ? 0.75 : 0.45);
  scene.pool = scene.modern && dense < 0.4 && ((h2 >>> 24) & 7) === 0 && lotWidth - scene.houseX1 > 7;
}

/** A lot at (scene.px, scene.py): the building's roof, or its yard with the building's shadow. */
function paintLot(scene: Scene): void {
  const px = scene.px;
  const py = scene.py;
  if (scene.built && px >= scene.houseX0 && px <= scene.houseX1 && py >= scene.houseY0 && py <= scene.houseY1) {
    paintRoof(scene);
    return;
  }
  // Yard: lawn in the suburbs, paving downtown, vegetable beds in old towns.
  const dense = scene.blockTown > TOWN_EDGE + 0.3;
  if (!scene.modern) {
    const row = Math.floor(py / 1.6) & 1;
    setColour(scene, row ? 0.47 : 0.4, row ? 0.5 : 0.4, row ? 0.3 : 0.27, 0.95);
  } else if (dense) {
    setColour(scene, 0.55, 0.54, 0.51, 0.85);
  } else {
    setColour(scene, scene.grass[0], scene.grass[1], scene.grass[2], 0.95);
  }
  if (scene.pool && px > scene.houseX1 + 2 && px < scene.houseX1 + 6 && py > scene.houseY0 + 1 && py < scene.houseY0 + 9) {
    setColour(scene, 0.3, 0.66, 0.78, 0.3);
  } else if (!dense && treeCrown(scene, 7, 0.22)) {
    paintTree(scene);
  }
  if (scene.built && inHouseShadow(scene)) scene.shade *= scene.shadowDepth;
}

/**
 * True when the lot position is in the shadow of the lot's building: walking
 * from it towards the sun (p − t·d for t up to the shadow's length) enters the
 * building's footprint. A slab test on the footprint box.
 */
function inHouseShadow(scene: Scene): boolean {
  const dx = scene.shadowX;
  const dy = scene.shadowY;
  let near = 0;
  let far = scene.houseHeight * scene.shadowLength;
  if (Math.abs(dx) < 1e-9) {
    if (scene.px < scene.houseX0 || scene.px > scene.houseX1) return false;
  } else {
    const a = (scene.px - scene.houseX1) / dx;
    const b = (scene.px - scene.houseX0) / dx;
    near = Math.max(near, Math.min(a, b));
    far = Math.min(far, Math.max(a, b));
  }
  if (Math.abs(dy) < 1e-9) {
    if (scene.py < scene.houseY0 || scene.py > scene.houseY1) return false;
  } else {
    const a = (scene.py - scene.houseY1) / dy;
    const b = (scene.py - scene.houseY0) / dy;
    near = Math.max(near, Math.min(a, b));
    far = Math.min(far, Math.max(a, b));
  }
  return near <= far;
}

/**
 * Roofs: hip roofs shade their four faces by the sun, gables their two halves,
 * flat roofs get a parapet and rooftop units, courtyard blocks a garden in the
 * middle. At night lit windows line the eaves.
 */
function paintRoof(scene: Scene): void {
  const rx = scene.px - scene.houseX0;
  const ry = scene.py - scene.houseY0;
  const w = scene.houseX1 - scene.houseX0;
  const h = scene.houseY1 - scene.houseY0;
  const mpp = scene.mpp;
  const toEdge = Math.min(rx, ry, w - rx, h - ry);
  let light = 1;
  if (scene.roofType === ROOF_HIP) {
    // The face is the one whose eave is nearest; its outward normal is lit when it opposes the shadow direction.
    const facing = toEdge === rx ? scene.shadowX : toEdge === w - rx ? -scene.shadowX : toEdge === ry ? scene.shadowY : -scene.shadowY;
    light = 1 + 0.22 * facing;
  } else if (scene.roofType === ROOF_GABLE) {
    const acrossX = w < h;
    const side = acrossX ? (rx < w / 2 ? -1 : 1) : ry < h / 2 ? -1 : 1;
    const facing = acrossX ? -side * scene.shadowX : -side * scene.shadowY;
    const ridge = Math.abs(acrossX ? rx - w / 2 : ry - h / 2) < Math.max(0.2, mpp * 0.5) ? 0.85 : 1;
    light = (1 + 0.22 * facing) * ridge;
  } else if (scene.roofType === ROOF_COURTYARD) {
    const inset = Math.min(7, Math.min(w, h) * 0.3);
    if (rx > inset && ry > inset && rx < w - inset && ry < h - inset) {
      setColour(scene, scene.grass[0] * 0.95, scene.grass[1] * 0.95, scene.grass[2] * 0.9, 0.95);
      // Walls shade the courtyard on the sun side: the point is shaded if stepping towards the sun leaves the yard.
      const reach = scene.houseHeight * scene.shadowLength;
      const sx = rx - scene.shadowX * reach;
      const sy = ry - scene.shadowY * reach;
      if (sx < inset || sy < inset || sx > w - inset || sy > h - inset) scene.shade *= scene.shadowDepth;
      return;
    }
    const innerEdge = Math.min(Math.abs(rx - inset), Math.abs(ry - inset), Math.abs(w - inset - rx), Math.abs(h - inset - ry));
    light = 1 + 0.2 * (toEdge < innerEdge ? 0.4 : -0.4) * (scene.shadowX + scene.shadowY);
  } else if (toEdge < Math.max(0.5, mpp * 0.6)) {
    light = 1.18; // the pale parapet of a flat roof
  } else {
    light = flatRoofLight(scene);
  }
  // Lighting goes into shade, applied after snow, so snowy roofs keep their sunlit and shaded faces.
  setColour(scene, scene.roofR, scene.roofG, scene.roofB, scene.roofType === ROOF_FLAT ? 0.9 : 0.97);
  scene.shade *= light;
  if (scene.lamps && scene.lit && toEdge < Math.max(0.6, mpp)) {
    // Windows: dashes along the eaves, the edge coordinate decides which pane is lit.
    const alongEdge = rx < 1 || w - rx < 1 ? ry : rx;
    if (((hash2(Math.floor(alongEdge / 2.4), scene.lotHash, 77) >>> 3) & 7) < 3) scene.glow = 0.7;
  }
}

/**
 * Light on the flat roof at the sample: big roofs may step up to an upper tier
 * that shades the roof beside it; smaller boxes for air handling sit on a 6 m
 * lattice.
 */
function flatRoofLight(scene: Scene): number {
  const rx = scene.px - scene.houseX0;
  const ry = scene.py - scene.houseY0;
  const w = scene.houseX1 - scene.houseX0;
  const h = scene.houseY1 - scene.houseY0;
  if (w > 20 && h > 20 && (scene.lotHash & 0x300) !== 0) {
    const inset = Math.min(w, h) * (0.18 + 0.1 * ((scene.lotHash >>> 12) & 3));
    if (rx > inset && ry > inset && rx < w - inset && ry < h - inset) {
      return Math.abs(Math.min(rx - inset, ry - inset, w - inset - rx, h - inset - ry)) < Math.max(0.4, scene.mpp * 0.6) ? 1.2 : 1.06;
    }
    const reach = (4 + ((scene.lotHash >>> 14) & 7)) * scene.shadowLength;
    const sx = rx - scene.shadowX * reach;
    const sy = ry - scene.shadowY * reach;
    if (sx > inset && sy > inset && sx < w - inset && sy < h - inset) return scene.shadowDepth;
  }
  if (scene.mpp > 1.2) return 1;
  // Air-handling boxes on a 6 m lattice: brighter, with darker shadows.
  const cx = Math.floor(rx / 6);
  const cy = Math.floor(ry / 6);
  if ((hash2(cx, cy, scene.lotHash) & 3) !== 0) return 1;
  const ux = rx - cx * 6 - 1.5;
  const uy = ry - cy * 6 - 1.5;
  if (ux > 0 && ux < 2.2 && uy > 0 && uy < 1.6) return 1.25;
  const sx = ux - scene.shadowX * 0.8;
  const sy = uy - scene.shadowY * 0.8;
  if (sx > 0 && sx < 2.2 && sy > 0 && sy < 1.6) return 0.7;
  return 1;
}

/** A park: lawn, scattered trees and a diagonal footpath. */
function paintPark(scene: Scene): void {
  scene.cover = COVER.openLand;
  const w = scene.innerWidth;
  const h = scene.innerHeight;
  if (Math.abs(scene.px / w - scene.py / h) * Math.min(w, h) < 1.3) {
    setColour(scene, 0.72, 0.66, 0.52, 0.9);
    return;
  }
  setColour(scene, scene.grass[0] * 1.05, scene.grass[1] * 1.05, scene.grass[2], 0.95);
  if (treeCrown(scene, 8, 0.5)) paintTree(scene);
}

/** A parking lot: rows of painted bays, most of them taken. */
function paintParkingLot(scene: Scene): void {
  setColour(scene, 0.38, 0.39, 0.41, 0.5);
  const px = scene.px;
  const py = scene.py;
  const bay = px - Math.floor(px / 2.6) * 2.6;
  const row = py - Math.floor(py / 14) * 14;
  const mpp = scene.mpp;
  if (row > 1 && row < 6.5 && bay < Math.max(0.12, mpp * 0.5)) {
    blendColour(scene, 0.85, 0.85, 0.83, clamp01(0.5 / mpp));
  } else if (row > 1.5 && row < 6 && bay > 0.5 && bay < 2.1) {
    const h = hash2(Math.floor(px / 2.6), Math.floor(py / 14), scene.seed ^ SALT_CAR);
    if ((h & 3) !== 0) {
      const c = ((h >>> 8) % (CAR_COLOURS.length / 3)) * 3;
      setColour(scene, CAR_COLOURS[c]!, CAR_COLOURS[c + 1]!, CAR_COLOURS[c + 2]!, 0.3);
    }
  }
}

/**
 * Whether the sample is under a tree crown, the crowns sitting on a jittered
 * lattice of `cell`-metre squares with a share `density` of them planted. On a
 * hit, scene.crown is the brightness there (sunny side lighter) and
 * scene.treeVariant the crown's tint variation.
 */
function treeCrown(scene: Scene, cell: number, density: number): boolean {
  const gx = scene.gx;
  const gy = scene.gy;
  const cx = Math.floor(gx / cell);
  const cy = Math.floor(gy / cell);
  const h = hash2(cx, cy, scene.seed ^ SALT_TREE);
  if (unit(h) > density) return false;
  const radius = cell * (0.3 + (0.18 * ((h >>> 24) & 15)) / 15);
  const centreX = (cx + 0.5) * cell + (((h >>> 8) & 255) / 255 - 0.5) * (cell - 2 * radius);
  const centreY = (cy + 0.5) * cell + (((h >>> 16) & 255) / 255 - 0.5) * (cell - 2 * radius);
  const dx = (gx - centreX) / radius;
  const dy = (gy - centreY) / radius;
  const d2 = dx * dx + dy * dy;
  if (d2 > 1) return false;
  scene.treeVariant = ((h >>> 4) & 15) / 15;
  // Dome shading: towards the sun is −shadow direction.
  scene.crown = 0.95 - 0.3 * (dx * scene.shadowX + dy * scene.shadowY) - 0.2 * d2;
  return true;
}

/** Paints the crown treeCrown just found. */
function paintTree(scene: Scene): void {
  const v = scene.treeVariant;
  setColour(scene, 0.17 + 0.08 * v, 0.33 + 0.07 * v, 0.15 + 0.03 * v, 0.5);
  scene.shade *= scene.crown;
}

function sampleForest(scene: Scene): void {
  if (treeCrown(scene, 6.5, 0.92)) paintTree(scene);
  else setColour(scene, 0.1, 0.18, 0.09, 0.7);
}

/**
 * Patchwork fields on a brick-bonded lattice (each row shifted), bounded by
 * verges, hedges or earth banks; crops show furrows in a per-field direction.
 */
function sampleFields(scene: Scene): void {
  const fw = scene.fieldWidth;
  const fh = scene.fieldHeight;
  const row = Math.floor(scene.gy / fh);
  if (row !== scene.fieldRow) {
    scene.fieldRow = row;
    scene.fieldShift = unit(hash2(row, 7, scene.seed ^ SALT_FIELD)) * fw;
    scene.fieldCol = NaN;
  }
  const shifted = scene.gx + scene.fieldShift;
  const col = Math.floor(shifted / fw);
  const fx = shifted - col * fw;
  const fy = scene.gy - row * fh;
  if (col !== scene.fieldCol) {
    scene.fieldCol = col;
    scene.fieldHash = hash2(col, row, scene.seed ^ SALT_FIELD);
  }
  const h = scene.fieldHash;
  const edge = scene.ancient ? 1.2 : 2;
  if (fx < edge || fy < edge) {
    if (scene.modern) setColour(scene, 0.5, 0.54, 0.36, 0.95);
    else if (scene.ancient) setColour(scene, 0.5, 0.44, 0.32, 0.9);
    else setColour(scene, 0.2, 0.33, 0.16, 0.6); // hedgerow
    return;
  }
  if (!scene.ancient && (h >>> 12) % 23 === 0 && fx < 24 && fy < 20) {
    scene.px = fx;
    scene.py = fy;
    paintFarmstead(scene, (h >>> 9) & 1);
    return;
  }
  const colour = ((h >>> 16) % (scene.fields.length / 3)) * 3;
  let r = scene.fields[colour]!;
  let g = scene.fields[colour + 1]!;
  let b = scene.fields[colour + 2]!;
  if (scene.modern && ((h >>> 4) & 15) === 0) {
    // Centre-pivot irrigation: a green disc in a dry square.
    const dx = fx - fw / 2;
    const dy = fy - fh / 2;
    const radius = Math.min(fw, fh) * 0.46;
    const irrigated = dx * dx + dy * dy < radius * radius;
    r = irrigated ? 0.36 : 0.7;
    g = irrigated ? 0.55 : 0.63;
    b = irrigated ? 0.24 : 0.45;
  }
  const period = 2.4 + ((h >>> 5) & 3) * 0.7;
  const furrowAmount = clamp01(period / scene.mpp - 1.5) * 0.08;
  if (furrowAmount > 0) {
    // A triangle wave across the furrows: soft ridges rather than hard stripes.
    const along = (h >>> 7) & 1 ? fx : fy;
    const phase = along / period - Math.floor(along / period);
    const k = 1 + furrowAmount * (Math.abs(phase - 0.5) * 4 - 1);
    r *= k;
    g *= k;
    b *= k;
  }
  setColour(scene, r, g, b, 0.97);
}

/** A farmhouse and barn at a field's corner (scene.px, scene.py from that corner), with their shadows. */
function paintFarmstead(scene: Scene, redRoofs: number): void {
  const fx = scene.px;
  const fy = scene.py;
  setColour(scene, 0.55, 0.53, 0.47, 0.9); // yard
  const inHouse = fx > 4 && fx < 14 && fy > 4 && fy < 11;
  const inBarn = fx > 15 && fx < 22 && fy > 3 && fy < 16;
  if (inHouse || inBarn) {
    const face = inHouse ? (fy < 7.5 ? scene.shadowY : -scene.shadowY) : fx < 18.5 ? scene.shadowX : -scene.shadowX;
    setColour(scene, redRoofs ? 0.62 : 0.5, redRoofs ? 0.33 : 0.48, redRoofs ? 0.26 : 0.45, 0.97);
    scene.shade *= 1 + 0.2 * face;
    return;
  }
  // Walking towards the sun from here meets a building: shadow (sampled at a few points, buildings are small).
  for (let step = 1; step <= 4; step++) {
    const t = (step / 4) * 7 * scene.shadowLength;
    const sx = fx - scene.shadowX * t;
    const sy = fy - scene.shadowY * t;
    if ((sx > 4 && sx < 14 && sy > 4 && sy < 11) || (sx > 15 && sx < 22 && sy > 3 && sy < 16)) {
      scene.shade *= scene.shadowDepth;
      return;
    }
  }
}

/** Ancient tracks: narrow bands along two level lines of a wandering noise field. */
function sampleAncientPath(scene: Scene): boolean {
  const p = scene.field[FIELD_PATH]!;
  if (Math.abs(p - 0.5) < 0.005 || Math.abs(p - 0.32) < 0.004) {
    setColour(scene, 0.63, 0.53, 0.38, 0.85);
    return true;
  }
  return false;
}

/**
 * An ancient village: round thatched huts on a loose lattice, trampled earth
 * around them, some with a fire that glows after dark. False where no hut is.
 */
function sampleVillage(scene: Scene): boolean {
  const gx = scene.gx;
  const gy = scene.gy;
  const cell = 17;
  const cx = Math.floor(gx / cell);
  const cy = Math.floor(gy / cell);
  const h = hash2(cx, cy, scene.seed ^ SALT_HUT);
  if (unit(h) > clamp01((scene.field[FIELD_TOWN]! - TOWN_EDGE - 0.05) * 1.6) * 0.6) return false;
  const radius = 2.5 + 2 * (((h >>> 24) & 15) / 15);
  const hutX = (cx + 0.5) * cell + (((h >>> 8) & 255) / 255 - 0.5) * 5;
  const hutY = (cy + 0.5) * cell + (((h >>> 16) & 255) / 255 - 0.5) * 5;
  const dx = gx - hutX;
  const dy = gy - hutY;
  const d = Math.sqrt(dx * dx + dy * dy);
  if (d < radius) {
    // Conical thatch: lit on the sun side, with rings of bundled straw when close enough to see.
    const facing = -(dx * scene.shadowX + dy * scene.shadowY) / (d + 1e-6);
    const rings = scene.mpp < 0.12 && (Math.floor(d / 0.35) & 1) === 1 ? 0.93 : 1;
    const eaves = d > radius - Math.max(0.3, scene.mpp) ? 0.6 : 1;
    setColour(scene, 0.76, 0.64, 0.42, 0.95);
    scene.shade *= (0.95 + 0.25 * facing * (d / radius)) * rings * eaves;
    return true;
  }
  // A fire a few metres from the door of some huts.
  const hasFire = scene.lamps && ((h >>> 5) & 1) === 1;
  const fireX = hutX + radius + 2;
  const fd2 = (gx - fireX) * (gx - fireX) + (gy - hutY) * (gy - hutY);
  if (d > radius + 4.5 && !(hasFire && fd2 < 16)) return false;
  setColour(scene, 0.6, 0.49, 0.35, 0.8);
  if (hasFire && fd2 < 16) scene.glow = fd2 < 0.6 ? 2.5 : (1 - fd2 / 16) * 0.8;
  // Shadow of the hut: a capsule from the hut along the shadow direction.
  const length = 3.5 * scene.shadowLength;
  const t = Math.max(0, Math.min(length, dx * scene.shadowX + dy * scene.shadowY));
  const ox = dx - t * scene.shadowX;
  const oy = dy - t * scene.shadowY;
  if (ox * ox + oy * oy < radius * radius) scene.shade *= scene.shadowDepth;
  return true;
}

// ---------------------------------------------------------------------------
// Raster: camera projection, sky, grading
// ---------------------------------------------------------------------------

// Indexes of the smooth fields: slowly varying values that decide what is where.
const FIELD_TERRAIN = 0; // picks the land cover among the climate's shares
const FIELD_RIVER = 1; // metres from the nearest great river's centre line, meandering
const FIELD_TOWN = 2; // how built-up (see townAt)
const FIELD_MOTTLE = 3; // gentle light/dark variation of natural ground
const FIELD_PATH = 4; // ancient footpaths follow level lines
const FIELD_WARP_X = 5; // historical streets wander by this many metres
const FIELD_WARP_Y = 6;
const FIELD_WATER = 7; // share of open water around, with a wandering shore: above 0.5 is sea or lake
const FIELD_COUNT = 8;

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
 * Where a frame row lands on the ground: grid position of pixel x is
 * (originX + x·stepX, originY + x·stepY), linear along the row for every view.
 */
class RowProjection {
  metresPerPixel = 0;
  originX = 0;
  originY = 0;
  stepX = 0;
  stepY = 0;
  haze = 0;
  /** Metres ahead of the camera's point, along the view. */
  ahead = 0;
  /** Result of screenOf. */
  screenX = 0;
  screenY = 0;
  private readonly base: number;
  private readonly horizonRow: number;
  private readonly rightX: number;
  private readonly rightY: number;
  private readonly forwardX: number;
  private readonly forwardY: number;

  constructor(
    private readonly frame: FrameSize,
    private readonly look: Look,
    private readonly layout: Layout,
  ) {
    this.base = look.metresAcross / Math.min(frame.width, frame.height);
    this.horizonRow = look.perspective ? look.view.horizon * frame.height : -Infinity;
    const heading = look.bearing - layout.gridAngle;
    this.rightX = Math.cos(heading);
    this.rightY = -Math.sin(heading);
    this.forwardX = Math.sin(heading);
    this.forwardY = Math.cos(heading);
  }

  /** Top views are orthographic; oblique views shrink the ground towards the horizon like a pinhole camera. */
  at(y: number): void {
    const { width, height } = this.frame;
    const base = this.base;
    let mpp = base;
    // Metres ahead of the frame centre (negative: behind it, towards the bottom edge).
    let ahead = (height / 2 - y - 0.5) * base;
    let haze = 0;
    if (this.look.perspective) {
      const t = Math.max(1e-4, (y + 0.5 - this.horizonRow) / (height - this.horizonRow));
      mpp = base / t;
      ahead = -(height / 2) * base + base * (height - this.horizonRow) * this.look.view.foreshorten * (1 / t - 1);
      // Capped so the most distant land still shows through faintly instead of becoming a wall of fog.
      haze = 0.93 * (1 - Math.exp(-(ahead + (height / 2) * base) / this.look.hazeReach));
    }
    this.metresPerPixel = mpp;
    this.haze = haze;
    this.ahead = ahead;
    this.originX = this.layout.cameraX + this.forwardX * ahead - this.rightX * (width / 2) * mpp;
    this.originY = this.layout.cameraY + this.forwardY * ahead - this.rightY * (width / 2) * mpp;
    this.stepX = this.rightX * mpp;
    this.stepY = this.rightY * mpp;
  }

  /** Row y as a line on the ground in metres east and north of the request's point (for the geography). */
  ground(y: number): GroundLine {
    this.at(y);
    const angle = this.layout.gridAngle;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    const dx = this.originX - this.layout.cameraX;
    const dy = this.originY - this.layout.cameraY;
    return {
      originEast: dx * cos + dy * sin,
      originNorth: -dx * sin + dy * cos,
      stepEast: this.stepX * cos + this.stepY * sin,
      stepNorth: -this.stepX * sin + this.stepY * cos,
      ahead: this.ahead,
    };
  }

  /** The screen position of grid point (gx, gy), into screenX and screenY; ground behind the camera lands below the frame. */
  screenOf(gx: number, gy: number): void {
    const { width, height } = this.frame;
    const dx = gx - this.layout.cameraX;
    const dy = gy - this.layout.cameraY;
    const ahead = dx * this.forwardX + dy * this.forwardY;
    const lateral = dx * this.rightX + dy * this.rightY;
    const base = this.base;
    if (!this.look.perspective) {
      this.screenY = height / 2 - 0.5 - ahead / base;
      this.screenX = width / 2 + lateral / base;
      return;
    }
    const inverse = 1 + (ahead + (height / 2) * base) / (base * (height - this.horizonRow) * this.look.view.foreshorten);
    const t = inverse > 1e-4 ? 1 / inverse : 1e4;
    this.screenY = t * (height - this.horizonRow) + this.horizonRow - 0.5;
    this.screenX = width / 2 + (lateral * t) / base;
  }
}

/**
 * The smooth fields are exact only on a sparse grid of knots (every `stride`
 * pixels both ways) and linear in between: they vary over tens of pixels or
 * more, and evaluating noise at every pixel of a UHD frame would cost more than
 * all the rest of the drawing.
 */
class SmoothFields {
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
function loadKnot(here: Float64Array, slope: Float64Array, knots: Float32Array, a: number, perStride: number): void {
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
function advanceFields(here: Float64Array, slope: Float64Array): void {
  here[0] += slope[0]!;
  here[1] += slope[1]!;
  here[2] += slope[2]!;
  here[3] += slope[3]!;
  here[4] += slope[4]!;
  here[5] += slope[5]!;
  here[6] += slope[6]!;
  here[7] += slope[7]!;
}

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
function paintScene(frame: RenderedFrame, look: Look, layout: Layout, world: Atlas, grainSeed: number): FrameGeography {
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
 * Where the request's point lies on screen: the frame's centre from the top,
 * lower down for oblique views (the ground ahead fills the upper part).
 */
function subjectOnScreen(frame: FrameSize, look: Look): { x: number; y: number } {
  if (!look.perspective) return { x: frame.width / 2, y: frame.height / 2 };
  const { horizon, foreshorten } = look.view;
  const horizonRow = horizon * frame.height;
  const t = 1 / (1 + frame.height / 2 / ((frame.height - horizonRow) * foreshorten));
  return { x: frame.width / 2, y: t * (frame.height - horizonRow) + horizonRow - 0.5 };
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

/**
 * The sky band above the horizon for oblique views: a gradient from zenith to
 * horizon, clouds, the low sun's glow, stars at night, and a strip of distant
 * hills so the ground does not just end.
 */
class SkyPainter {
  private readonly ridge: Float32Array;
  private readonly clouds: Float32Array;
  private readonly sunX: number;
  private readonly sunY: number;
  private readonly sunRadius: number;

  constructor(
    private readonly frame: Frame,
    private readonly look: Look,
    private readonly seed: number,
    private readonly horizonRow: number,
  ) {
    const { width, height } = frame;
    this.ridge = new Float32Array(width);
    const band = height * 0.035;
    for (let x = 0; x < width; x++) {
      const broad = valueNoise(x / (width * 0.09), 0.5, seed ^ SALT_TERRAIN);
      const n = broad * 0.7 + valueNoise(x / (width * 0.025), 3.5, seed ^ SALT_TERRAIN) * 0.3;
      this.ridge[x] = horizonRow - band * (0.15 + 0.85 * n);
    }
    this.clouds = new Float32Array(width);
    // The sun sits on the horizon where its azimuth falls within a 90° field of view.
    let offset = look.sunAzimuth - look.bearing;
    offset = Math.atan2(Math.sin(offset), Math.cos(offset));
    this.sunX = width / 2 + (offset / (Math.PI / 4)) * (width / 2);
    this.sunY = horizonRow - height * 0.04;
    this.sunRadius = width * 0.16;
  }

  paintRow(y: number, vignette: Float32Array, rowVignette: number, grainSeed: number): void {
    const { width, rgb } = this.frame;
    const look = this.look;
    const s = Math.pow(Math.max(0, y / this.horizonRow), 0.7);
    const baseR = look.skyTop[0] + (look.skyHorizon[0] - look.skyTop[0]) * s;
    const baseG = look.skyTop[1] + (look.skyHorizon[1] - look.skyTop[1]) * s;
    const baseB = look.skyTop[2] + (look.skyHorizon[2] - look.skyTop[2]) * s;
    this.fillCloudRow(y);
    const threshold = 1 - look.skyClouds;
    const [cloudR, cloudG, cloudB] = look.cloudColour;
    const [hillR, hillG, hillB] = look.hills;
    let i = y * width * 3;
    for (let x = 0; x < width; x++, i += 3) {
      let r = baseR;
      let g = baseG;
      let b = baseB;
      if (look.sunGlow > 0) {
        const dx = (x - this.sunX) / this.sunRadius;
        const dy = (y - this.sunY) / (this.sunRadius * 0.6);
        const glow = look.sunGlow / (1 + 4 * (dx * dx + dy * dy));
        r += (1 - r) * glow;
        g += (0.78 - g) * glow;
        b += (0.45 - b) * glow;
      }
      if (look.stars && (mix32(this.seed + y * 7919 + x * 104729) & 4095) < 3) {
        r = g = b = 0.75;
      }
      const cover = smoothstep(threshold - 0.08, threshold + 0.2, this.clouds[x]!);
      if (cover > 0) {
        // Cloud bases are darker than their tops.
        const underside = 0.85 + 0.15 * (1 - s);
        r += (cloudR * underside - r) * cover;
        g += (cloudG * underside - g) * cover;
        b += (cloudB * underside - b) * cover;
      }
      const ridge = this.ridge[x]!;
      if (y > ridge) {
        // Far hills, mostly lost in the haze, and more so at their feet.
        const k = 0.5 - 0.25 * ((y - ridge) / (this.horizonRow - ridge + 1));
        r = look.haze[0] + (hillR - look.haze[0]) * k;
        g = look.haze[1] + (hillG - look.haze[1]) * k;
        b = look.haze[2] + (hillB - look.haze[2]) * k;
      }
      const shade = 255 * vignette[x]! * rowVignette;
      const grain = ((mix32(grainSeed + y * width + x) & 7) - 3.5) * look.grain;
      rgb[i] = r * shade + grain;
      rgb[i + 1] = g * shade + grain;
      rgb[i + 2] = b * shade + grain;
    }
  }

  /** Cloud density along a sky row, stretched horizontally; sparse knots, linear between. */
  private fillCloudRow(y: number): void {
    const { width } = this.frame;
    const stride = 8;
    const v = y / (this.horizonRow * 0.35);
    let previous = 0;
    for (let x = 0; x <= width + stride; x += stride) {
      const u = x / (width * 0.22);
      const n = valueNoise(u, v, this.seed ^ SALT_MOTTLE) * 0.6 + valueNoise(u * 2.7, v * 2.7, this.seed ^ SALT_RIVER) * 0.4;
      if (x > 0) {
        for (let j = 0; j < stride && x - stride + j < width; j++) {
          this.clouds[x - stride + j] = previous + ((n - previous) * j) / stride;
        }
      }
      previous = n;
    }
  }
}

// ---------------------------------------------------------------------------
// Screen-space weather overlays
// ---------------------------------------------------------------------------

/**
 * Low clouds drifting between camera and ground, with their shadows offset on
 * the ground below. Density is computed on a coarse grid and interpolated.
 */
function paintCloudLayer(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const shortSide = Math.min(width, height);
  const shadowDX = Math.round(shortSide * 0.05);
  const shadowDY = Math.round(shortSide * 0.035);
  const density = new CoarseField(width + shadowDX, height + shadowDY, 8, shortSide * 0.4, Math.floor(random() * 1e9));
  const cloudRow = new Float32Array(width + shadowDX + 1);
  const shadowRow = new Float32Array(width + shadowDX + 1);
  const [cloudR, cloudG, cloudB] = look.cloudColour;
  const low = 0.6 - 0.08 * look.cloudLayer;
  const horizon = look.perspective ? Math.max(0, look.view.horizon * height) : 0;
  for (let y = Math.ceil(horizon); y < height; y++) {
    // Clouds thin out towards the horizon, where they would be tiny and hazy.
    const fade = horizon > 0 ? clamp01((y - horizon) / (height * 0.25)) : 1;
    density.fillRow(y, cloudRow);
    density.fillRow(y + shadowDY, shadowRow);
    let p = y * width * 3;
    for (let x = 0; x < width; x++, p += 3) {
      const thickness = cloudRow[x]!;
      const shadowThickness = shadowRow[x + shadowDX]!;
      if (thickness <= low && shadowThickness <= low) continue; // clear sky: most pixels
      const shadow = smoothstep(low, low + 0.2, shadowThickness) * 0.3 * fade;
      const cover = smoothstep(low, low + 0.2, thickness) * 0.8 * fade;
      // Thick cloud is brighter than its thin, grey fringes.
      const bright = 255 * (0.88 + 0.3 * (thickness - low));
      const keep = 1 - shadow;
      rgb[p] = rgb[p]! * keep + (cloudR * bright - rgb[p]! * keep) * cover;
      rgb[p + 1] = rgb[p + 1]! * keep + (cloudG * bright - rgb[p + 1]! * keep) * cover;
      rgb[p + 2] = rgb[p + 2]! * keep + (cloudB * bright - rgb[p + 2]! * keep) * cover;
    }
  }
}

/** Cloud noise sampled every `step` pixels over a width×height area, read back a row at a time. */
class CoarseField {
  private readonly cols: number;
  private readonly rows: number;
  private readonly grid: Float32Array;

  constructor(
    private readonly width: number,
    height: number,
    private readonly step: number,
    scale: number,
    seed: number,
  ) {
    this.cols = Math.ceil(width / step) + 2;
    this.rows = Math.ceil(height / step) + 2;
    this.grid = new Float32Array(this.cols * this.rows);
    for (let j = 0; j < this.rows; j++) {
      for (let i = 0; i < this.cols; i++) this.grid[j * this.cols + i] = cloudNoise((i * step) / scale, (j * step) / scale, seed);
    }
  }

  /** Bilinear values along pixel row y into out[0 … width]. */
  fillRow(y: number, out: Float32Array): void {
    const { cols, step, grid } = this;
    const gy = Math.min(this.rows - 1.001, y / step);
    const j = Math.floor(gy);
    const fy = gy - j;
    for (let i = 0; i + 1 < cols; i++) {
      const left = grid[j * cols + i]! + (grid[(j + 1) * cols + i]! - grid[j * cols + i]!) * fy;
      const right = grid[j * cols + i + 1]! + (grid[(j + 1) * cols + i + 1]! - grid[j * cols + i + 1]!) * fy;
      const x0 = i * step;
      for (let k = 0; k < step && x0 + k <= this.width && x0 + k < out.length; k++) out[x0 + k] = left + ((right - left) * k) / step;
    }
  }
}

/** Billowy density: octaves on rotated lattices so the square grid of value noise does not show. */
function cloudNoise(x: number, y: number, seed: number): number {
  return (
    valueNoise(x, y, seed) * 0.5 +
    valueNoise(x * 1.7 + y * 1.3, y * 1.7 - x * 1.3, seed + 1) * 0.28 +
    valueNoise(x * 2.9 - y * 3.9, y * 2.9 + x * 3.9, seed + 2) * 0.14 +
    valueNoise(x * 9.6 + y * 2.8, y * 9.6 - x * 2.8, seed + 3) * 0.08
  );
}

/** Slanted translucent streaks, roughly one per 700 pixels. */
function paintRain(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const scale = Math.min(width, height) / 720;
  const count = Math.round((width * height) / 700);
  const brightness = look.glow >= 1 ? 0.45 : 0.85;
  const thickness = Math.max(1, Math.round(scale));
  for (let n = 0; n < count; n++) {
    const x0 = random() * width;
    const y0 = random() * height;
    const length = (12 + 18 * random()) * scale;
    const alpha = 0.12 + 0.16 * random();
    const colour = 255 * brightness * (0.9 + 0.1 * random());
    for (let k = 0; k < length; k++) {
      const y = Math.floor(y0 + k);
      if (y >= height) break;
      const x = Math.floor(x0 + k * 0.2);
      for (let t = 0; t < thickness; t++) {
        if (x + t >= width) break;
        blendPixel(rgb, (y * width + x + t) * 3, colour, colour, colour * 1.05, alpha);
      }
    }
  }
}

/** Soft white discs of a few sizes; bigger flakes are rarer. */
function paintSnowfall(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const scale = Math.min(width, height) / 720;
  const count = Math.round((width * height) / 1100);
  const brightness = look.glow >= 1 ? 150 : 250;
  for (let n = 0; n < count; n++) {
    const cx = random() * width;
    const cy = random() * height;
    const radius = (0.7 + 2.2 * random() ** 3) * scale;
    const alpha = 0.55 + 0.4 * random();
    const reach = Math.ceil(radius + 1);
    for (let y = Math.max(0, Math.floor(cy - reach)); y <= Math.min(height - 1, cy + reach); y++) {
      for (let x = Math.max(0, Math.floor(cx - reach)); x <= Math.min(width - 1, cx + reach); x++) {
        const d = distance(x + 0.5 - cx, y + 0.5 - cy);
        const coverage = clamp01(radius + 0.5 - d);
        if (coverage > 0) blendPixel(rgb, (y * width + x) * 3, brightness, brightness, brightness + 5, alpha * coverage);
      }
    }
  }
}

