import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inShard, parseShard } from '../../src/batch/shard.js';

describe('parseShard', () => {
  it('reads k/n', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, count: 4 });
    expect(parseShard(' 1 / 1 ')).toEqual({ index: 1, count: 1 });
    expect(parseShard(undefined)).toBeUndefined();
  });

  it('refuses anything else, naming the flag', () => {
    for (const bad of ['0/4', '5/4', '2', '2/0', 'a/b', '-1/3', '1.5/3', '']) {
      expect(() => parseShard(bad)).toThrow(/^--shard must be k\/n with 1 ≤ k ≤ n/);
    }
  });
});

describe('inShard', () => {
  it('puts every row in exactly one shard, the shards differing in size by at most one (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 200 }), (count, rows) => {
        const sizes = Array.from({ length: count }, () => 0);
        for (let row = 1; row <= rows; row++) {
          const owners = sizes.map((_, i) => i).filter((i) => inShard(row, { index: i + 1, count }));
          expect(owners).toHaveLength(1);
          sizes[owners[0]!]!++;
        }
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('takes every row without a shard', () => {
    expect(inShard(17, undefined)).toBe(true);
  });
});
