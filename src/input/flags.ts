// The values of flags (and of the settings that stand for them) that are not
// durations (src/input/duration.ts): whole numbers, ports, fractions and URLs. Each
// refusal is a UsageError (exit 2) naming the flag, what it takes and what it
// got, before anything is sent.
import { UsageError } from '../lifecycle/errors.js';
import { API_ROOT, DEFAULT_BASE_URL } from '../api/spec.js';

/**
 * A whole number from `min` to `max`; undefined when the flag was not given.
 * Without a `max`, the message says only "at least".
 */
export function parseWholeNumber(raw: string | undefined, flag: string, min: number, max?: number): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    throw new UsageError(`${flag} must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}; got '${raw}'`);
  }
  return value;
}

/** A whole number from `min` to `max`, or `fallback` when the flag was not given. */
export function parseCount(raw: string | undefined, flag: string, min: number, max: number, fallback: number): number {
  return parseWholeNumber(raw, flag, min, max) ?? fallback;
}

/**
 * A yes-or-no setting written as a word: a config default (`defaults.preview
 * yes`) or a batch cell (`includeContext` = `y`). The same words everywhere.
 */
export function parseSwitch(value: unknown, label: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (['true', 'yes', 'y', '1', 'on'].includes(text)) return true;
  if (['false', 'no', 'n', '0', 'off'].includes(text)) return false;
  throw new UsageError(`${label} must be true or false (or yes/no, y/n, on/off, 1/0); got '${String(value)}'`);
}

/** Where a listener binds unless told otherwise (--listen-host): reachable from this machine only. */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

/** A port to listen on; 0 (the default) lets the system pick a free one. */
export function parsePort(raw: string | undefined, flag: string): number {
  if (raw === undefined) return 0;
  const port = /^\d{1,5}$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`${flag} must be a port number from 0 to 65535 (0 = any free port); got '${raw}'`);
  return port;
}

/** A number from 0 to 1 (a rate). */
export function parseFraction(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`${flag} must be a number from 0 to 1; got '${raw}'`);
  }
  return value;
}

/** The most --rate takes: beyond it the limit would be the machine, not the rate. */
export const MAX_RATE_PER_SECOND = 100_000;

/**
 * A rate of requests: `<n>/s` or `<n>/m` (`/sec`, `/min` too), n a positive
 * number; in requests per second. Undefined when the flag was not given.
 */
export function parseRate(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*\/\s*(s|sec|second|m|min|minute)\s*$/i.exec(raw);
  const count = match ? Number(match[1]) : NaN;
  const perSecond = match && /^m/i.test(match[2]!) ? count / 60 : count;
  if (!match || !(perSecond > 0) || perSecond > MAX_RATE_PER_SECOND) {
    const bare = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? ` (write ${raw.trim()}/s or ${raw.trim()}/m)` : '';
    throw new UsageError(`${flag} must be requests per second or per minute, such as 10/s or 600/m (more than 0, at most ${MAX_RATE_PER_SECOND}/s); got '${raw}'${bare}`);
  }
  return perSecond;
}

/** An absolute http(s) URL, parsed; `refusal` is the message for anything else. */
function httpUrl(raw: string, refusal: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(refusal);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(refusal);
  return url;
}

/** A URL the service will POST a result to (--callback-url, --public-url). */
export function validateCallbackUrl(raw: string | undefined, flag = '--callback-url'): string {
  if (raw === undefined || raw.trim() === '') throw new UsageError(`${flag} is required: an absolute http(s) URL for the result callback`);
  return httpUrl(raw.trim(), `${flag} must be an absolute http(s) URL; got '${raw}'`).toString();
}

/** The path every endpoint of the API sits under; aerial adds it to the base URL itself. */
const API_ROOT_PATH = new RegExp(`${API_ROOT.replace(/\//g, '\\/')}(\\/.*)?$`, 'i');

/**
 * Checks a service base URL and returns it normalised: no trailing slash, and
 * without the API path when one was pasted with it (`…/api/external/v1…`).
 */
export function validateBaseUrl(raw: string, label: string): string {
  const url = httpUrl(raw, `${label} must be an absolute http(s) URL such as ${DEFAULT_BASE_URL}; got '${raw}'`);
  if (url.username || url.password) throw new UsageError(`${label} must not contain credentials`);
  if (url.search || url.hash) throw new UsageError(`${label} must not have a query or fragment; got '${raw}'`);
  url.pathname = url.pathname.replace(API_ROOT_PATH, '');
  return url.toString().replace(/\/+$/, '');
}

/** Whether validateBaseUrl took the API path off `raw`, so the user can be told. */
export function hadApiPath(raw: string): boolean {
  try {
    return API_ROOT_PATH.test(new URL(raw).pathname);
  } catch {
    return false;
  }
}
