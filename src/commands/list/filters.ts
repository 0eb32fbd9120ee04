// The filters of `aerial list`: --since, --until, --resolution, --near with
// --within, and --limit. The service filters nothing (the v1 list endpoint
// takes a page, a size and a sort), so the walk filters each page as it
// arrives and keeps nothing but counts: constant memory, whatever the history.
// It ends early when no later image can match: --limit reached, or, in a
// listing sorted by createdAt that has kept its order so far, an image past
// the --since or --until bound.
import type { ImageRecord } from '../../api/schema.js';
import { UsageError } from '../../lifecycle/errors.js';
import { parseWholeNumber } from '../../input/flags.js';
import { readDuration } from '../../input/duration.js';
import { parseSceneEnum } from '../../scene/vocabulary.js';

export interface ListFilterOptions {
  since?: string;
  until?: string;
  resolution?: string;
  near?: string;
  within?: string;
  limit?: string;
}

/** --within when --near is given alone. */
export const DEFAULT_WITHIN_KM = 10;

/** A date and time as ISO 8601 writes it: 2025-01-31, 2025-01-31T12:00, …Z or …+02:00. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An instant from --since or --until: a duration back from `now` (`2h`, `1h30m`,
 * `90m`; a bare number is seconds) or an ISO 8601 date or date-time, UTC
 * unless it names its zone (as createdAt is written).
 */
export function parseInstant(raw: string, flag: string, now: number): number {
  const text = raw.trim();
  const duration = readDuration(text);
  if (duration !== undefined) return now - duration.ms;
  if (ISO_DATE.test(text)) {
    // A date alone is midnight UTC to Date.parse already; a date-time without a zone is given Z.
    const iso = text.replace(' ', 'T');
    const ms = Date.parse(iso.length === 10 || /(?:Z|[+-]\d{2}:?\d{2})$/i.test(iso) ? iso : `${iso}Z`);
    if (Number.isFinite(ms)) return ms;
  }
  throw new UsageError(`${flag} must be a duration back from now (2h, 30m, 1h30m) or a date (2025-01-31, 2025-01-31T12:00Z); got '${raw}'`);
}

/** Kilometres between two points on the Earth (haversine, mean radius). */
export function distanceKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export interface ListFilter {
  /** Whether any filter or a limit was given: the listing is then walked, as --all walks it. */
  readonly active: boolean;
  readonly limit?: number;
  /** A limit and nothing else: pages of the limit's size hold all that is wanted. */
  readonly limitOnly: boolean;
  /** The sort the walk should ask for when none was given: newest first for a time bound. */
  readonly sort?: string[];
  keeps(record: ImageRecord): boolean;
  /** Whether the walk may end before `record`: the listing is in createdAt order and it is past a time bound. */
  endsAt(record: ImageRecord): boolean;
}

/**
 * The filter the flags make, checked before anything is sent. `near` is the
 * point --near names (coordinates, or a place, which the caller looks up).
 */
export function makeListFilter(
  options: ListFilterOptions,
  near: { lat: number; lng: number } | undefined,
  sort: string[] | undefined,
  now = Date.now(),
): ListFilter {
  const since = options.since === undefined ? undefined : parseInstant(options.since, '--since', now);
  const until = options.until === undefined ? undefined : parseInstant(options.until, '--until', now);
  if (since !== undefined && until !== undefined && since > until) throw new UsageError('--since must be earlier than --until');
  let resolution: string | undefined;
  if (options.resolution !== undefined) {
    const parsed = parseSceneEnum('resolution', options.resolution);
    if (!parsed.ok) throw new UsageError(parsed.message);
    resolution = parsed.value;
  }
  if (options.within !== undefined && near === undefined) throw new UsageError('--within applies only with --near LAT,LNG');
  let withinKm = DEFAULT_WITHIN_KM;
  if (options.within !== undefined) {
    withinKm = Number(options.within.trim());
    if (options.within.trim() === '' || !Number.isFinite(withinKm) || withinKm <= 0 || withinKm > 20_040) {
      throw new UsageError(`--within must be a distance in kilometres above 0 (at most 20040, half the Earth's circumference); got '${options.within}'`);
    }
  }
  const limit = parseWholeNumber(options.limit, '--limit', 1);
  const timed = since !== undefined || until !== undefined;
  const askedSort = sort ?? (timed ? ['createdAt,desc'] : undefined);
  const order = askedSort?.[0] === 'createdAt,desc' ? -1 : askedSort?.[0] === 'createdAt,asc' || askedSort?.[0] === 'createdAt' ? 1 : 0;
  let previous: number | undefined;
  let ordered = order !== 0;

  return {
    active: timed || resolution !== undefined || near !== undefined || limit !== undefined,
    limit,
    limitOnly: limit !== undefined && !timed && resolution === undefined && near === undefined,
    sort: sort === undefined && timed ? askedSort : undefined,
    keeps(record) {
      const created = Date.parse(record.createdAt);
      if (since !== undefined && !(created >= since)) return false;
      if (until !== undefined && !(created < until)) return false;
      if (resolution !== undefined && record.resolution !== resolution) return false;
      if (near !== undefined) {
        const at = { lat: record.coordinates.latitude, lng: record.coordinates.longitude };
        if (!(distanceKm(near, at) <= withinKm)) return false;
      }
      return true;
    },
    endsAt(record) {
      const created = Date.parse(record.createdAt);
      // The order is trusted only while every record so far has kept it.
      if (!Number.isFinite(created)) ordered = false;
      else if (previous !== undefined && Math.sign(created - previous) === -order) ordered = false;
      previous = created;
      if (!ordered) return false;
      return order < 0 ? since !== undefined && created < since : until !== undefined && created >= until;
    },
  };
}
