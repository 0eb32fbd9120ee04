// The HTTP layer: one method per GenAerial v1 endpoint, typed results, typed
// errors. It knows nothing of terminals; `onTrace` is how callers observe it.
import { Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Agent } from './undici-agent.js';
import type { z } from 'zod';
import { printable } from '../printable.js';
import { ApiError, CliError, defaultCodeForStatus, ExitCode, NetworkError } from './errors.js';
import { checkDownloadHost, guardedLookup } from './download-guard.js';
import { download, type DownloadOutcome } from './image-download.js';
import { imageIdSegment } from './image-id.js';
import { JpegVerifier } from './jpeg-verifier.js';
import {
  AsyncAcceptedSchema,
  ErrorBodySchema,
  PageSchema,
  type AsyncAccepted,
  type GenerationRequest,
  type Page,
} from './schema.js';

export const API_PREFIX = '/api/external/v1/image-generation';

/** For commands that check every id before sending the first (delete). */
export { checkImageId } from './image-id.js';

export interface Trace {
  method: string;
  /** Full URL; never carries the key, which travels only in the x-api-key header. */
  url: string;
  status: number | 'error';
  ms: number;
  attempt: number;
  detail?: string;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  dispatcher?: Dispatcher;
  /** Longest wait for response headers (generation can be slow). */
  headersTimeoutMs?: number;
  /** Longest silence while a body is streaming. */
  bodyTimeoutMs?: number;
  /** How many times a 429 is retried before giving up with exit 8. */
  maxRateLimitRetries?: number;
  /** A Retry-After beyond this is capped, so a hostile server cannot park us for a year. */
  maxRetryAfterSeconds?: number;
  /** Longest time a whole response body may take: the body timeout alone never fires on a drip-fed body. */
  transferTimeoutMs?: number;
  /** Largest image accepted: an endless body must not fill the disk. */
  maxImageBytes?: number;
  onTrace?: (trace: Trace) => void;
  /** Sleeps between retries; injectable so tests need not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  userAgent?: string;
}

export interface ListQuery {
  page?: number;
  size?: number;
  sort?: string[];
}

export interface ImageResponse {
  body: Readable;
  contentType: string;
  contentLength?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

const MAX_JSON_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
const MAX_IMAGE_BYTES = 256 * 1024 * 1024;
const TRANSFER_TIMEOUT_MS = 10 * 60 * 1000;
/** A delete's 200 body is ignored; it is drained only briefly so the connection can be reused. */
const DRAIN_TIMEOUT_MS = 1000;

/** Milliseconds since a process.hrtime.bigint() reading (the global `performance` costs a module load at first use). */
function msSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds from a Retry-After header (delta-seconds or HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(raw)) return Number(raw);
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

interface BodyLimits {
  maxBytes: number;
  deadlineMs: number;
}

function tooLarge(maxBytes: number): CliError {
  return new CliError(`response body exceeds ${formatSize(maxBytes)}`, ExitCode.Server, 'ResponseTooLarge');
}

/** Passes a body through, refusing it once it grows past `maxBytes`. */
class SizeLimit extends Transform {
  private bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(tooLarge(this.maxBytes));
    callback(null, chunk);
  }
}

/** An image body: size-limited like any other and verified as a JPEG in the same stage. */
class LimitedJpeg extends JpegVerifier {
  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.bytes + chunk.length > this.maxBytes) return callback(tooLarge(this.maxBytes));
    super._transform(chunk, encoding, callback);
  }
}

function responseTimeout(deadlineMs: number): NetworkError {
  return new NetworkError(`request timed out: the response did not finish within ${deadlineMs / 1000}s`, 'ResponseTimeout', true);
}

/**
 * Watches a response body as it streams, through `guard` (which caps its size):
 * one that never finishes (endless or drip-fed, which the idle body timeout
 * never catches) meets a deadline, and a connection lost mid-body becomes a
 * NetworkError (exit 7) instead of an unexpected crash.
 */
