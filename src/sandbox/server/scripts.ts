// Scripted answers (the fixture's `sandbox.use(match, answer)`): a test says
// what the next matching requests get (a 503 with Retry-After, a 401, a body
// cut short, a connection reset, an answer that never comes) instead of
// turning a global knob and hoping. Scripts queue in the order they were
// added; a request takes the first one still matching, and each answers
// `times` requests (1 unless told) before it is spent. A request no script
// matches is answered as the service would answer it.
//
// An answer with a `status` replaces the sandbox's own: nothing is charged or
// stored, and a 4xx or 5xx comes with the service's error body (the API's JSON
// `{status, error, message}`, or S3's XML for a temporary image URL) unless a
// body is given. An answer without one lets the sandbox answer as usual and
// shapes that answer: headers added, delayed, cut after some bytes, held.
// How a script is played on an exchange is scripted-answer.ts.
import { MAX_LATENCY_MS } from '../faults.js';
import { IMAGE_PATH_PREFIX } from './signing.js';

/** Which requests a script answers. */
export interface ScriptMatch {
  /** GET, POST, DELETE… in any case; any method when not given. */
  method?: string;
  /** The URL's path (no query): exact, with `*` standing for any characters, or a RegExp; any scripted path when not given. */
  path?: string | RegExp;
  /** How many matching requests it answers before it is spent: a whole number from 1, or Infinity; default 1. */
  times?: number;
}

/** What they get. */
export interface ScriptAnswer {
  /** The status to answer with instead of the sandbox's own answer (nothing is then charged or stored). */
  status?: number;
  /** Headers added to the answer (or replacing the sandbox's own of the same name). */
  headers?: Record<string, string>;
  /** The body of a `status` answer: text, bytes, or a value sent as JSON. Default: the service's error body for a 4xx or 5xx, else none. */
  body?: unknown;
  /** Milliseconds to wait before the request is handled. */
  delayMs?: number;
  /** Reset the connection before anything is read or answered (the client sees a network error). */
  drop?: boolean;
  /** Send the headers and this many bytes of the body, then close the connection (or hold it, with `stall`). */
  truncateAfterBytes?: number;
  /** Never finish: nothing is sent (or only the headers and `truncateAfterBytes` bytes), and the connection is held open until the client gives up, reset() or close(). */
  stall?: boolean;
}

interface Script {
  method?: string;
  path?: (pathname: string) => boolean;
  left: number;
  answer: ScriptAnswer;
}

const MATCH_FIELDS = ['method', 'path', 'times'];
const ANSWER_FIELDS = ['status', 'headers', 'body', 'delayMs', 'drop', 'truncateAfterBytes', 'stall'];
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether a request may be scripted: the API and the temporary image URLs, never the sandbox's own control endpoints. */
export function isScriptablePath(pathname: string): boolean {
  return pathname === '/api' || pathname.startsWith('/api/') || pathname.startsWith(IMAGE_PATH_PREFIX);
}

export class ScriptedAnswers {
  private scripts: Script[] = [];

  /** Checks a script (a TypeError or RangeError naming the field at fault) and queues it. */
  add(match: ScriptMatch, answer: ScriptAnswer): void {
    this.scripts.push(checkScript(match, answer));
  }

  /** The answer the first unspent script matching this request gives, or undefined when none does. */
  take(method: string, pathname: string): ScriptAnswer | undefined {
    const path = withoutTrailingSlash(pathname);
    const index = this.scripts.findIndex((script) => (!script.method || script.method === method.toUpperCase()) && (!script.path || script.path(path)));
    if (index < 0) return undefined;
    const script = this.scripts[index]!;
    script.left -= 1;
    if (script.left <= 0) this.scripts.splice(index, 1);
    return script.answer;
  }

  /** How many scripts are not spent yet. */
  get pending(): number {
    return this.scripts.length;
  }

  clear(): void {
    this.scripts = [];
  }
}

