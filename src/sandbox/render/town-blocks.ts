// Inside a town block: lots with their buildings (roofs lit by the sun, with
// windows lit at night) and yards in the buildings' shadows, parks, market
// squares and parking lots.
import { paintTree, treeCrown } from './countryside.js';
import { COVER } from './frame.js';
import { CAR_COLOURS, ROOFS_FLAT, SALT_BLOCK, SALT_CAR, SALT_LOT, SALT_ROOF, TOWN_EDGE } from './layout.js';
import { clamp01, hash2, mix32, unit } from './noise.js';
import { blendColour, setColour, townAt, type Scene } from './scene.js';

// Land uses of a city block.
const USE_BUILDINGS = 0;
const USE_PARK = 1;
const USE_SQUARE = 2;

// Roof shapes.
const ROOF_FLAT = 0;
const ROOF_HIP = 1;
const ROOF_GABLE = 2;
const ROOF_COURTYARD = 3;

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
export function sampleBlock(scene: Scene): boolean {
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
