// The look: what zoom, angle, bearing, weather, daytime and epoch do to the
// picture, as numbers (how far the frame spans, where the horizon is, how long
// shadows are) and colour matrices (light, tint, saturation, sepia, contrast).
import { BEARING_DEGREES, type Angle, type Daytime, type Weather, type Zoom } from '../../api/enums.js';
import type { GenerationRequest } from '../../api/schema.js';
import type { Rgb } from './overlays.js';

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

export interface Look {
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

export function describeLook(request: GenerationRequest): Look {
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
