// Playing a scripted answer (scripts.ts) on one exchange: its delay, a reset
// connection, an answer of its own with the service's error body, or the
// sandbox's own answer shaped (headers added, cut after some bytes, held).
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { sleep } from '../faults.js';
import { findAccountByKey } from './accounts.js';
import type { Exchange, SandboxApp } from './app.js';
import { HttpError, readBody, resetConnection, StorageError, storageErrorBody } from './http-io.js';
import type { ScriptAnswer } from './scripts.js';
import { IMAGE_PATH_PREFIX } from './signing.js';

/** The service's error code for a status, as its error bodies give it (the sandbox's own names beyond the spec's). */
const API_ERRORS: Record<number, string> = {
  400: 'ValidationFailed',
  401: 'Unauthorized',
  402: 'InsufficientCredits',
  403: 'Forbidden',
  404: 'NotFound',
  429: 'RateLimited',
};

/** S3's codes for the same, for temporary image URLs. */
const STORAGE_ERRORS: Record<number, [string, string]> = {
  400: ['InvalidRequest', 'Invalid Request'],
  403: ['AccessDenied', 'Access Denied'],
  404: ['NoSuchKey', 'The specified key does not exist.'],
  500: ['InternalError', 'We encountered an internal error. Please try again.'],
  503: ['SlowDown', 'Please reduce your request rate.'],
};

/** The name of a status as an error code: 503 → ServiceUnavailable. */
function statusName(status: number): string {
  return (STATUS_CODES[status] ?? `Status${status}`).replace(/[^A-Za-z0-9 ]/g, '').replace(/(?:^|\s+)(\w)/g, (_, letter: string) => letter.toUpperCase());
}

/** The body and headers of an answer that replaces the sandbox's own, by where the request went. */
export function scriptedResponse(answer: ScriptAnswer & { status: number }, where: { storage: boolean; generation: boolean }): { headers: Record<string, string>; body: Buffer } {
  const { status, body } = answer;
  if (body === undefined) {
    if (status < 400) return { headers: {}, body: Buffer.alloc(0) };
    const note = `${STATUS_CODES[status] ?? `HTTP ${status}`} (a scripted answer)`;
    if (where.storage) {
      const [code, message] = STORAGE_ERRORS[status] ?? [statusName(status), STATUS_CODES[status] ?? `HTTP ${status}`];
      const text = storageErrorBody(new StorageError(status, code, `${message} (a scripted answer)`), 'SCRIPTED');
      return { headers: { 'content-type': 'application/xml' }, body: Buffer.from(text) };
    }
    const code = status === 500 && where.generation ? 'ErrorGeneratingImage' : (API_ERRORS[status] ?? statusName(status));
    const error = new HttpError(status, code, note);
    return { headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify({ status, error: error.code, message: error.message })) };
  }
  if (typeof body === 'string') return { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: Buffer.from(body) };
  if (ArrayBuffer.isView(body)) return { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  if (body instanceof ArrayBuffer) return { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from(body) };
  return { headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(body) ?? 'null') };
}

/** The error code a JSON error body names, for the request log. */
export function errorCodeOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    return typeof parsed?.error === 'string' ? parsed.error.slice(0, 100) : undefined;
  } catch {
    return /<Code>([^<]{1,100})<\/Code>/.exec(body.toString('utf8'))?.[1];
  }
}

/**
 * Plays a script's part of an exchange: its delay, then a reset connection,
 * or an answer of its own (true: the exchange is answered), or the shaping of
 * the sandbox's own answer, which the caller then makes (false).
 */
