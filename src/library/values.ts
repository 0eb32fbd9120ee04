// The values of each scene setting at run time, from the one vocabulary
// (src/scene/vocabulary.ts): for a program's own menus, checks and tests. Each
// list is a frozen copy, so that nothing a caller does changes what the client
// sends or accepts.
import { SCENE_FIELDS } from '../scene/vocabulary.js';

function frozen<T extends readonly string[]>(values: T): T {
  return Object.freeze([...values]) as unknown as T;
}

/** 'HD', 'FHD', 'UHD': the resolutions, in the spec's order. */
export const RESOLUTIONS = frozen(SCENE_FIELDS.resolution.values);
/** 'ExtraLow' … 'ExtraHigh': how close the camera is. */
export const ZOOMS = frozen(SCENE_FIELDS.zoom.values);
/** 'North', 'NorthEast' … 'NorthWest': the compass direction the camera faces. */
export const BEARINGS = frozen(SCENE_FIELDS.bearing.values);
/** 'Low', 'Medium', 'High', 'Top': the camera angle from the ground. */
export const ANGLES = frozen(SCENE_FIELDS.angle.values);
/** 'Sunny', 'Rainy', 'Cloudy', 'GoldenHour', 'Snow'. */
export const WEATHERS = frozen(SCENE_FIELDS.weather.values);
/** 'Dusk', 'Day', 'Dawn', 'Night'. */
export const DAYTIMES = frozen(SCENE_FIELDS.daytime.values);
/** 'Square', 'Landscape', 'Portrait', 'Standard'. */
export const ASPECT_RATIOS = frozen(SCENE_FIELDS.aspectRatio.values);
/** 'Nowadays', 'Historical', 'Ancient'. */
export const EPOCHS = frozen(SCENE_FIELDS.epoch.values);

/** What a request's scene settings are when left out: { resolution: 'FHD', zoom: 'Medium', … }. */
export const SCENE_DEFAULTS = Object.freeze({
  resolution: SCENE_FIELDS.resolution.default,
  zoom: SCENE_FIELDS.zoom.default,
  bearing: SCENE_FIELDS.bearing.default,
  angle: SCENE_FIELDS.angle.default,
  weather: SCENE_FIELDS.weather.default,
  daytime: SCENE_FIELDS.daytime.default,
  aspectRatio: SCENE_FIELDS.aspectRatio.default,
  epoch: SCENE_FIELDS.epoch.default,
});

/** The most tags a request may have. */
export const MAX_TAGS: number = SCENE_FIELDS.tag.max;
