// Parsing of the numeric and duration flags batch and export share.
import { parseDuration, type DurationRange } from '../../input/duration.js';
import { PERSISTENT_RETRIES } from '../../api/retry.js';

/**
 * --retry-delay: the first backoff, up to the backoff's own ceiling (a longer one
 * would change nothing). Bare numbers were milliseconds once: every bare number
 * above the ceiling is refused with a hint, so an old `--retry-delay 500` cannot
 * quietly become 500 seconds.
 */
export const RETRY_DELAY_RANGE: DurationRange = { minMs: 0, maxMs: PERSISTENT_RETRIES.maxDelayMs };
/** --progress-interval: between plain progress lines when stderr is not a terminal. */
export const PROGRESS_INTERVAL_RANGE: DurationRange = { minMs: 1000, maxMs: 3_600_000 };
export const DEFAULT_PROGRESS_INTERVAL_MS = 5000;

export function parseRetryDelay(raw: string | undefined): number {
  return raw === undefined ? PERSISTENT_RETRIES.firstDelayMs : parseDuration(raw, '--retry-delay', RETRY_DELAY_RANGE);
}

export function parseProgressInterval(raw: string | undefined): number {
  return raw === undefined ? DEFAULT_PROGRESS_INTERVAL_MS : parseDuration(raw, '--progress-interval', PROGRESS_INTERVAL_RANGE);
}