export async function playScript(app: SandboxApp, ex: Exchange, answer: ScriptAnswer): Promise<boolean> {
  if (answer.delayMs) {
    await sleep(answer.delayMs, ex.signal);
    if (ex.signal.aborted) {
      ex.res.destroy();
      return true;
    }
  }
  if (answer.drop) {
    ex.notes.dropped = true;
    resetConnection(ex.req);
    return true;
  }
  shapeResponse(ex.res, answer);
  if (answer.status === undefined) return false;
  const method = ex.req.method ?? 'GET';
  const storage = ex.url.pathname.startsWith(IMAGE_PATH_PREFIX);
  await noteRequest(app, ex, storage);
  const { headers, body } = scriptedResponse({ ...answer, status: answer.status }, { storage, generation: method === 'POST' && !storage });
  if (answer.status >= 400) ex.notes.error = errorCodeOf(body);
  ex.res.writeHead(answer.status, { ...headers, 'content-length': String(body.length), 'cache-control': 'no-store' });
  ex.res.end(method === 'HEAD' ? undefined : body);
  return true;
}

/** What the request log keeps of a request a script answered: its account (never failing on its key) and its JSON body. */
async function noteRequest(app: SandboxApp, ex: Exchange, storage: boolean): Promise<void> {
  const header = ex.req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key && !storage) ex.notes.keyId = findAccountByKey((await app.store.snapshot()).accounts, key)?.keyId ?? null;
  if (ex.req.method !== 'POST' && ex.req.method !== 'PUT' && ex.req.method !== 'PATCH') return;
  const read = await readBody(ex.req).catch(() => undefined);
  if (read?.kind !== 'ok' || read.bytes.length === 0) return;
  try {
    ex.notes.body = JSON.parse(read.bytes.toString('utf8')) as unknown;
  } catch {
    ex.notes.body = { unreadable: 'not JSON' };
  }
}

/**
 * Makes `res` deliver what a script says of whatever is written to it: its
 * headers added (replacing those of the same name), and the answer cut after
 * `truncateAfterBytes` bytes of body (then the connection closed) or, with
 * `stall`, held: nothing more is sent, and the response stays open until its
 * client leaves or the sandbox lets it go (reset, close).
 */
export function shapeResponse(res: ServerResponse, answer: ScriptAnswer): void {
  const extra = Object.fromEntries(Object.entries(answer.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const { stall = false } = answer;
  // Where the answer stops: before its headers (a stall alone), after so many bytes, or nowhere.
  const cut = answer.truncateAfterBytes ?? (stall ? -1 : undefined);
  const writeHead = res.writeHead.bind(res) as (status: number, headers: Record<string, string | string[] | number>) => ServerResponse;
  const write = res.write.bind(res) as (chunk: Buffer) => boolean;
  let sent = 0;
  let stopped = false;

  const stop = () => {
    stopped = true;
    if (stall) return;
    // Whatever was written goes out, then the connection closes, before the announced length was reached.
    const socket = res.socket;
    res.flushHeaders();
    socket?.end(() => socket.destroy());
  };

  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const given = rest.find((item): item is Record<string, string | string[] | number> => item !== null && typeof item === 'object' && !Array.isArray(item)) ?? {};
    const headers = { ...Object.fromEntries(Object.entries(given).map(([name, value]) => [name.toLowerCase(), value])), ...extra };
    if (cut === -1) {
      if (!stopped) stop();
      return res;
    }
    return writeHead(status, headers);
  }) as ServerResponse['writeHead'];

  const deliver = (chunk: unknown, encoding: unknown): void => {
    if (stopped || chunk === undefined || chunk === null) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    if (cut === undefined) {
      write(bytes);
      return;
    }
    const room = Math.max(0, cut - sent);
    if (bytes.length > 0 && room > 0) write(bytes.subarray(0, room));
    sent += Math.min(room, bytes.length);
    if (sent >= cut) stop();
  };

  res.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    deliver(chunk, encoding);
    const done = [encoding, callback].find((item): item is () => void => typeof item === 'function');
    if (done) process.nextTick(done);
    return true;
  }) as ServerResponse['write'];

  const end = res.end.bind(res) as (callback?: () => void) => ServerResponse;
  res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    if (cut === -1 && !stopped) {
      stop();
      return res;
    }
    deliver(chunk, encoding);
    // No more bytes than the cut: the whole answer went, and it ends as usual.
    if (!stopped) end(callback as (() => void) | undefined);
    return res;
  }) as ServerResponse['end'];
}
