// The HTTP layer: one method per GenAerial v1 endpoint, typed results, typed
// errors. It knows nothing of terminals; `onTrace` is how callers observe it.
import { Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { formatBytes } from '../bytes.js';
import { printable } from '../printable.js';
import { directDispatcher } from './dispatcher.js';
import { checkDownloadHost } from './download-guard.js';
import { ApiError, CliError, defaultCodeForStatus, ExitCode } from './errors.js';
import { download, type DownloadOutcome } from './image-download.js';
import { imageIdSegment } from './image-id.js';
import { JpegVerifier } from './jpeg-verifier.js';
import { isTransient, networkFailure, oneLine, responseTimeout, type FailureScene } from './network-failure.js';
import type { ProxySettings } from './proxy.js';
import { API_PATH } from './spec.js';
import { CallBudget, DEFAULT_TIMEOUTS, retryDelayMs, type CallKind, type Timeouts } from './timeouts.js';
import {
  AsyncAcceptedSchema,
  ErrorBodySchema,
  PageSchema,
  type AsyncAccepted,
  type GenerationRequest,
  type Page,
} from './schema.js';

// Loaded with the client by the commands that make requests, in the same bundle chunk.
export { openNetwork } from './network.js';


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
  /** The command's connection pool (createDispatcher); a direct one of the client's own when absent. */
  dispatcher?: Dispatcher;
  /** How long each kind of call waits, stage by stage (timeouts.ts). */
  timeouts?: Timeouts;
  /** The proxies `dispatcher` goes through, so a failure can name the one involved. */
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS as set, so a certificate that cannot be verified gets the right advice. */
  extraCaCerts?: string;
  /** How many times a 429 is retried before giving up with exit 8. */
  maxRateLimitRetries?: number;
  /** A Retry-After beyond this is capped, so a hostile server cannot park us for a year. */
  maxRetryAfterSeconds?: number;
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
/**
 * How much of a body undici may hold before it stops reading, when a proxy is
 * in use. undici 7 (the last for Node 20) fails a response with "other side
 * closed" when the peer closes the connection while its parser waits on a slow
 * reader, even though every byte has arrived; forward proxies such as
 * tinyproxy close after each response without saying so. Taking the body in
 * without waiting keeps that from happening to any image of ordinary size.
 */
const PROXIED_BODY_BUFFER = 16 * 1024 * 1024;
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

function tooLarge(maxBytes: number): CliError {
  return new CliError(`response body exceeds ${formatBytes(maxBytes)}`, ExitCode.Server, 'ResponseTooLarge');
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

/** The request an answer came to, and what its body may still take: a body that fails is reported with it. */
interface Exchange {
  scene: FailureScene;
  /** Longest the whole body may take from now. */
  responseMs: number;
}

type Answer = Dispatcher.ResponseData & { exchange: Exchange };

/**
 * Watches a response body as it streams, through `guard` (which caps its size):
 * one that never finishes (endless or drip-fed, which the idle body timeout
 * never catches) meets a deadline, and a connection lost mid-body becomes a
 * NetworkError (exit 7) instead of an unexpected crash.
 */
function guardBody<T extends Transform>(body: Readable, exchange: Exchange, guard: T, deadlineMs = exchange.responseMs): T {
  const timer = setTimeout(() => {
    guard.destroy(responseTimeout(exchange.scene.url.host, deadlineMs, exchange.scene.attempts));
  }, deadlineMs);
  // Never the reason the process stays alive; the socket it guards is.
  timer.unref();
  // Registered before anything else listens, so the mapped error is the one the reader sees.
  body.on('error', (error) => guard.destroy(networkFailure(error, { ...exchange.scene, bodySent: true })));
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

/** A whole body, within its size limit and its deadline. */
async function readBytes(res: Answer, maxBytes: number, deadlineMs = res.exchange.responseMs): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of guardBody(res.body as unknown as Readable, res.exchange, new SizeLimit(maxBytes), deadlineMs)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class GenAerialClient {
  readonly baseUrl: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? directDispatcher({ connectMs: this.timeouts.connectMs });
  }

  /** Synchronous generation: the JPEG as a stream, after checking status and content type. */
  async generate(body: GenerationRequest, call: CallOptions = {}): Promise<ImageResponse> {
    const res = await this.send('POST', API_PATH, { json: body, signal: call.signal, kind: 'generation' });
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
    const url = `${this.baseUrl}${API_PATH}`;
    const target = new URL(url);
    const payload = JSON.stringify(body);
    const headers = { ...this.requestHeaders(true), 'content-type': 'application/json' };
    const budget = new CallBudget(this.timeouts.calls.generation);
    for (let attempt = 1; ; attempt++) {
      const started = process.hrtime.bigint();
      const scene = this.scene(target, attempt, true, budget);
      const deadlineMs = budget.responseMs();
      let outcome: DownloadOutcome;
      try {
        outcome = await download(
          this.dispatcher,
          {
            origin: target.origin,
            path: target.pathname,
            method: 'POST',
            headers,
            body: payload,
            headersTimeout: scene.headersMs,
            bodyTimeout: scene.bodyIdleMs,
          },
          {
            imageProblem: (statusCode, answerHeaders) => this.imageProblem(answerHeaders, statusCode),
            openSink: () => {
              call.onImage?.();
              return openSink();
            },
            maxImageBytes: this.maxImageBytes,
            maxAnswerBytes: MAX_ERROR_BYTES,
            deadlineMs,
            networkError: (error) => networkFailure(error, scene),
            tooLarge: () => tooLarge(this.maxImageBytes),
            timedOut: () => responseTimeout(target.host, deadlineMs, attempt),
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
      if (!(await this.waitToRetry(error, outcome.statusCode, attempt, { method: 'POST', url, started, budget, signal: call.signal }))) {
        throw error;
      }
    }
  }

  /** Asynchronous generation: the acceptance record; the image arrives by webhook. */
  async generateAsync(body: GenerationRequest, callbackUrl: string, call: CallOptions = {}): Promise<AsyncAccepted> {
    const res = await this.send('POST', `${API_PATH}/async`, {
      json: body,
      headers: { 'x-callback-url': callbackUrl },
      signal: call.signal,
      kind: 'generation',
    });
    return this.jsonFrom(res, AsyncAcceptedSchema, 'acceptance record');
  }

  async list(query: ListQuery = {}, call: CallOptions = {}): Promise<Page> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.size !== undefined) params.set('size', String(query.size));
    for (const sort of query.sort ?? []) params.append('sort', sort);
    const qs = params.toString();
    const res = await this.send('GET', `${API_PATH}${qs ? `?${qs}` : ''}`, {
      signal: call.signal,
      kind: 'lookup',
    });
    return this.jsonFrom(res, PageSchema, 'page of images');
  }

  async delete(id: string, call: CallOptions = {}): Promise<void> {
    const res = await this.send('DELETE', `${API_PATH}/${imageIdSegment(id)}`, {
      signal: call.signal,
      kind: 'lookup',
    });
    // The 200 body is not shown in the spec: empty, text or JSON are all fine. It is
    // drained (bounded, briefly) rather than left open, which would hold the pool at exit.
    await readBytes(res, MAX_ERROR_BYTES, Math.min(DRAIN_TIMEOUT_MS, res.exchange.responseMs)).catch(() => undefined);
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
    const res = await this.sendRaw('GET', parsed.toString(), { signal: call.signal, withKey: false, kind: 'download' });
    return this.imageFrom(res);
  }

  private get maxImageBytes(): number {
    return this.options.maxImageBytes ?? MAX_IMAGE_BYTES;
  }

  private get timeouts(): Timeouts {
    return this.options.timeouts ?? DEFAULT_TIMEOUTS;
  }

  /** The request an attempt is making, for reporting what became of it. */
  private scene(url: URL, attempts: number, bodySent: boolean, budget: CallBudget): FailureScene {
    return {
      url,
      attempts,
      bodySent,
      connectMs: this.timeouts.connectMs,
      headersMs: budget.headersMs(),
      bodyIdleMs: budget.limits.bodyIdleMs,
      proxy: this.options.proxy,
      extraCaCerts: this.options.extraCaCerts,
    };
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private send(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal; kind: CallKind },
  ): Promise<Answer> {
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
      kind: CallKind;
    },
  ): Promise<Answer> {
    const wait = this.options.sleep ?? sleep;
    const headers = { ...this.requestHeaders(opts.withKey), ...opts.headers };
    let payload: string | undefined;
    if (opts.json !== undefined) {
      payload = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }

    const target = new URL(url);
    const budget = new CallBudget(this.timeouts.calls[opts.kind]);
    for (let attempt = 1; ; attempt++) {
      const started = process.hrtime.bigint();
      const scene = this.scene(target, attempt, payload !== undefined, budget);
      let res: Dispatcher.ResponseData;
      try {
        res = await this.dispatcher.request({
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: method as Dispatcher.HttpMethod,
          headers,
          body: payload,
          signal: opts.signal,
          headersTimeout: scene.headersMs,
          bodyTimeout: scene.bodyIdleMs,
          highWaterMark: this.options.proxy ? PROXIED_BODY_BUFFER : undefined,
        });
      } catch (error) {
        const failure = networkFailure(error, { ...scene, elapsedMs: budget.elapsedMs() });
        this.trace({ method, url, status: 'error', ms: msSince(started), attempt, detail: failure.message });
        const delayMs = retryDelayMs(attempt);
        if (budget.limits.attempts > attempt && isTransient(failure) && budget.allowsRetry(delayMs)) {
          await wait(delayMs, opts.signal);
          continue;
        }
        throw failure;
      }
      const answer = { ...res, exchange: { scene, responseMs: budget.responseMs() } };
      if (res.statusCode >= 200 && res.statusCode < 300) {
        this.trace({ method, url, status: res.statusCode, ms: msSince(started), attempt });
        return answer;
      }

      const error = await this.errorFrom(answer);
      if (!(await this.waitToRetry(error, res.statusCode, attempt, { method, url, started, budget, signal: opts.signal }))) {
        throw error;
      }
    }
  }

  /**
   * After an error answer: traces it and, when it is worth another attempt (a
   * 429 within the limit, or a 502-504 where repeating is safe) that fits in
   * the call's budget, waits the Retry-After or a backoff and returns true.
   */
  private async waitToRetry(
    error: CliError,
    statusCode: number,
    attempt: number,
    call: { method: string; url: string; started: bigint; budget: CallBudget; signal?: AbortSignal },
  ): Promise<boolean> {
    const maxRateLimitRetries = this.options.maxRateLimitRetries ?? 3;
    const maxRetryAfter = this.options.maxRetryAfterSeconds ?? 60;
    const asked = error instanceof ApiError ? error.retryAfterSeconds : undefined;
    const backoff = Math.min(maxRetryAfter, asked ?? 0.5 * 2 ** (attempt - 1));
    const waitMs = backoff * 1000 * (asked === undefined ? 0.5 + Math.random() / 2 : 1);
    const rateLimited = statusCode === 429 && attempt <= maxRateLimitRetries;
    const retryable =
      rateLimited || (call.budget.limits.attempts > attempt && [502, 503, 504].includes(statusCode) && call.budget.allowsRetry(waitMs));
    // The trace shows the wait actually taken, so a capped Retry-After is visible with --verbose.
    const capped = asked !== undefined && asked > maxRetryAfter ? ` (Retry-After ${Math.round(asked)}s capped at ${maxRetryAfter}s)` : '';
    const detail = retryable ? `retrying in ${(waitMs / 1000).toFixed(1)}s${capped}` : undefined;
    this.trace({ method: call.method, url: call.url, status: statusCode, ms: msSince(call.started), attempt, detail });
    if (retryable) await (this.options.sleep ?? sleep)(waitMs, call.signal);
    if (rateLimited) call.budget.exclude(waitMs);
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

  private async errorFrom(res: Answer): Promise<CliError> {
    if (res.statusCode >= 300 && res.statusCode < 400) {
      // Discarded, not drained: an endless body would otherwise hold the pool open at exit.
      discard(res.body);
      return this.errorFromAnswer(res.statusCode, res.headers, Buffer.alloc(0));
    }
    let bytes: Buffer = Buffer.alloc(0);
    try {
      bytes = await readBytes(res, MAX_ERROR_BYTES);
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

  private async jsonFrom<S extends z.ZodTypeAny>(res: Answer, schema: S, what: string): Promise<z.infer<S>> {
    const bytes = await readBytes(res, MAX_JSON_BYTES);
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

  private imageFrom(res: Answer): ImageResponse {
    const problem = this.imageProblem(res.headers, res.statusCode);
    if (problem) {
      discard(res.body);
      throw problem;
    }
    const length = Number(header(res.headers, 'content-length'));
    return {
      // Verified as a JPEG as it streams: writing it to disk needs no stage of its own for that.
      body: guardBody(res.body as unknown as Readable, res.exchange, new LimitedJpeg(this.maxImageBytes)),
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
      return new CliError(`image of ${formatBytes(length)} exceeds the ${formatBytes(this.maxImageBytes)} limit`, ExitCode.Server, 'ResponseTooLarge', statusCode);
    }
    return undefined;
  }

}
