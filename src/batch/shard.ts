// --shard k/n: CI runner k of n takes every n-th row, starting at row k. The
// split depends only on row numbers, so every runner computes the same one
// without talking to the others, each row lands in exactly one shard, and rows
// appended to the file do not move the rows before them.
//
// --shard auto reads k and n from the engine running the job. Engines count
// from 0 or from 1, and a Slurm array from wherever its --array range starts
// (in steps, for --array=0-15:4); every source is normalised to k/n counted
// from 1. Engines that give only an index (Kubernetes Indexed Jobs, AWS Batch
// array jobs) take the total from --shard auto/N. Partial or contradictory
// information is refused, and so is a Slurm array with gaps (--array=1,3,7):
// a wrong split would silently skip rows or do them twice.
import { UsageError } from '../lifecycle/errors.js';

export interface Shard {
  /** 1-based index of this runner. */
  index: number;
  count: number;
}

/** Where --shard auto found its shard, for --verbose. */
export interface ShardChoice {
  shard: Shard;
  /** e.g. "GitLab (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)". */
  source?: string;
}

type Env = Record<string, string | undefined>;

interface ShardSource {
  engine: string;
  index: string;
  /** The variable holding the total; absent where the engine gives only an index. */
  total?: string;
  /** The engine's first index, or the variable holding it (a Slurm array starts where its range does). */
  base: 0 | 1 | string;
  /**
   * Where the ids may be spaced out (Slurm's --array=0-15:4): the variables
   * holding the step between ids (1 when unset) and the last id, which tells
   * an evenly spaced range from one with gaps.
   */
  spacing?: { step: string; last: string; hint: string };
}

/** The engines whose variables --shard auto reads, besides AERIAL_SHARD. */
export const SHARD_SOURCES: readonly ShardSource[] = [
  { engine: 'GitLab', index: 'CI_NODE_INDEX', total: 'CI_NODE_TOTAL', base: 1 },
  { engine: 'CircleCI', index: 'CIRCLE_NODE_INDEX', total: 'CIRCLE_NODE_TOTAL', base: 0 },
  { engine: 'Buildkite', index: 'BUILDKITE_PARALLEL_JOB', total: 'BUILDKITE_PARALLEL_JOB_COUNT', base: 0 },
  { engine: 'a Kubernetes Indexed Job', index: 'JOB_COMPLETION_INDEX', base: 0 },
  { engine: 'an AWS Batch array job', index: 'AWS_BATCH_JOB_ARRAY_INDEX', base: 0 },
  {
    engine: 'a Slurm array job',
    index: 'SLURM_ARRAY_TASK_ID',
    total: 'SLURM_ARRAY_TASK_COUNT',
    base: 'SLURM_ARRAY_TASK_MIN',
    spacing: { step: 'SLURM_ARRAY_TASK_STEP', last: 'SLURM_ARRAY_TASK_MAX', hint: 'submit it as one range, such as --array=0-3 or --array=0-15:4' },
  },
];

const SHARD_USAGE = "--shard must be k/n with 1 ≤ k ≤ n (e.g. 2/4 for the second of four runners), auto, or auto/N";

function parseKOfN(raw: string, what: string): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count || !Number.isSafeInteger(count)) {
    throw new UsageError(`${what} must be k/n with 1 ≤ k ≤ n (e.g. 2/4 for the second of four runners); got '${raw}'`);
  }
  return { index, count };
}

/** --shard k/n as given; `auto` is resolveShard's. */
export function parseShard(raw: string | undefined): Shard | undefined {
  if (raw === undefined) return undefined;
  if (/^\s*auto\b/i.test(raw)) throw new UsageError(`${SHARD_USAGE}; got '${raw}'`);
  return parseKOfN(raw, '--shard');
}

function wholeNumber(env: Env, name: string): number {
  const raw = env[name]!;
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new UsageError(`--shard auto: ${name} must be a whole number; got '${raw}'`);
  return Number(raw);
}

const isSet = (env: Env, name: string | undefined): name is string => name !== undefined && env[name] !== undefined && env[name]!.trim() !== '';

/** The variables an engine may set, its index first. */
function variablesOf(source: ShardSource): string[] {
  return [source.index, source.total, typeof source.base === 'string' ? source.base : undefined, source.spacing?.last, source.spacing?.step].filter((name) => name !== undefined);
}

/**
 * For an engine that describes its array in several variables (Slurm), the
 * ones it always sets together; the step may be left out, meaning 1.
 */
function arrayVariables(source: ShardSource): string[] | undefined {
  if (typeof source.base !== 'string' && !source.spacing) return undefined;
  return variablesOf(source).filter((name) => name !== source.spacing?.step);
}