function checkScript(match: ScriptMatch, answer: ScriptAnswer): Script {
  if (!isPlainObject(match)) throw new TypeError(`match must be an object such as { method: 'POST', times: 1 }; got ${describe(match)}`);
  if (!isPlainObject(answer)) throw new TypeError(`answer must be an object such as { status: 503 }; got ${describe(answer)}`);
  unknownFields('match', match, MATCH_FIELDS);
  unknownFields('answer', answer, ANSWER_FIELDS);
  const script: Script = { left: 1, answer: { ...answer } };

  if (match.method !== undefined) {
    if (typeof match.method !== 'string' || !METHOD.test(match.method)) throw new TypeError(`match.method must be an HTTP method such as 'POST'; got ${describe(match.method)}`);
    script.method = match.method.toUpperCase();
  }
  if (match.path !== undefined) script.path = pathMatcher(match.path);
  if (match.times !== undefined) {
    if (typeof match.times !== 'number' || !(Number.isSafeInteger(match.times) || match.times === Infinity) || match.times < 1) {
      throw new RangeError(`match.times must be a whole number of requests from 1, or Infinity; got ${describe(match.times)}`);
    }
    script.left = match.times;
  }

  const { status, headers, body, delayMs, drop, truncateAfterBytes, stall } = answer;
  if (status !== undefined && (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)) {
    throw new RangeError(`answer.status must be an HTTP status from 200 to 599; got ${describe(status)}`);
  }
  if (headers !== undefined) {
    if (!isPlainObject(headers)) throw new TypeError(`answer.headers must be an object of header names and text values; got ${describe(headers)}`);
    for (const [name, value] of Object.entries(headers)) {
      if (!METHOD.test(name)) throw new TypeError(`answer.headers has ${JSON.stringify(name)}, which is not a header name`);
      if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw new TypeError(`answer.headers[${JSON.stringify(name)}] must be text on one line; got ${describe(value)}`);
    }
  }
  if (body !== undefined) {
    if (status === undefined) throw new TypeError('answer.body needs answer.status: without one the sandbox answers with its own body');
    if (typeof body === 'function' || typeof body === 'symbol' || typeof body === 'bigint') throw new TypeError(`answer.body must be text, bytes or a JSON value; got ${describe(body)}`);
  }
  if (delayMs !== undefined && (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_LATENCY_MS)) {
    throw new RangeError(`answer.delayMs must be between 0 and ${MAX_LATENCY_MS} (milliseconds); got ${describe(delayMs)}`);
  }
  for (const [name, value] of [['drop', drop], ['stall', stall]] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`answer.${name} must be true or false; got ${describe(value)}`);
  }
  if (truncateAfterBytes !== undefined && (typeof truncateAfterBytes !== 'number' || !Number.isSafeInteger(truncateAfterBytes) || truncateAfterBytes < 0)) {
    throw new RangeError(`answer.truncateAfterBytes must be a whole number of bytes, 0 or more; got ${describe(truncateAfterBytes)}`);
  }
  if (drop) {
    const also = (['status', 'headers', 'body', 'truncateAfterBytes', 'stall'] as const).filter((name) => answer[name] !== undefined && answer[name] !== false);
    if (also.length) throw new TypeError(`answer.drop resets the connection before anything is answered; it cannot be combined with answer.${also[0]}`);
  }
  return script;
}

function pathMatcher(path: unknown): (pathname: string) => boolean {
  if (path instanceof RegExp) {
    const pattern = new RegExp(path.source, path.flags.replace(/[gy]/g, ''));
    return (pathname) => pattern.test(pathname);
  }
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`match.path must be a path starting with / (with * for any characters) or a RegExp; got ${describe(path)}`);
  const wanted = withoutTrailingSlash(path);
  if (!wanted.includes('*')) return (pathname) => pathname === wanted;
  const pattern = new RegExp(`^${wanted.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (pathname) => pattern.test(pathname);
}

function withoutTrailingSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}

function unknownFields(what: string, value: object, known: string[]): void {
  const unknown = Object.keys(value).find((name) => !known.includes(name));
  if (unknown !== undefined) throw new TypeError(`${what}.${unknown} is not a setting of a scripted ${what}; it takes ${known.join(', ')}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RegExp) && !ArrayBuffer.isView(value);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}
