// Durations on the command line: one way to read them and one way to write
// them, for every flag. A bare number is seconds (`--timeout 30`), as
// timeout(1), curl, gh and aws read it; other units are written out: 500ms,
// 90s, 10m, 1h, or combined from the largest unit down (1m30s, 1h05m).
import { UsageError } from '../lifecycle/errors.js';

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
const UNIT_ORDER: readonly Unit[] = ['h', 'm', 's', 'ms'];
const BARE = /^\d+(?:\.\d+)?$/;
const PARTS = /^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

export interface DurationRange {
  minMs: number;
  maxMs: number;
  /**
   * The most a bare number may mean. A flag that once read bare numbers as
   * milliseconds sets this low, so an old `--retry-delay 500` is refused with a
   * hint rather than silently waiting 500 seconds; a unit lifts the limit.
   */
  bareMaxMs?: number;
}

/** Milliseconds, or undefined when `raw` is not a duration at all; `bare` tells whether it had no unit. */
export function readDuration(raw: string): { ms: number; bare: boolean } | undefined {
  const text = raw.trim().toLowerCase();
  if (BARE.test(text)) return { ms: Math.round(Number(text) * 1000), bare: true };
  if (!PARTS.test(text)) return undefined;
  let ms = 0;
  let previous = -1;
  for (const [, amount, unit] of text.matchAll(PART)) {
    const rank = UNIT_ORDER.indexOf(unit as Unit);
    // 1h30m, not 30m1h nor 1m1m: each unit once, largest first.
    if (rank <= previous) return undefined;
    previous = rank;
    ms += Number(amount) * UNIT_MS[unit as Unit];
  }
  return { ms: Math.round(ms), bare: false };
}

/** Reads a duration flag's value as milliseconds within `range`; anything else is a UsageError naming the flag. */
export function parseDuration(raw: string, flag: string, range: DurationRange): number {
  const read = readDuration(raw);
  const fits = (ms: number) => ms >= range.minMs && ms <= range.maxMs;
  const overBare = read?.bare === true && range.bareMaxMs !== undefined && read.ms > range.bareMaxMs;
  if (read !== undefined && fits(read.ms) && !overBare) return read.ms;
  const hints: string[] = [];
  if (read?.bare) {
    // Most likely an old command line from when bare numbers were milliseconds.
    const text = raw.trim();
    if (fits(Number(text))) hints.push(`for milliseconds write ${text}ms`);
    if (overBare && fits(read.ms)) hints.push(`for ${text} seconds write ${formatDuration(read.ms)}`);
  }
  throw new UsageError(`${flag} must be ${describeDurationRange(range)}; got '${raw}'${hints.length ? `: ${hints.join(', or ')}` : ''}`);
}

/** What a duration flag takes, for its errors and help: "a duration from 0s to 30s, such as 500ms or 30 (seconds)". */
export function describeDurationRange(range: DurationRange): string {
  const examples = ['500ms', '30', '90s', '10m', '1h'].filter((example) => {
    const { ms, bare } = readDuration(example)!;
    return ms >= range.minMs && ms <= range.maxMs && !(bare && range.bareMaxMs !== undefined && ms > range.bareMaxMs);
  });
  const listed = examples.map((example) => (readDuration(example)!.bare ? `${example} (seconds)` : example));
  const last = listed.pop();
  const such = listed.length ? `${listed.join(', ')} or ${last}` : last;
  const bare = range.bareMaxMs !== undefined && range.bareMaxMs < range.maxMs ? `; a bare number is seconds, at most ${range.bareMaxMs / 1000}` : '';
  return `a duration from ${formatDuration(range.minMs)} to ${formatDuration(range.maxMs)}, such as ${such}${bare}`;
}

/**
 * A duration as people write it, and as parseDuration reads it back: 0s,
 * 500ms, 1.5s, 90s → 1m30s, 10m, 1h05m, 2h00m30s. `precisionMs` rounds first
 * (1000 for whole seconds, as an ETA wants); a non-finite value is "?".
 */
export function formatDuration(ms: number, precisionMs = 1): string {
  if (!Number.isFinite(ms)) return '?';
  const total = Math.max(0, Math.round(ms / precisionMs) * precisionMs);
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / UNIT_MS.h);
  const minutes = Math.floor((total % UNIT_MS.h) / UNIT_MS.m);
  const seconds = (total % UNIT_MS.m) / 1000;
  const parts: string[] = [];
  if (hours) parts.push(`${hours}h`);
  if (minutes || (hours && seconds)) parts.push(`${hours ? String(minutes).padStart(2, '0') : minutes}m`);
  if (seconds) {
    const text = String(Number(seconds.toFixed(3)));
    parts.push(`${(hours || minutes) && seconds < 10 ? '0' : ''}${text}s`);
  }
  return parts.join('');
}
