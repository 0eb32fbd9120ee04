// The climate model behind the sandbox's land cover. No climate or land-cover
// dataset ships in an npm package, so this is an approximation, made once at
// build time for each 0.5° cell from its latitude, how far it lies from the
// sea (measured on Natural Earth's land), and two small hand-made tables:
// the world's great deserts and its highest mountains, as soft ellipses.
// docs/sandbox.md says what this gets right and what it does not.

/** What a climate cell holds, each as a share from 0 to 1 (stored as bytes). */
export const CLIMATE_CHANNELS = ['ice', 'sand', 'rock', 'tundra', 'forest', 'dry'] as const;
export type ClimateChannel = (typeof CLIMATE_CHANNELS)[number];
export type Climate = Record<ClimateChannel, number>;

interface Region {
  name: string;
  lng: number;
  lat: number;
  /** Half-axes in degrees, before rotation. */
  rx: number;
  ry: number;
  /** Counter-clockwise rotation of the ellipse, degrees. */
  rotation?: number;
  /** 1: sand sea, or snow-capped range; less: semi-arid land, or lower mountains. */
  strength: number;
}

/** Deserts and dry steppes, approximately: where they lie and how arid (sand seas near 1, steppe about 0.5). */
export const DESERTS: readonly Region[] = [
  { name: 'Sahara', lng: 10, lat: 23, rx: 26, ry: 7.5, strength: 1 },
  { name: 'Arabian', lng: 47, lat: 22.5, rx: 10, ry: 7, rotation: -25, strength: 1 },
  { name: 'Syrian', lng: 41, lat: 31.5, rx: 6, ry: 3.5, strength: 0.8 },
  { name: 'Iranian', lng: 57, lat: 32, rx: 5.5, ry: 4, strength: 0.85 },
  { name: 'Thar', lng: 71, lat: 27, rx: 3.5, ry: 3, strength: 0.8 },
  { name: 'Karakum and Kyzylkum', lng: 61, lat: 41, rx: 7, ry: 4, strength: 0.85 },
  { name: 'Taklamakan', lng: 83, lat: 39, rx: 7, ry: 2.5, strength: 1 },
  { name: 'Gobi', lng: 104, lat: 42.5, rx: 12, ry: 4, strength: 0.8 },
  { name: 'Australian interior', lng: 132, lat: -25.5, rx: 14, ry: 7, strength: 0.9 },
  { name: 'Kalahari and Namib', lng: 19, lat: -24, rx: 6, ry: 6, strength: 0.85 },
  { name: 'Atacama', lng: -70, lat: -23, rx: 1.6, ry: 6, strength: 1 },
  { name: 'Sonoran and Mojave', lng: -113, lat: 33, rx: 5, ry: 4, rotation: -30, strength: 0.85 },
  { name: 'Chihuahuan', lng: -105, lat: 29, rx: 3.5, ry: 4, strength: 0.7 },
  { name: 'Great Basin', lng: -116, lat: 40, rx: 4, ry: 3, strength: 0.6 },
  { name: 'Horn of Africa', lng: 45, lat: 8, rx: 5, ry: 4, strength: 0.65 },
  { name: 'Patagonian steppe', lng: -69, lat: -45, rx: 2.5, ry: 5, strength: 0.5 },
  { name: 'Sahel', lng: 5, lat: 14.5, rx: 26, ry: 2.5, strength: 0.55 },
  { name: 'Great Plains', lng: -102, lat: 40, rx: 4.5, ry: 9, strength: 0.45 },
  { name: 'Kazakh steppe', lng: 68, lat: 48, rx: 14, ry: 4, strength: 0.5 },
  { name: 'Mongolian steppe', lng: 105, lat: 47, rx: 12, ry: 3, strength: 0.5 },
  { name: 'Pontic–Caspian steppe', lng: 45, lat: 47, rx: 8, ry: 3, strength: 0.35 },
  { name: 'Gran Chaco and dry Pampas', lng: -63, lat: -29, rx: 4, ry: 6, strength: 0.35 },
];

