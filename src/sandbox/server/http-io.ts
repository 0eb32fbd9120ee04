// The sandbox's HTTP plumbing: error bodies in the spec's shape, bounded body
// reading that always drains the socket, and JSON replies. No routing here.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { formatBytes } from '../../text/bytes.js';

/** A reply the routes decide on; the server turns it into `{status, error, message}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * A refusal of the image storage the temporary URLs point at, in the shape
 * Amazon S3 gives one (an XML `<Error>` with its `Code` and `Message`): what
 * the service's presigned storage URLs answer, rather than the API's JSON.
 */
export class StorageError extends HttpError {
  constructor(status: number, code: string, message: string, readonly details: Record<string, string> = {}) {
    super(status, code, message);
    this.name = 'StorageError';
  }
}

/** S3's XML error document: `<Error><Code>…</Code><Message>…</Message>…<RequestId>…</RequestId></Error>`. */
export function storageErrorBody(error: StorageError, requestId: string): string {
  const element = (name: string, value: string) => `<${name}>${escapeXml(value)}</${name}>`;
  const fields = [element('Code', error.code), element('Message', error.message), ...Object.entries(error.details).map(([name, value]) => element(name, value)), element('RequestId', requestId)];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${fields.join('')}</Error>`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}

export function validationFailed(message: string): HttpError {
  return new HttpError(400, 'ValidationFailed', message);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, 'NotFound', message);
}

export function methodNotAllowed(method: string, allowed: string[]): HttpError {
  return new HttpError(405, 'MethodNotAllowed', `${method} is not allowed here; use ${allowed.join(' or ')}`, {
    allow: allowed.join(', '),
  });
}

/** Largest request body the sandbox accepts; generation requests are a few hundred bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Past this we stop draining an oversized body and drop the connection: draining
 * lets an ordinary client read the 400, but nobody needs us to swallow gigabytes.
 */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export type BodyRead = { kind: 'ok'; bytes: Buffer } | { kind: 'tooLarge'; receivedBytes: number };

/**
 * Reads the whole body, keeping at most `limit` bytes. An oversized body is still
 * read to its end (and discarded) so the client gets a clean 400 instead of a reset.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_DRAIN_BYTES) {
    return Promise.resolve({ kind: 'tooLarge', receivedBytes: declared });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) chunks.push(chunk);
      else if (received > MAX_DRAIN_BYTES) {
        cleanup();
        resolve({ kind: 'tooLarge', receivedBytes: received });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve(received > limit ? { kind: 'tooLarge', receivedBytes: received } : { kind: 'ok', bytes: Buffer.concat(chunks) });
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    // 'close' before 'end' means the client went away mid-body.
    const onClose = () => onError(new Error('client closed the connection before sending the whole body'));
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * The body of a JSON endpoint, parsed: wrong content type, oversized, empty and
 * malformed bodies each get their own 400 ValidationFailed message.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const contentType = req.headers['content-type'];
  const body = await readBody(req, limit);
  if (!isJsonContentType(contentType)) {
    throw validationFailed(
      `Content-Type must be application/json; got ${contentType ? `'${contentType.slice(0, 80)}'` : 'none'}`,
    );
  }
  if (body.kind === 'tooLarge') {
    const error = validationFailed(`request body exceeds ${formatBytes(limit)} (received ${formatBytes(body.receivedBytes)})`);
    if (body.receivedBytes > MAX_DRAIN_BYTES) error.headers.connection = 'close';
    throw error;
  }
  return parseJson(body.bytes);
}

/** Lenient JSON for the control endpoints: any content type, empty means `{}`. */
export async function readOptionalJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, limit);
  if (body.kind === 'tooLarge') throw validationFailed(`request body exceeds ${formatBytes(limit)}`);
  if (body.bytes.length === 0) return {};
  return parseJson(body.bytes);
}

function parseJson(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw validationFailed('request body is empty; expected a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw validationFailed(`request body is not valid JSON: ${(error as Error).message}`);
  }
}


export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (error instanceof StorageError) {
    const text = storageErrorBody(error, randomBytes(8).toString('hex').toUpperCase());
    res.writeHead(error.status, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(text)), ...error.headers });
    res.end(text);
    return;
  }
  sendJson(res, error.status, { status: error.status, error: error.code, message: error.message }, error.headers);
}

/** Resets the connection of a request before anything is read or answered: its client sees a network error. */
export function resetConnection(req: IncomingMessage): void {
  try {
    req.socket.resetAndDestroy();
  } catch {
    req.socket.destroy();
  }
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0', 'cache-control': 'no-store' });
  res.end();
}

/** The query string as a plain object; repeated parameters become arrays (sort=a&sort=b). */
export function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** `http(s)://host:port` as the client addressed us, so links work through whatever name it used. */
export function publicBaseUrl(req: IncomingMessage, fallback: string): string {
  const host = req.headers.host;
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  if (host && /^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return `${scheme}://${host}`;
  return fallback;
}
