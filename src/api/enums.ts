// The enum fields of GenerationRequest, as the spec spells their values on the
// wire: named views of the scene vocabulary (../scene/vocabulary.ts), which
// holds the values, and what the sandbox and the metadata make of them
// (compass degrees, prices, image sizes). Kept light: the sandbox reads it.
import { ENUM_FIELDS, SCENE_FIELDS, type EnumField, type EnumValue } from '../scene/vocabulary.js';

export { flagName, parseSceneEnum, type EnumParse } from '../scene/vocabulary.js';

export const RESOLUTIONS = SCENE_FIELDS.resolution.values;
export const ASPECT_RATIOS = SCENE_FIELDS.aspectRatio.values;

export type Resolution = EnumValue<'resolution'>;
export type Zoom = EnumValue<'zoom'>;
export type Bearing = EnumValue<'bearing'>;
export type Angle = EnumValue<'angle'>;
export type Weather = EnumValue<'weather'>;
export type Daytime = EnumValue<'daytime'>;
export type AspectRatio = EnumValue<'aspectRatio'>;
export type Epoch = EnumValue<'epoch'>;

export type SceneEnumField = EnumField;
export const SCENE_ENUM_FIELDS = ENUM_FIELDS;

/** The values of each enum field, keyed by its wire name. */
export const SCENE_ENUMS = Object.fromEntries(ENUM_FIELDS.map((field) => [field, SCENE_FIELDS[field].values])) as {
  readonly [F in EnumField]: (typeof SCENE_FIELDS)[F]['values'];
};

/** What the CLI sends when neither a flag nor the config names a value. */
export const SCENE_DEFAULTS = Object.fromEntries(ENUM_FIELDS.map((field) => [field, SCENE_FIELDS[field].default])) as {
  readonly [F in EnumField]: (typeof SCENE_FIELDS)[F]['default'];
};

/** The abbreviated compass points the spec's introductory sample uses. */
export const BEARING_ABBREVIATIONS: Readonly<Record<string, Bearing>> = SCENE_FIELDS.bearing.aliases;

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
