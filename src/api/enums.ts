// The scene vocabulary of GenAerial v1, exactly as the spec spells it on the wire.
// Kept light: `--help`, completions and the sandbox all read it.
import { nearest } from '../suggest.js';

export const RESOLUTIONS = ['HD', 'FHD', 'UHD'] as const;
export const ZOOMS = ['ExtraLow', 'Low', 'Medium', 'High', 'ExtraHigh'] as const;
export const BEARINGS = [
  'North',
  'NorthEast',
  'East',
  'SouthEast',
  'South',
  'SouthWest',
  'West',
  'NorthWest',
] as const;
export const ANGLES = ['Low', 'Medium', 'High', 'Top'] as const;
export const WEATHERS = ['Sunny', 'Rainy', 'Cloudy', 'GoldenHour', 'Snow'] as const;
export const DAYTIMES = ['Dusk', 'Day', 'Dawn', 'Night'] as const;
export const ASPECT_RATIOS = ['Square', 'Landscape', 'Portrait', 'Standard'] as const;
export const EPOCHS = ['Nowadays', 'Historical', 'Ancient'] as const;

export type Resolution = (typeof RESOLUTIONS)[number];
export type Zoom = (typeof ZOOMS)[number];
export type Bearing = (typeof BEARINGS)[number];
export type Angle = (typeof ANGLES)[number];
export type Weather = (typeof WEATHERS)[number];
export type Daytime = (typeof DAYTIMES)[number];
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
export type Epoch = (typeof EPOCHS)[number];

/** The enum-valued fields of a generation request, keyed by their wire name. */
export const SCENE_ENUMS = {
  resolution: RESOLUTIONS,
  zoom: ZOOMS,
  bearing: BEARINGS,
  angle: ANGLES,
  weather: WEATHERS,
  daytime: DAYTIMES,
  aspectRatio: ASPECT_RATIOS,
  epoch: EPOCHS,
} as const;

export type SceneEnumField = keyof typeof SCENE_ENUMS;
export const SCENE_ENUM_FIELDS = Object.keys(SCENE_ENUMS) as SceneEnumField[];

/** The abbreviated compass points the spec's introductory sample uses. */
export const BEARING_ABBREVIATIONS: Readonly<Record<string, Bearing>> = {
  N: 'North',
  NE: 'NorthEast',
  E: 'East',
  SE: 'SouthEast',
  S: 'South',
  SW: 'SouthWest',
  W: 'West',
  NW: 'NorthWest',
};

/** Compass bearing in degrees clockwise from north (EXIF GPSImgDirection, the sandbox's compass marker). */
export const BEARING_DEGREES: Readonly<Record<Bearing, number>> = {
  North: 0,
  NorthEast: 45,
  East: 90,
  SouthEast: 135,
  South: 180,
  SouthWest: 225,
  West: 270,
  NorthWest: 315,
};

/** What the CLI sends when neither a flag nor the config names a value. */
export const SCENE_DEFAULTS = {
  resolution: 'FHD',
  zoom: 'Medium',
  bearing: 'North',
  angle: 'High',
  weather: 'Sunny',
  daytime: 'Day',
  aspectRatio: 'Landscape',
  epoch: 'Nowadays',
} as const satisfies { [K in SceneEnumField]: (typeof SCENE_ENUMS)[K][number] };

/** Credits the sandbox charges per image; the real service's prices are not published. */
export const SANDBOX_PRICE: Readonly<Record<Resolution, number>> = { HD: 1, FHD: 2, UHD: 4 };

/** Pixel size of a generated image: the resolution sets the short side, the aspect ratio the shape. */
export function imageDimensions(resolution: Resolution, aspectRatio: AspectRatio): { width: number; height: number } {
  const shortSide = { HD: 720, FHD: 1080, UHD: 2160 }[resolution];
  switch (aspectRatio) {
    case 'Square':
      return { width: shortSide, height: shortSide };
    case 'Landscape':
      return { width: (shortSide * 16) / 9, height: shortSide };
    case 'Portrait':
      return { width: shortSide, height: (shortSide * 16) / 9 };
    case 'Standard':
      return { width: (shortSide * 4) / 3, height: shortSide };
  }
}

/** Kebab-case flag name of a wire field (aspectRatio → aspect-ratio). */
export function flagName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export type EnumParse<T extends string> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Maps user input to the documented wire form of an enum field: case-insensitive,
 * separators ignored (north-east, NORTH_EAST), bearings also as N/NE/…; the failure
 * message names the flag, lists the allowed values and suggests the nearest one.
 */
export function parseSceneEnum<F extends SceneEnumField>(
  field: F,
  input: string,
  flag = `--${flagName(field)}`,
): EnumParse<(typeof SCENE_ENUMS)[F][number]> {
  const allowed = SCENE_ENUMS[field] as readonly string[];
  const squashed = input.trim().replace(/[\s_-]/g, '').toLowerCase();
  const match = allowed.find((value) => value.toLowerCase() === squashed);
  if (match) return { ok: true, value: match as (typeof SCENE_ENUMS)[F][number] };
  if (field === 'bearing') {
    const abbreviated = BEARING_ABBREVIATIONS[input.trim().toUpperCase()];
    if (abbreviated) return { ok: true, value: abbreviated as (typeof SCENE_ENUMS)[F][number] };
  }
  const suggestion = nearest(squashed, allowed);
  const hint = suggestion ? ` (did you mean ${suggestion}?)` : '';
  return {
    ok: false,
    message: `${flag} must be one of ${allowed.join(', ')}; got '${input}'${hint}`,
  };
}