function guardBody<T extends Transform>(body: Readable, deadlineMs: number, guard: T): T {
  const timer = setTimeout(() => {
    guard.destroy(responseTimeout(deadlineMs));
  }, deadlineMs);
  // Never the reason the process stays alive; the socket it guards is.
  timer.unref();
  // Registered before anything else listens, so the mapped error is the one the reader sees.
  body.on('error', (error) => guard.destroy(toNetworkError(error, true)));
  guard.on('close', () => {
    clearTimeout(timer);
    discard(body);
  });
  body.pipe(guard);
  return guard;
}

/** Drops a body that will not be read; undici reports that as an abort error, which nobody awaits. */
function discard(body: Readable | Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/** A whole body, within its limits. */
async function readBytes(body: Readable, limits: BodyLimits): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of guardBody(body, limits.deadlineMs, new SizeLimit(limits.maxBytes))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Like printable(), for text that may be markup: tags are dropped. */
function oneLine(text: string, max = 200): string {
  return printable(text.replace(/<[^>]*>/g, ' '), max);
}

/** Turns a network-level failure into a NetworkError saying whether the server may have acted on it. */
export function toNetworkError(error: unknown, bodySent: boolean): CliError {
  if (error instanceof CliError) return error;
  const err = error as { code?: string; message?: string; name?: string };
  if (err?.name === 'AbortError') return err as CliError;
  const code = err?.code ?? 'NetworkError';
  const notConnected = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH'].includes(code);
  const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
  const what = timedOut ? 'request timed out' : notConnected ? 'could not connect' : 'connection failed';
  return new NetworkError(`${what} (${code})${err?.message ? `: ${oneLine(err.message, 120)}` : ''}`, code, bodySent && !notConnected);
}

export interface PoolOptions {
  /** Connections per origin; batch raises it to its concurrency. */
  connections?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/** One keep-alive pool, shared by every request of a command. */
export function createDispatcher(options: PoolOptions = {}): Dispatcher {
  return new Agent({
    connections: options.connections,
    headersTimeout: options.headersTimeoutMs ?? 180_000,
    bodyTimeout: options.bodyTimeoutMs ?? 60_000,
    // Every socket's name is resolved through the guard: a link-local or metadata address is never connected to.
    connect: { timeout: 15_000, lookup: guardedLookup },
  });
}

export class GenAerialClient {
  readonly baseUrl: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher =
      options.dispatcher ??
      createDispatcher({ headersTimeoutMs: options.headersTimeoutMs, bodyTimeoutMs: options.bodyTimeoutMs });
  }

  /** Synchronous generation: the JPEG as a stream, after checking status and content type. */
  async generate(body: GenerationRequest, call: CallOptions = {}): Promise<ImageResponse> {
    const res = await this.send('POST', API_PREFIX, { json: body, signal: call.signal, retryOnServerError: false });
    return this.imageFrom(res);
  }

  /**
   * Synchronous generation written straight into a sink, for callers that
   * save many images (batch): `openSink` is called once a JPEG is on its way,
   * and its bytes go into the sink as undici parses them, verified as they
   * pass (image-download.ts), with no stream stages in between. Resolves with
   * the image's size once all of it is in the sink, which is left for the
   * caller to finish. `onImage` is told when the image starts arriving.
   */
  async generateInto(body: GenerationRequest, openSink: () => Writable, call: CallOptions & { onImage?: () => void } = {}): Promise<number> {
    const url = `${this.baseUrl}${API_PREFIX}`;
    const target = new URL(url);
    const payload = JSON.stringify(body);
    const headers = { ...this.requestHeaders(true), 'content-type': 'application/json' };
    for (let attempt = 1; ; attempt++) {
      const started = process.hrtime.bigint();
      let outcome: DownloadOutcome;
      try {
        outcome = await download(
          this.dispatcher,
          { origin: target.origin, path: target.pathname, method: 'POST', headers, body: payload },
          {
            imageProblem: (statusCode, answerHeaders) => this.imageProblem(answerHeaders, statusCode),
            openSink: () => {
              call.onImage?.();
              return openSink();
            },
            maxImageBytes: this.maxImageBytes,
            maxAnswerBytes: MAX_ERROR_BYTES,
            deadlineMs: this.transferTimeoutMs,
            networkError: (error) => toNetworkError(error, true),
            tooLarge: () => tooLarge(this.maxImageBytes),
            timedOut: () => responseTimeout(this.transferTimeoutMs),
            signal: call.signal,
          },
        );
      } catch (error) {
        this.trace({ method: 'POST', url, status: 'error', ms: msSince(started), attempt, detail: (error as Error).message });
        throw error;
      }
      if (outcome.kind === 'image') {
        this.trace({ method: 'POST', url, status: outcome.statusCode, ms: msSince(started), attempt });
        return outcome.bytes;
      }
      const error = this.errorFromAnswer(outcome.statusCode, outcome.headers, outcome.body);
      if (!(await this.waitToRetry(error, outcome.statusCode, attempt, { method: 'POST', url, started, retryOnServerError: false, signal: call.signal }))) {
        throw error;
      }
    }
  }

  /** Asynchronous generation: the acceptance record; the image arrives by webhook. */
  async generateAsync(body: GenerationRequest, callbackUrl: string, call: CallOptions = {}): Promise<AsyncAccepted> {
    const res = await this.send('POST', `${API_PREFIX}/async`, {
      json: body,
      headers: { 'x-callback-url': callbackUrl },
      signal: call.signal,
      retryOnServerError: false,
    });
    return this.jsonFrom(res, AsyncAcceptedSchema, 'acceptance record');
  }

  async list(query: ListQuery = {}, call: CallOptions = {}): Promise<Page> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.size !== undefined) params.set('size', String(query.size));
    for (const sort of query.sort ?? []) params.append('sort', sort);
    const qs = params.toString();
    const res = await this.send('GET', `${API_PREFIX}${qs ? `?${qs}` : ''}`, {
      signal: call.signal,
      retryOnServerError: true,
    });
    return this.jsonFrom(res, PageSchema, 'page of images');
  }

  async delete(id: string, call: CallOptions = {}): Promise<void> {
    const res = await this.send('DELETE', `${API_PREFIX}/${imageIdSegment(id)}`, {
      signal: call.signal,
      retryOnServerError: true,
    });
    // The 200 body is not shown in the spec: empty, text or JSON are all fine. It is
    // drained (bounded, briefly) rather than left open, which would hold the pool at exit.
    await readBytes(res.body as unknown as Readable, {
      maxBytes: MAX_ERROR_BYTES,
      deadlineMs: Math.min(DRAIN_TIMEOUT_MS, this.transferTimeoutMs),
    }).catch(() => undefined);
  }

  /**
   * Downloads a temporary image URL (list `url`, webhook `signedUrl`). The key is
   * never sent: these URLs carry their own signature and may point at other hosts.
   */
  async fetchImage(url: string, call: CallOptions = {}): Promise<ImageResponse> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CliError(`image URL is not a valid URL: ${oneLine(url, 80)}`, ExitCode.Server, 'BadImageUrl');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new CliError(`image URL must be http(s), got ${oneLine(parsed.protocol, 20)}`, ExitCode.Server, 'BadImageUrl');
    }
    checkDownloadHost(parsed.hostname);
    const res = await this.sendRaw('GET', parsed.toString(), { signal: call.signal, withKey: false, retryOnServerError: true });
    return this.imageFrom(res);
  }

  private get maxImageBytes(): number {
    return this.options.maxImageBytes ?? MAX_IMAGE_BYTES;
  }

  private get transferTimeoutMs(): number {
    return this.options.transferTimeoutMs ?? TRANSFER_TIMEOUT_MS;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private send(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal; retryOnServerError: boolean },
  ): Promise<Dispatcher.ResponseData> {
    return this.sendRaw(method, `${this.baseUrl}${path}`, { ...opts, withKey: true });
  }

  private async sendRaw(
    method: string,
    url: string,
    opts: {
      json?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
      withKey: boolean;
      retryOnServerError: boolean;
    },
  ): Promise<Dispatcher.ResponseData> {
    const wait = this.options.sleep ?? sleep;
    const headers = { ...this.requestHeaders(opts.withKey), ...opts.headers };
    let payload: string | undefined;
    if (opts.json !== undefined) {
      payload = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }

    for (let attempt = 1; ; attempt++) {
      const started = process.hrtime.bigint();
      let res: Dispatcher.ResponseData;
      try {
        const target = new URL(url);
        res = await this.dispatcher.request({
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: method as Dispatcher.HttpMethod,
          headers,
          body: payload,
          signal: opts.signal,
        });
      } catch (error) {
        const failure = toNetworkError(error, payload !== undefined);
        this.trace({ method, url, status: 'error', ms: msSince(started), attempt, detail: failure.message });
        const safeToRetry = opts.retryOnServerError && failure instanceof NetworkError;
        if (safeToRetry && attempt <= 2) {
          await wait(250 * 2 ** attempt, opts.signal);
          continue;
        }
        throw failure;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) {
        this.trace({ method, url, status: res.statusCode, ms: msSince(started), attempt });
        return res;
      }

      const error = await this.errorFrom(res);
      if (!(await this.waitToRetry(error, res.statusCode, attempt, { method, url, started, retryOnServerError: opts.retryOnServerError, signal: opts.signal }))) {
        throw error;
      }
    }
  }

  /**
   * After an error answer: traces it and, when it is worth another attempt (a
   * 429 within the limit, or a 502-504 where repeating is safe), waits the
   * Retry-After or a backoff and returns true.
   */
  private async waitToRetry(
    error: CliError,
    statusCode: number,
    attempt: number,
    call: { method: string; url: string; started: bigint; retryOnServerError: boolean; signal?: AbortSignal },
  ): Promise<boolean> {
    const maxRateLimitRetries = this.options.maxRateLimitRetries ?? 3;
    const maxRetryAfter = this.options.maxRetryAfterSeconds ?? 60;
    const retryable =
      (statusCode === 429 && attempt <= maxRateLimitRetries) ||
      (call.retryOnServerError && [502, 503, 504].includes(statusCode) && attempt <= 2);
    const asked = error instanceof ApiError ? error.retryAfterSeconds : undefined;
    const backoff = Math.min(maxRetryAfter, asked ?? 0.5 * 2 ** (attempt - 1));
    const waitMs = backoff * 1000 * (asked === undefined ? 0.5 + Math.random() / 2 : 1);
    // The trace shows the wait actually taken, so a capped Retry-After is visible with --verbose.
    const capped = asked !== undefined && asked > maxRetryAfter ? ` (Retry-After ${Math.round(asked)}s capped at ${maxRetryAfter}s)` : '';
    const detail = retryable ? `retrying in ${(waitMs / 1000).toFixed(1)}s${capped}` : undefined;
    this.trace({ method: call.method, url: call.url, status: statusCode, ms: msSince(call.started), attempt, detail });
    if (retryable) await (this.options.sleep ?? sleep)(waitMs, call.signal);
    return retryable;
  }

  private requestHeaders(withKey: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent ?? 'aerial-cli',
      accept: 'application/json, image/jpeg;q=0.9, */*;q=0.1',
    };
    if (withKey) headers['x-api-key'] = this.options.apiKey;
    return headers;
  }

  private trace(trace: Trace): void {
    this.options.onTrace?.(trace);
  }

  private async errorFrom(res: Dispatcher.ResponseData): Promise<CliError> {
    if (res.statusCode >= 300 && res.statusCode < 400) {
      // Discarded, not drained: an endless body would otherwise hold the pool open at exit.
      discard(res.body);
      return this.errorFromAnswer(res.statusCode, res.headers, Buffer.alloc(0));
    }
    let bytes: Buffer = Buffer.alloc(0);
    try {
      bytes = await readBytes(res.body as unknown as Readable, { maxBytes: MAX_ERROR_BYTES, deadlineMs: this.transferTimeoutMs });
    } catch {
      // An unreadable error body still leaves the status to report.
    }
    return this.errorFromAnswer(res.statusCode, res.headers, bytes);
  }

  /** The error an answer other than 2xx stands for, from its status, headers and (bounded) body. */
  private errorFromAnswer(statusCode: number, headers: Dispatcher.ResponseData['headers'], bytes: Buffer): CliError {
    const retryAfter = parseRetryAfter(headers['retry-after']);
    if (statusCode >= 300 && statusCode < 400) {
      const location = header(headers, 'location');
      return new CliError(
        `unexpected redirect (HTTP ${statusCode}${location ? ` to ${oneLine(location, 100)}` : ''}); not followed`,
        ExitCode.Server,
        'UnexpectedRedirect',
        statusCode,
      );
    }
    const text = new TextDecoder('utf-8').decode(bytes);
    let code = defaultCodeForStatus(statusCode);
    let message = '';
    const contentType = header(headers, 'content-type') ?? '';
    if (text.trim()) {
      let parsedJson: unknown;
      try {
        parsedJson = JSON.parse(text);
      } catch {
        parsedJson = undefined;
      }
      const body = ErrorBodySchema.safeParse(parsedJson);
      // Whatever the server says is shown on one line, without its control characters.
      if (body.success) {
        code = printable(body.data.error, 60) || code;
        message = printable(body.data.message ?? '');
      } else if (parsedJson && typeof parsedJson === 'object' && 'message' in parsedJson) {
        message = printable(String((parsedJson as { message: unknown }).message));
      } else if (!contentType.includes('html')) {
        message = oneLine(text);
      } else {
        message = `HTML error page${/<title>([^<]*)<\/title>/i.test(text) ? `: ${oneLine(RegExp.$1, 80)}` : ''}`;
      }
    }
    if (!message) message = `HTTP ${statusCode}${statusCode === 401 ? ': the API key is missing or invalid' : ''}`;
    return new ApiError(statusCode, code, message, retryAfter);
  }

  private async jsonFrom<S extends z.ZodTypeAny>(res: Dispatcher.ResponseData, schema: S, what: string): Promise<z.infer<S>> {
    const bytes = await readBytes(res.body as unknown as Readable, { maxBytes: MAX_JSON_BYTES, deadlineMs: this.transferTimeoutMs });
    let text: string;
    try {
      // JSON is UTF-8 (RFC 8259); turning bad bytes into U+FFFD would hand scripts ids that match nothing.
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new CliError(`server sent an unreadable ${what} (invalid UTF-8)`, ExitCode.Server, 'UnexpectedResponse', res.statusCode);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new CliError(`server sent an unreadable ${what} (not JSON)`, ExitCode.Server, 'UnexpectedResponse', res.statusCode);
    }
    const result = schema.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new CliError(
        `server sent an unexpected ${what}: ${issue ? `${issue.path.join('.') || 'body'} ${issue.message}` : 'invalid'}`,
        ExitCode.Server,
        'UnexpectedResponse',
        res.statusCode,
      );
    }
    return result.data;
  }

  private imageFrom(res: Dispatcher.ResponseData): ImageResponse {
    const problem = this.imageProblem(res.headers, res.statusCode);
    if (problem) {
      discard(res.body);
      throw problem;
    }
    const length = Number(header(res.headers, 'content-length'));
    return {
      // Verified as a JPEG as it streams: writing it to disk needs no stage of its own for that.
      body: guardBody(res.body as unknown as Readable, this.transferTimeoutMs, new LimitedJpeg(this.maxImageBytes)),
      contentType: header(res.headers, 'content-type') ?? '',
      contentLength: Number.isFinite(length) && length >= 0 ? length : undefined,
    };
  }

  /** What is wrong with a 2xx answer that should carry an image: not a JPEG, or announced over the size cap. */
  private imageProblem(headers: Dispatcher.ResponseData['headers'], statusCode: number): CliError | undefined {
    const contentType = header(headers, 'content-type') ?? '';
    if (!/^image\/(jpeg|jpg|pjpeg)\b/i.test(contentType.trim())) {
      return new CliError(
        `expected an image/jpeg response, got ${contentType ? `'${oneLine(contentType, 60)}'` : 'no content type'}`,
        ExitCode.Server,
        'UnexpectedResponse',
        statusCode,
      );
    }
    const length = Number(header(headers, 'content-length'));
    if (Number.isFinite(length) && length > this.maxImageBytes) {
      return new CliError(`image of ${formatSize(length)} exceeds the ${formatSize(this.maxImageBytes)} limit`, ExitCode.Server, 'ResponseTooLarge', statusCode);
    }
    return undefined;
  }

}
