// The options a program gives the library, checked before anything is sent:
// plain JavaScript can pass anything (`firstDelayMs: -1`, `attempts: '3'`, a
// misspelt name), and each is refused with an InvalidInputError naming the
// option and what it takes, as a TypeError would name an argument.
import { InvalidInputError } from '../api/errors.js';
import { nearest } from '../text/suggest.js';

/** Milliseconds a timer can hold (setTimeout fires at once beyond 2^31 - 1). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

type Check = (value: unknown, name: string) => void;

const fail = (name: string, wanted: string, value: unknown): never => {
  const shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value);
  throw new InvalidInputError(`${name} must be ${wanted}; got ${shown}`);
};

export const wholeNumber =
  (min: number, max: number, note = ''): Check =>
  (value, name) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(name, `a whole number from ${min} to ${max}${note}`, value);
  };

const milliseconds = (min: number): Check => wholeNumber(min, MAX_TIMER_MS, ' (milliseconds)');
const string: Check = (value, name) => {
  if (typeof value !== 'string') fail(name, 'a string', value);
};
const boolean: Check = (value, name) => {
  if (typeof value !== 'boolean') fail(name, 'true or false', value);
};
const callable: Check = (value, name) => {
  if (typeof value !== 'function') fail(name, 'a function', value);
};
const oneOf =
  (...values: string[]): Check =>
  (value, name) => {
    if (typeof value !== 'string' || !values.includes(value)) fail(name, `one of ${values.map((v) => `'${v}'`).join(', ')}`, value);
  };
const signal: Check = (value, name) => {
  if (!(value instanceof AbortSignal)) fail(name, 'an AbortSignal', value);
};

/** An object whose known keys each pass their check (undefined is leaving one out), and no other key. */
export const shape =
  (checks: Record<string, Check>): Check =>
  (value, name) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(name, 'an object', value);
    for (const [key, entry] of Object.entries(value as object)) {
      const path = name ? `${name}.${key}` : key;
      const check = checks[key];
      if (!check) {
        const suggestion = nearest(key, Object.keys(checks));
        throw new InvalidInputError(`unknown option ${path}${suggestion ? ` (did you mean ${name ? `${name}.` : ''}${suggestion}?)` : ''}; known: ${Object.keys(checks).join(', ')}`);
      }
      if (entry !== undefined) check(entry, path);
    }
  };

/** Attempts of one call: more than a hundred is a mistake, not patience (the waits between them grow to maxDelayMs). */
const ATTEMPTS = wholeNumber(1, 100);

const RETRY = shape({
  attempts: shape({ lookup: ATTEMPTS, download: ATTEMPTS, generation: ATTEMPTS }),
  rateLimitedAttempts: ATTEMPTS,
  serverErrors: oneOf('gateway', 'all'),
  retryUnsafe: boolean,
  firstDelayMs: milliseconds(0),
  maxDelayMs: milliseconds(0),
  maxRetryAfterMs: milliseconds(0),
});

/** GenAerial's options (types.ts: GenAerialOptions). */
export const checkClientOptions = shape({
  apiKey: string,
  baseUrl: string,
  profile: string,
  env: (value, name) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(name, 'an object of strings (such as process.env)', value);
  },
  timeoutMs: wholeNumber(1, MAX_TIMER_MS, ' (milliseconds; it sets AERIAL_TIMEOUT_MS)'),
  deadlineMs: milliseconds(1),
  retry: RETRY,
  connections: wholeNumber(1, 65_536),
  onRequest: callable,
  userAgent: string,
});

/** The options every call takes, and those of one kind of call (`extra`). */
export function checkCallOptions(options: unknown, extra: Record<string, Check> = {}): void {
  shape({ signal, deadlineMs: milliseconds(1), ...extra })(options, '');
}

/** Sort orders as list() takes them: one, or an array. */
export const sortOrders: Check = (value, name) => {
  const orders = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(orders) || orders.some((order) => typeof order !== 'string')) fail(name, "a sort order such as 'createdAt,desc', or an array of them", value);
};

export { boolean, milliseconds, string };
