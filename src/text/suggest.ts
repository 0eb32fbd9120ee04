// "Did you mean …?": the known word nearest to a typo, by edit distance.
import { closestMatch } from 'leven';

/** The closest of `candidates` to `input` (case-insensitive), if it is close enough to be a likely typo. */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  const lower = candidates.map((candidate) => candidate.toLowerCase());
  // Two edits turn any three-letter word into many others ('foo' into 'zoom'):
  // short words get one, longer ones a third of their length, at least two.
  const maxDistance = needle.length <= 3 ? 1 : Math.max(2, Math.floor(needle.length / 3));
  const match = closestMatch(needle, lower, { maxDistance });
  return match === undefined ? undefined : candidates[lower.indexOf(match)];
}
