import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inShard, parseShard, resolveShard } from '../../../src/batch/shard.js';

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

describe('resolveShard (--shard auto)', () => {
  const auto = (raw: string, env: Record<string, string>) => resolveShard(raw, env);
  /** What Slurm sets in the task with id `id` of --array=min-max:step, max being where `count` tasks end unless given. */
  const slurm = ({ id, count, min, step = 1, max = min + (count - 1) * step }: { id: number; count: number; min: number; step?: number; max?: number }) => ({
    SLURM_ARRAY_TASK_ID: String(id),
    SLURM_ARRAY_TASK_COUNT: String(count),
    SLURM_ARRAY_TASK_MIN: String(min),
    SLURM_ARRAY_TASK_MAX: String(max),
    SLURM_ARRAY_TASK_STEP: String(step),
  });

  it('normalises each engine to k/n counted from 1, and says where it came from', () => {
    expect(auto('auto', { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' })).toEqual({ shard: { index: 2, count: 4 }, source: 'GitLab (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)' });
    expect(auto('auto', { CIRCLE_NODE_INDEX: '0', CIRCLE_NODE_TOTAL: '3' })!.shard).toEqual({ index: 1, count: 3 });
    expect(auto('auto', { CIRCLE_NODE_INDEX: '2', CIRCLE_NODE_TOTAL: '3' })!.shard).toEqual({ index: 3, count: 3 });
    expect(auto('auto', { BUILDKITE_PARALLEL_JOB: '1', BUILDKITE_PARALLEL_JOB_COUNT: '2' })!.shard).toEqual({ index: 2, count: 2 });
    expect(auto('auto/5', { JOB_COMPLETION_INDEX: '4' })).toEqual({ shard: { index: 5, count: 5 }, source: 'a Kubernetes Indexed Job (JOB_COMPLETION_INDEX=4)' });
    expect(auto('auto/8', { AWS_BATCH_JOB_ARRAY_INDEX: '0' })!.shard).toEqual({ index: 1, count: 8 });
    expect(auto('auto', slurm({ id: 3, count: 4, min: 1 }))).toEqual({
      shard: { index: 3, count: 4 },
      source: 'a Slurm array job (SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=4, SLURM_ARRAY_TASK_STEP=1)',
    });
    expect(auto('auto', slurm({ id: 0, count: 4, min: 0 }))!.shard).toEqual({ index: 1, count: 4 });
    // --array=0-15:4: ids 0, 4, 8, 12.
    expect(auto('auto', slurm({ id: 8, count: 4, min: 0, step: 4 }))!.shard).toEqual({ index: 3, count: 4 });
    // --array=3: a one-task array is the whole batch.
    expect(auto('auto', slurm({ id: 3, count: 1, min: 3 }))!.shard).toEqual({ index: 1, count: 1 });
    // Slurm from before SLURM_ARRAY_TASK_STEP: steps of 1.
    const { SLURM_ARRAY_TASK_STEP: _, ...noStep } = slurm({ id: 5, count: 4, min: 5 });
    expect(auto('auto/4', noStep)!.shard).toEqual({ index: 1, count: 4 });
    expect(auto('auto', { AERIAL_SHARD: '3/7' })).toEqual({ shard: { index: 3, count: 7 }, source: 'AERIAL_SHARD=3/7' });
    expect(auto(' AUTO / 4 ', { AERIAL_SHARD: '3/4' })!.shard).toEqual({ index: 3, count: 4 });
    // A GitLab job without parallel: has CI_NODE_TOTAL=1 and no index: the whole batch.
    expect(auto('auto', { CI_NODE_TOTAL: '1' })!.shard).toEqual({ index: 1, count: 1 });
    // Sources that agree are both named.
    expect(auto('auto', { AERIAL_SHARD: '2/4', CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' })!.source).toBe('AERIAL_SHARD=2/4 and GitLab (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)');
    expect(auto('2/4', { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '9' })).toEqual({ shard: { index: 2, count: 4 } });
  });

  it('covers every row exactly once across an engine\'s jobs, whatever it counts from (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 7 }), (count, row, min, step) => {
        const owners = [
          Array.from({ length: count }, (_, i) => auto('auto', { CI_NODE_INDEX: String(i + 1), CI_NODE_TOTAL: String(count) })!.shard),
          Array.from({ length: count }, (_, i) => auto('auto', { CIRCLE_NODE_INDEX: String(i), CIRCLE_NODE_TOTAL: String(count) })!.shard),
          Array.from({ length: count }, (_, i) => auto(`auto/${count}`, { JOB_COMPLETION_INDEX: String(i) })!.shard),
          Array.from({ length: count }, (_, i) => auto('auto', slurm({ id: min + i * step, count, min, step }))!.shard),
        ];
        for (const shards of owners) expect(shards.filter((shard) => inShard(row, shard))).toHaveLength(1);
      }),
    );
  });

  it('refuses partial, contradictory or missing information, naming the variable', () => {
    const refusals: Array<[string, Record<string, string>, RegExp]> = [
      ['auto', {}, /^--shard auto found no shard in the environment \(none of AERIAL_SHARD, CI_NODE_INDEX, .*AWS_BATCH_JOB_ARRAY_INDEX, SLURM_ARRAY_TASK_ID is set\)/],
      ['auto', { CI_NODE_INDEX: '2' }, /CI_NODE_INDEX is set but CI_NODE_TOTAL is not/],
      ['auto', { CI_NODE_TOTAL: '4' }, /CI_NODE_TOTAL is set but CI_NODE_INDEX is not/],
      ['auto', { JOB_COMPLETION_INDEX: '1' }, /gives only an index \(JOB_COMPLETION_INDEX=1\); give the number of shards with --shard auto\/N/],
      ['auto', { AWS_BATCH_JOB_ARRAY_INDEX: '0' }, /--shard auto\/N/],
      ['auto/3', { CIRCLE_NODE_INDEX: '0', CIRCLE_NODE_TOTAL: '4' }, /--shard auto\/3 contradicts CIRCLE_NODE_TOTAL=4/],
      ['auto/3', { AERIAL_SHARD: '1/4' }, /--shard auto\/3 contradicts AERIAL_SHARD=1\/4/],
      ['auto', { AERIAL_SHARD: '1/4', CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' }, /two different shards: 1\/4 from AERIAL_SHARD=1\/4, and 2\/4 from GitLab/],
      ['auto', { CI_NODE_INDEX: '0', CI_NODE_TOTAL: '4' }, /CI_NODE_INDEX must be from 1 to 4 \(GitLab counts from 1\) for 4 shards; got 0/],
      ['auto', { CIRCLE_NODE_INDEX: '4', CIRCLE_NODE_TOTAL: '4' }, /CIRCLE_NODE_INDEX must be from 0 to 3/],
      ['auto/2', { JOB_COMPLETION_INDEX: '2' }, /JOB_COMPLETION_INDEX must be from 0 to 1/],
      ['auto', { BUILDKITE_PARALLEL_JOB: 'one', BUILDKITE_PARALLEL_JOB_COUNT: '2' }, /BUILDKITE_PARALLEL_JOB must be a whole number; got 'one'/],
      ['auto', { AERIAL_SHARD: '5/4' }, /^AERIAL_SHARD must be k\/n with 1 ≤ k ≤ n/],
      ['auto/0', { JOB_COMPLETION_INDEX: '0' }, /--shard auto\/N needs the number of shards/],
      ['auto/x', { JOB_COMPLETION_INDEX: '0' }, /--shard auto\/N needs the number of shards/],
      ['automatic', {}, /^--shard must be k\/n/],
      // Slurm: every array variable, ids without gaps, the id one of the array's.
      ['auto', { SLURM_ARRAY_TASK_ID: '2' }, /^--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; a Slurm array job has all of SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX$/],
      ['auto/4', { SLURM_ARRAY_TASK_ID: '2' }, /SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not/],
      ['auto', { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MAX: '4' }, /SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not/],
      ['auto', { SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '4' }, /SLURM_ARRAY_TASK_COUNT is set but SLURM_ARRAY_TASK_ID is not/],
      // --array=1,3,7 and --array=1-3,5: gaps.
      ['auto', slurm({ id: 3, count: 3, min: 1, max: 7 }), /^--shard auto: a Slurm array job's ids are not an evenly spaced range \(SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_COUNT=3, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=7, SLURM_ARRAY_TASK_STEP=1\), so they name no k\/n; submit it as one range, such as --array=0-3 or --array=0-15:4$/],
      ['auto', slurm({ id: 1, count: 4, min: 1, max: 5 }), /not an evenly spaced range/],
      // --array=0-8:4,9-10: Slurm gives the first range's step.
      ['auto', slurm({ id: 4, count: 5, min: 0, step: 4, max: 10 }), /not an evenly spaced range/],
      ['auto', slurm({ id: 5, count: 4, min: 1 }), /^--shard auto: SLURM_ARRAY_TASK_ID must be from 1 to 4 \(a Slurm array job counts from SLURM_ARRAY_TASK_MIN=1\) for 4 shards; got 5$/],
      ['auto', slurm({ id: 0, count: 4, min: 1 }), /SLURM_ARRAY_TASK_ID must be from 1 to 4/],
      ['auto', slurm({ id: 6, count: 4, min: 0, step: 4 }), /SLURM_ARRAY_TASK_ID must be from 0 to 12 in steps of 4 .* got 6$/],
      ['auto', slurm({ id: 0, count: 4, min: 0, step: 0 }), /SLURM_ARRAY_TASK_STEP must be at least 1; got 0/],
      ['auto', slurm({ id: 0, count: 0, min: 0 }), /SLURM_ARRAY_TASK_COUNT must be at least 1; got 0/],
      ['auto', { ...slurm({ id: 1, count: 4, min: 1 }), SLURM_ARRAY_TASK_MIN: '-1' }, /SLURM_ARRAY_TASK_MIN must be a whole number; got '-1'/],
      // A resubmitted part of the array (--array=2) is a whole array of one: auto/N catches it.
      ['auto/4', slurm({ id: 2, count: 1, min: 2 }), /--shard auto\/4 contradicts SLURM_ARRAY_TASK_COUNT=1 \(a Slurm array job\)/],
      ['auto', { ...slurm({ id: 2, count: 4, min: 1 }), CI_NODE_INDEX: '3', CI_NODE_TOTAL: '4' }, /two different shards: 3\/4 from GitLab .*, and 2\/4 from a Slurm array job/],
    ];
    for (const [raw, env, message] of refusals) expect(() => auto(raw, env), `${raw} ${JSON.stringify(env)}`).toThrow(message);
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
