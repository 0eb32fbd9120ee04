// Land away from towns and water: ice, dunes, rock, tundra, steppe, forest and
// patchwork fields with their farmsteads, picked by the climate of the row; trees
// (also in parks and gardens); and the tracks and huts of ancient villages.
import { COVER } from './frame.js';
import { SALT_FIELD, SALT_HUT, SALT_STRATA, SALT_TREE, TOWN_EDGE } from './layout.js';
import { clamp01, hash2, unit, valueNoise } from './noise.js';
import { FIELD_MOTTLE, FIELD_PATH, FIELD_TERRAIN, FIELD_TOWN, setColour, type Scene } from './scene.js';

/**
 * Land away from towns and water, by the climate of the row: the terrain
 * noise picks among ice, sand, rock, tundra, forest and open land in
 * proportion to their shares, in patches a few hundred metres across.
 */
export function sampleLand(scene: Scene): void {
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

/**
 * Whether the sample is under a tree crown, the crowns sitting on a jittered
 * lattice of `cell`-metre squares with a share `density` of them planted. On a
 * hit, scene.crown is the brightness there (sunny side lighter) and
 * scene.treeVariant the crown's tint variation.
 */
export function treeCrown(scene: Scene, cell: number, density: number): boolean {
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
export function paintTree(scene: Scene): void {
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
export function sampleAncientPath(scene: Scene): boolean {
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
export function sampleVillage(scene: Scene): boolean {
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
