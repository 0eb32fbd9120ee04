// --shard k/n: CI runner k of n takes every n-th row, starting at row k. The
// split depends only on row numbers, so every runner computes the same one
// without talking to the others, and each row lands in exactly one shard.
import { UsageError } from '../errors.js';

export interface Shard {
  /** 1-based index of this runner. */
  index: number;
  count: number;
}

export function parseShard(raw: string | undefined): Shard | undefined {
  if (raw === undefined) return undefined;
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count || !Number.isSafeInteger(count)) {
    throw new UsageError(`--shard must be k/n with 1 ≤ k ≤ n (e.g. 2/4 for the second of four runners); got '${raw}'`);
  }
  return { index, count };
}

/** Row numbers are 1-based; row r belongs to shard ((r - 1) mod n) + 1. */
export function inShard(row: number, shard: Shard | undefined): boolean {
  return !shard || (row - 1) % shard.count === shard.index - 1;
}