/** What one engine's variables say, or undefined when it has set none of them. */
function fromEngine(source: ShardSource, env: Env, total: number | undefined): ShardChoice | undefined {
  const hasIndex = isSet(env, source.index);
  const hasTotal = isSet(env, source.total);
  const described = arrayVariables(source);
  if (described) {
    // All or nothing: without its first id, count and last id, an array's ids cannot be placed.
    const set = described.filter((name) => isSet(env, name));
    if (set.length === 0) return undefined;
    const missing = described.find((name) => !isSet(env, name));
    if (missing) {
      throw new UsageError(`--shard auto: ${set[0]} is set but ${missing} is not; ${source.engine} has all of ${described.slice(0, -1).join(', ')} and ${described.at(-1)}`);
    }
  } else {
    if (!hasIndex && !hasTotal) return undefined;
    if (!hasIndex) {
      // GitLab sets CI_NODE_TOTAL=1 on every job, and an index only on parallel ones: a job of one is the whole batch.
      if (wholeNumber(env, source.total!) === 1) return { shard: { index: 1, count: 1 }, source: `${source.engine} (${source.total}=1: not a parallel job)` };
      throw new UsageError(`--shard auto: ${source.total} is set but ${source.index} is not; ${source.engine} sets both for parallel jobs`);
    }
  }
  const index = wholeNumber(env, source.index);
  const given = hasTotal ? wholeNumber(env, source.total!) : undefined;
  const count = given ?? total;
  const shown = variablesOf(source)
    .filter((name) => isSet(env, name))
    .map((name) => `${name}=${env[name]!.trim()}`)
    .join(', ');
  if (count === undefined) {
    throw new UsageError(
      source.total
        ? `--shard auto: ${source.index} is set but ${source.total} is not; ${source.engine} sets both for parallel jobs`
        : `--shard auto: ${source.engine} gives only an index (${shown}); give the number of shards with --shard auto/N`,
    );
  }
  if (given !== undefined && total !== undefined && given !== total) {
    throw new UsageError(`--shard auto/${total} contradicts ${source.total}=${given} (${source.engine})`);
  }
  if (count < 1) throw new UsageError(`--shard auto: ${source.total} must be at least 1; got ${count}`);
  const first = typeof source.base === 'string' ? wholeNumber(env, source.base) : source.base;
  const step = source.spacing && isSet(env, source.spacing.step) ? wholeNumber(env, source.spacing.step) : 1;
  if (step < 1) throw new UsageError(`--shard auto: ${source.spacing!.step} must be at least 1; got ${step}`);
  const last = first + (count - 1) * step;
  if (source.spacing && wholeNumber(env, source.spacing.last) !== last) {
    // Ids with gaps (--array=1,3,7) name no k/n: the shard of a missing id would be no one's, its rows never sent.
    throw new UsageError(`--shard auto: ${source.engine}'s ids are not an evenly spaced range (${shown}), so they name no k/n; ${source.spacing.hint}`);
  }
  if (index < first || index > last || (index - first) % step !== 0) {
    const from = typeof source.base === 'string' ? `${source.base}=${first}` : String(first);
    const spaced = step > 1 ? ` in steps of ${step}` : '';
    throw new UsageError(`--shard auto: ${source.index} must be from ${first} to ${last}${spaced} (${source.engine} counts from ${from}) for ${count} shards; got ${index}`);
  }
  return { shard: { index: (index - first) / step + 1, count }, source: `${source.engine} (${shown})` };
}

/**
 * The shard --shard asks for: k/n as given, or with `auto` (`auto/N`) the one
 * the environment names. Every source set must agree; none set is an error.
 */
export function resolveShard(raw: string | undefined, env: Env): ShardChoice | undefined {
  if (raw === undefined) return undefined;
  const auto = /^\s*auto\s*(?:\/\s*(\S*)\s*)?$/i.exec(raw);
  if (!auto) return { shard: parseKOfN(raw, '--shard') };
  let total: number | undefined;
  if (auto[1] !== undefined) {
    total = /^\d+$/.test(auto[1]) ? Number(auto[1]) : NaN;
    if (!(total >= 1) || !Number.isSafeInteger(total)) throw new UsageError(`--shard auto/N needs the number of shards, a whole number of at least 1; got '${raw}'`);
  }
  const found: ShardChoice[] = [];
  if (isSet(env, 'AERIAL_SHARD')) {
    const shard = parseKOfN(env.AERIAL_SHARD!, 'AERIAL_SHARD');
    if (total !== undefined && shard.count !== total) throw new UsageError(`--shard auto/${total} contradicts AERIAL_SHARD=${env.AERIAL_SHARD!.trim()}`);
    found.push({ shard, source: `AERIAL_SHARD=${env.AERIAL_SHARD!.trim()}` });
  }
  for (const source of SHARD_SOURCES) {
    const choice = fromEngine(source, env, total);
    if (choice) found.push(choice);
  }
  if (found.length === 0) {
    const names = ['AERIAL_SHARD', ...SHARD_SOURCES.map((s) => s.index)].join(', ');
    throw new UsageError(`--shard auto found no shard in the environment (none of ${names} is set); set AERIAL_SHARD=k/n, or use --shard k/n`);
  }
  const [first, ...others] = found;
  const disagreeing = others.find((other) => other.shard.index !== first!.shard.index || other.shard.count !== first!.shard.count);
  if (disagreeing) {
    const show = (choice: ShardChoice) => `${choice.shard.index}/${choice.shard.count} from ${choice.source}`;
    throw new UsageError(`--shard auto: the environment names two different shards: ${show(first!)}, and ${show(disagreeing)}; unset one, or use --shard k/n`);
  }
  return { shard: first!.shard, source: found.map((choice) => choice.source).join(' and ') };
}

/** Row numbers are 1-based; row r belongs to shard ((r - 1) mod n) + 1. */
export function inShard(row: number, shard: Shard | undefined): boolean {
  return !shard || (row - 1) % shard.count === shard.index - 1;
}
