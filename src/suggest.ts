// "Did you mean …?": the known word nearest to a typo, by edit distance.
import { closestMatch } from 'leven';

/** The closest of `candidates` to `input` (case-insensitive), if it is close enough to be a likely typo. */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  const lower = candidates.map((candidate) => candidate.toLowerCase());
  const match = closestMatch(needle, lower, { maxDistance: Math.max(2, Math.floor(needle.length / 3)) });
  return match === undefined ? undefined : candidates[lower.indexOf(match)];
}