/** The highest ranges and plateaus, approximately: rock, and snow in their cores (1: the highest). */
export const MOUNTAINS: readonly Region[] = [
  { name: 'Himalaya', lng: 84.5, lat: 29, rx: 10, ry: 1.6, rotation: -18, strength: 1 },
  { name: 'Karakoram and Hindu Kush', lng: 73, lat: 35.8, rx: 5, ry: 1.5, rotation: 10, strength: 1 },
  { name: 'Tibetan Plateau', lng: 88, lat: 33, rx: 11, ry: 4, strength: 0.6 },
  { name: 'Pamir and Tian Shan', lng: 78, lat: 41.5, rx: 8, ry: 1.8, strength: 0.7 },
  { name: 'Alps', lng: 10, lat: 46.3, rx: 4, ry: 0.9, rotation: 10, strength: 0.7 },
  { name: 'Caucasus', lng: 44, lat: 42.8, rx: 4, ry: 0.7, rotation: -20, strength: 0.6 },
  { name: 'Northern Andes', lng: -76.5, lat: 1, rx: 1.2, ry: 7, rotation: 20, strength: 0.6 },
  { name: 'Central Andes', lng: -68.5, lat: -18, rx: 2.5, ry: 8, rotation: 15, strength: 0.8 },
  { name: 'Southern Andes', lng: -70.5, lat: -35, rx: 0.9, ry: 7, strength: 0.8 },
  { name: 'Rocky Mountains', lng: -110, lat: 44, rx: 2.5, ry: 9, rotation: 25, strength: 0.55 },
  { name: 'Alaska Range and Saint Elias', lng: -145, lat: 61.5, rx: 6, ry: 1.2, rotation: -10, strength: 0.8 },
];

/** 1 at the centre of the ellipse, falling smoothly to 0 at 1.25 times its size. */
function regionWeight(region: Region, lng: number, lat: number): number {
  let dx = lng - region.lng;
  if (dx > 180) dx -= 360;
  if (dx < -180) dx += 360;
  const dy = lat - region.lat;
  const angle = ((region.rotation ?? 0) * Math.PI) / 180;
  const u = (dx * Math.cos(angle) + dy * Math.sin(angle)) / region.rx;
  const v = (-dx * Math.sin(angle) + dy * Math.cos(angle)) / region.ry;
  const r = Math.sqrt(u * u + v * v);
  return region.strength * (1 - smoothstep(0.6, 1.25, r));
}

function strongest(regions: readonly Region[], lng: number, lat: number): number {
  let best = 0;
  for (const region of regions) best = Math.max(best, regionWeight(region, lng, lat));
  return best;
}

function smoothstep(edge0: number, edge1: number, value: number): number {
  const t = Math.min(1, Math.max(0, (value - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

/** Piecewise-linear through (latitude, value) anchors. */
function byLatitude(anchors: readonly (readonly [number, number])[], lat: number): number {
  if (lat <= anchors[0]![0]) return anchors[0]![1];
  for (let i = 1; i < anchors.length; i++) {
    const [x1, y1] = anchors[i]!;
    const [x0, y0] = anchors[i - 1]!;
    if (lat <= x1) return y0 + ((y1 - y0) * (lat - x0)) / (x1 - x0);
  }
  return anchors.at(-1)![1];
}

/** Forest cover of humid land: rainforest at the equator, savanna, temperate mixed land, taiga. */
const FOREST_BY_LATITUDE = [
  [-56, 0.45],
  [-40, 0.45],
  [-28, 0.3],
  [-18, 0.3],
  [-9, 0.85],
  [9, 0.85],
  [16, 0.3],
  [30, 0.35],
  [40, 0.4],
  [50, 0.5],
  [56, 0.75],
  [64, 0.7],
  [70, 0.1],
] as const;

/**
 * The climate of land at (lng, lat), given how far it lies from the sea.
 * Water cells are given the climate of the land around them (that is what
 * their shores look like), so this is asked for land only.
 */
export function climateAt(lng: number, lat: number, seaKm: number): Climate {
  const desert = strongest(DESERTS, lng, lat);
  const mountain = strongest(MOUNTAINS, lng, lat);
  // Ice: Antarctica; Greenland's ice sheet away from its coast; the high Arctic; the cores of the highest ranges.
  let ice = 0;
  if (lat < -60) ice = 0.97;
  else if (lat > 59 && lat < 84 && lng > -74 && lng < -11) ice = smoothstep(15, 80, seaKm) * 0.97;
  if (lat > 76) ice = Math.max(ice, 0.35 + 0.6 * smoothstep(5, 60, seaKm) * smoothstep(76, 80, lat));
  ice = Math.max(ice, 0.75 * smoothstep(0.55, 1, mountain));
  const tundra = (1 - ice) * smoothstep(61, 68, lat) * (1 - smoothstep(76, 82, lat));
  const rock = (1 - ice) * Math.min(0.85, mountain * 0.9);
  const sand = (1 - ice) * smoothstep(0.55, 0.95, desert) * (1 - rock);
  const dry = desert;
  const forest = (1 - ice) * (1 - tundra) * (1 - rock) * (1 - dry) * byLatitude(FOREST_BY_LATITUDE, lat);
  return { ice, sand, rock, tundra, forest, dry };
}
