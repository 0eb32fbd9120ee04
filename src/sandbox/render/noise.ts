// Seeds and hashing: the integer mixer every hash of the renderer is built on,
// seeded random numbers, and the smooth lattice noise that varies the ground.
// The same inputs give the same numbers in every thread and on every run.

/** JSON with object keys sorted and undefined members dropped, so equal requests hash equally. */
export function canonicalJson(value: unknown): string {
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
export function hashString(text: string): number {
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
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** Hash of an integer lattice point; the backbone of noise, lots, trees and cars. */
export function hash2(x: number, y: number, seed: number): number {
  return mix32(seed ^ Math.imul(x | 0, 0x27d4eb2d) ^ Math.imul(y | 0, 0x165667b1));
}

/** A hash as a number in [0, 1). */
export function unit(hash: number): number {
  return (hash >>> 0) / 4294967296;
}

/** A counter run through the mixer: tiny, seedable, good enough for placing raindrops. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    return unit(mix32(state));
  };
}

/** Smoothly interpolated lattice noise in [0, 1]. */
export function valueNoise(x: number, y: number, seed: number): number {
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
export function fractalNoise(x: number, y: number, seed: number): number {
  return 0.65 * valueNoise(x, y, seed) + 0.35 * valueNoise(x * 2.13 + 31.7, y * 2.13 - 17.3, seed + 1);
}

export function clamp01(value: number): number {
  return value < 0 ? 0 : value > 1 ? 1 : value;
}

export function smoothstep(edge0: number, edge1: number, value: number): number {
  const t = clamp01((value - edge0) / (edge1 - edge0));
  return t * t * (3 - 2 * t);
}
