// Streets and roads: the street grid a sample falls in, the road surface with
// its markings, zebra crossings, cars and street lights, the shadows of the
// buildings along a street, and highways through the settled countryside.
import { CAR_COLOURS, SALT_CAR, SALT_LOT, TOWN_EDGE } from './layout.js';
import { clamp01, hash2, unit } from './noise.js';
import { blendColour, FIELD_TOWN, FIELD_WARP_X, FIELD_WARP_Y, MEMO_SIZE, setColour, townAt, type Scene } from './scene.js';

/** Finds the street-grid block of the sample (historical streets wander); every fourth line is a wide avenue. */
export function locateInGrid(scene: Scene): void {
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
export function sampleRoad(scene: Scene, sea: boolean, river: boolean): boolean {
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
