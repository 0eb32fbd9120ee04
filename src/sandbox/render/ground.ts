// What lies at a point of the ground, the sampler's entry: roads, water, the
// town's blocks or an ancient village, beaches and river banks, and otherwise
// the land the climate makes (countryside.ts).
import { RIVER_HALF_WIDTH } from '../world/frame-geography.js';
import { sampleAncientPath, sampleLand, sampleVillage } from './countryside.js';
import { COVER } from './frame.js';
import { TOWN_EDGE } from './layout.js';
import { clamp01 } from './noise.js';
import { FIELD_MOTTLE, FIELD_RIVER, FIELD_TERRAIN, FIELD_TOWN, FIELD_WATER, setColour, type Scene } from './scene.js';
import { locateInGrid, sampleRoad } from './streets.js';
import { sampleBlock } from './town-blocks.js';

/**
 * Samples the world at (scene.gx, scene.gy), with scene.field holding the smooth
 * fields there; features much smaller than scene.mpp (a pixel's ground size)
 * fade out rather than alias.
 */
export function sampleGround(scene: Scene): void {
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
