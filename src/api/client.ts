// The HTTP layer: one method per GenAerial v1 endpoint, typed results, typed
// errors. It knows nothing of terminals; `onTrace` is how callers observe it.
import { isAscii } from 'node:buffer';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { formatBytes } from '../text/bytes.js';
import { printable } from '../text/printable.js';
import { directDispatcher } from './dispatcher.js';
import { checkDownloadHost } from './download-guard.js';
import { apiErrorFor, BadResponseError, defaultCodeForStatus, ImageUrlRefusedError, RequestError, TimeoutError } from './errors.js';
import { download, type ImageSink, type ReceivedImage } from './image-download.js';
import { imageIdSegment } from './image-id.js';
import { networkFailure, oneLine, responseTimeout, type FailureScene } from './network-failure.js';
import type { ProxySettings } from './proxy.js';
import { DEFAULT_RETRY_POLICY, withRetries, type Attempt, type RetryHooks, type RetryNotice, type RetryPolicy } from './retry.js';
import type { Sleep } from './sleep.js';
import { Redactor, type Redact } from '../text/secrets.js';
import { API_PATH } from './spec.js';
import { CallBudget, DEFAULT_TIMEOUTS, timeoutMessage, type CallKind, type Timeouts } from './timeouts.js';
import {
  asyncAcceptedSchema,
  errorBodySchema,
  isPage,
  pageSchema,
  type AsyncAccepted,
  type GenerationRequest,
  type Page,
} from './schema.js';

// Loaded with the client by the commands that make requests, in the same bundle chunk.
export { openNetwork } from './network.js';
import { openNetwork, type NetworkSetup } from './network.js';


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
  /** How calls are retried (retry.ts): DEFAULT_RETRY_POLICY for single commands; batch and export pass theirs. */
  retry?: RetryPolicy;
  /** The proxies `dispatcher` goes through, so a failure can name the one involved. */
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS as set, so a certificate that cannot be verified gets the right advice. */
  extraCaCerts?: string;
  /** AERIAL_MAX_RETRY_AFTER: caps every Retry-After, whatever the policy. */
  maxRetryAfterSeconds?: number;
  /** Largest image accepted: an endless body must not fill the disk. */
  maxImageBytes?: number;
  /**
   * The longest one attempt may take, from sending to its whole answer, on a
   * timer of its own (the library's timeoutMs). undici's stage timeouts are
   * kept on a coarse clock that can fire up to a second late; this one fires
   * on time, as a TimeoutError coded AttemptTimeout naming the stage the attempt was in.
   */
  attemptTimeoutMs?: number;
  onTrace?: (trace: Trace) => void;
  /** Sleeps between retries; injectable so tests need not wait. */
  sleep?: Sleep;
  userAgent?: string;
  /**
   * Applied to a service's text before it becomes part of an error (secrets.ts):
   * the run's redaction; absent, one that knows `apiKey`.
   */
  redact?: Redact;
}

export interface ListQuery {
  page?: number;
  size?: number;
  sort?: string[];
}

export interface CallOptions {
  signal?: AbortSignal;
  /** What the caller's unit of work adds to this call's attempts (a batch row: its slot, its stop, its progress). */
  retry?: RetryHooks;
  /** The call is one attempt of an operation the caller retries as a whole (an async generation): it is sent once. */
  attempt?: Attempt;
  /** For image calls: told when an image starts arriving. */
  onImage?: () => void;
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

/** The code and message of an XML error document as S3 writes one, or undefined for any other text. */
function storageError(text: string): { code: string; message: string } | undefined {
  if (!/^\s*(<\?xml[^>]*\?>\s*)?<Error>/.test(text)) return undefined;
  const element = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
  const code = element('Code');
  if (code === undefined) return undefined;
  const unescape = (value: string) => value.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(lt|gt|amp|quot|apos));/gi, (_, dec: string, hex: string, name: string) =>
    dec ? String.fromCodePoint(Number(dec) % 0x110000) : hex ? String.fromCodePoint(parseInt(hex, 16) % 0x110000) : ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" } as Record<string, string>)[name.toLowerCase()]!);
  return { code: unescape(code), message: unescape(element('Message') ?? '') };
}

function tooLarge(maxBytes: number): BadResponseError {
  return new BadResponseError(`response body exceeds ${formatBytes(maxBytes)}`, 'ResponseTooLarge');
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
 * NetworkError instead of an unexpected crash.
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

/** Strict UTF-8: bad bytes are an error, not U+FFFD. Without a stream, a decode keeps no state between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A whole body, within its size limit and its deadline. */
async function readBytes(res: Answer, maxBytes: number, deadlineMs = res.exchange.responseMs): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of guardBody(res.body as unknown as Readable, res.exchange, new SizeLimit(maxBytes), deadlineMs)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The status a failed attempt is traced with. */
function statusOf(error: unknown): number | 'error' {
  return error instanceof RequestError && error.status !== undefined ? error.status : 'error';
}

/** How a retry is shown with --verbose: the wait actually taken, so a capped Retry-After is visible. */
function retryDetail(notice: RetryNotice, maxRetryAfterMs: number): string {
  const capped = notice.cappedRetryAfter === undefined ? '' : ` (Retry-After ${Math.round(notice.cappedRetryAfter)}s capped at ${maxRetryAfterMs / 1000}s)`;
  return `retrying in ${(notice.delayMs / 1000).toFixed(1)}s${capped}`;
}

/** What one request sends. */
interface Outgoing {
  kind: CallKind;
  json?: unknown;
  headers?: Record<string, string>;
  /** False for temporary image URLs: the key never travels to a download host. */
  withKey: boolean;
}

/** An attempt's work, given its budget and a way to trace the status it was answered with. */
type AttemptWork<T> = (attempt: Attempt, budget: CallBudget, answered: (status: number) => void) => Promise<T>;

export class GenAerialClient {
  readonly baseUrl: string;
  /** The policy every call retries under: the caller's, with the environment's cap on Retry-After. */
  readonly retryPolicy: RetryPolicy;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** What a service's text goes through before it is part of an error, or cut to length. */
  readonly redact: Redact;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.redact = options.redact ?? redactorOf(options.apiKey);
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? directDispatcher({ connectMs: this.timeouts.connectMs });
    this.retryPolicy = {
      ...(options.retry ?? DEFAULT_RETRY_POLICY),
      ...(options.maxRetryAfterSeconds !== undefined && { maxRetryAfterMs: options.maxRetryAfterSeconds * 1000 }),
      ...(options.sleep && { sleep: options.sleep }),
    };
  }

  /**
   * Synchronous generation, the JPEG written into `sink` as it arrives
   * (image-download.ts): checked as it passes, with the sink's editor applied.
   * Resolves once all of it is in the sink, which is left for the caller to finish.
   */
  generateInto(body: GenerationRequest, sink: ImageSink, call: CallOptions = {}): Promise<ReceivedImage> {
    return this.receive(`${this.baseUrl}${API_PATH}`, sink, { kind: 'generation', json: body, withKey: true }, call);
  }

  /**
   * Downloads a temporary image URL (list `url`, webhook `signedUrl`) into
   * `sink`, as generateInto does. The key is never sent: these URLs carry
   * their own signature and may point at other hosts. A URL refused as
   * expired or revoked is an ImageUrlRefusedError.
   */
  downloadInto(url: string, sink: ImageSink, call: CallOptions = {}): Promise<ReceivedImage> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new BadResponseError(`image URL is not a valid URL: ${oneLine(this.redact(url), 80)}`, 'BadImageUrl');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new BadResponseError(`image URL must be http(s), got ${oneLine(parsed.protocol, 20)}`, 'BadImageUrl');
    }
    checkDownloadHost(parsed.hostname);
    return this.receive(parsed.toString(), sink, { kind: 'download', withKey: false }, call);
  }

  /** Asynchronous generation: the acceptance record; the image arrives by webhook. */
  generateAsync(body: GenerationRequest, callbackUrl: string, call: CallOptions = {}): Promise<AsyncAccepted> {
    const outgoing: Outgoing = { kind: 'generation', json: body, headers: { 'x-callback-url': callbackUrl }, withKey: true };
    return this.request('POST', `${API_PATH}/async`, outgoing, call, (res) => this.jsonFrom(res, asyncAcceptedSchema(), 'acceptance record'));
  }

  list(query: ListQuery = {}, call: CallOptions = {}): Promise<Page> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.size !== undefined) params.set('size', String(query.size));
    for (const sort of query.sort ?? []) params.append('sort', sort);
    const qs = params.toString();
    return this.request('GET', `${API_PATH}${qs ? `?${qs}` : ''}`, { kind: 'lookup', withKey: true }, call, (res) => this.jsonFrom(res, pageSchema(), 'page of images', isPage));
  }

  async delete(id: string, call: CallOptions = {}): Promise<void> {
    // The 200 body is not shown in the spec: empty, text or JSON are all fine. It is
    // drained (bounded, briefly) rather than left open, which would hold the pool at exit.
    await this.request('DELETE', `${API_PATH}/${imageIdSegment(id)}`, { kind: 'lookup', withKey: true }, call, (res) =>
      readBytes(res, MAX_ERROR_BYTES, Math.min(DRAIN_TIMEOUT_MS, res.exchange.responseMs)).catch(() => undefined),
    );
  }

  private get maxImageBytes(): number {
    return this.options.maxImageBytes ?? MAX_IMAGE_BYTES;
  }

  private get timeouts(): Timeouts {
    return this.options.timeouts ?? DEFAULT_TIMEOUTS;
  }

  /** The request an attempt is making, for reporting what became of it. */
  private scene(url: URL, attempts: number, bodySent: boolean, budget: CallBudget, signal?: AbortSignal): FailureScene {
    return {
      signal,
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

  /**
   * Runs a call's attempts under the retry policy (or its one attempt, when it
   * is part of the caller's), tracing each: its status, its time, and the wait
   * before the next.
   */
  private attempts<T>(kind: CallKind, method: string, url: string, call: CallOptions, work: AttemptWork<T>): Promise<T> {
    const budget = new CallBudget(this.timeouts.calls[kind]);
    let started = process.hrtime.bigint();
    const answered = (attempt: Attempt) => (status: number) => this.trace({ method, url, status, ms: msSince(started), attempt: attempt.number });
    const failed = (attempt: Attempt, error: unknown, retry?: RetryNotice) => {
      const status = statusOf(error);
      const detail = [status === 'error' ? (error as Error).message : undefined, retry && retryDetail(retry, this.retryPolicy.maxRetryAfterMs)].filter(Boolean).join('; ');
      this.trace({ method, url, status, ms: msSince(started), attempt: attempt.number, detail: detail || undefined });
    };
    const single = call.attempt;
    if (single) {
      return work(single, budget, answered(single)).catch((error: unknown) => {
        if (!call.signal?.aborted) failed(single, error);
        throw error;
      });
    }
    const hooks = call.retry ?? {};
    return withRetries(
      this.retryPolicy,
      {
        ...hooks,
        kind,
        signal: call.signal,
        budget,
        onAttempt: (attempt) => {
          started = process.hrtime.bigint();
          hooks.onAttempt?.(attempt);
        },
        onRetry: (notice) => {
          failed(notice.attempt, notice.error, notice);
          return hooks.onRetry?.(notice);
        },
        onGiveUp: (error, attempt) => {
          failed(attempt, error);
          hooks.onGiveUp?.(error, attempt);
        },
      },
      (attempt) => work(attempt, budget, answered(attempt)),
    );
  }

  /** A request whose 2xx answer `read` takes in; any other answer is the error it stands for. */
  private request<T>(method: string, path: string, outgoing: Outgoing, call: CallOptions, read: (res: Answer) => Promise<T>): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const target = new URL(url);
    const headers = { ...this.requestHeaders(outgoing.withKey), ...outgoing.headers };
    const payload = outgoing.json === undefined ? undefined : JSON.stringify(outgoing.json);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    return this.attempts(outgoing.kind, method, url, call, async (attempt, budget, answered) => {
      const scene = this.scene(target, attempt.number, payload !== undefined, budget, call.signal);
      const limit = this.attemptLimit(call.signal, target.host, attempt, payload !== undefined);
      try {
        let res: Dispatcher.ResponseData;
        try {
          res = await this.dispatcher.request({
            origin: target.origin,
            path: `${target.pathname}${target.search}`,
            method: method as Dispatcher.HttpMethod,
            headers,
            body: payload,
            signal: limit.signal,
            headersTimeout: scene.headersMs,
            bodyTimeout: scene.bodyIdleMs,
            highWaterMark: this.options.proxy ? PROXIED_BODY_BUFFER : undefined,
          });
        } catch (error) {
          throw networkFailure(error, { ...scene, elapsedMs: budget.elapsedMs() });
        }
        const answer: Answer = { ...res, exchange: { scene, responseMs: budget.responseMs() } };
        if (res.statusCode < 200 || res.statusCode >= 300) throw await this.errorFrom(answer);
        answered(res.statusCode);
        attempt.answered = true;
        return await read(answer);
      } finally {
        limit.clear();
      }
    });
  }

  /** A request whose answer is an image, written into `sink` as it arrives (image-download.ts). */
  private receive(url: string, sink: ImageSink, outgoing: Outgoing, call: CallOptions): Promise<ReceivedImage> {
    const target = new URL(url);
    const method = outgoing.json === undefined ? 'GET' : 'POST';
    const payload = outgoing.json === undefined ? undefined : JSON.stringify(outgoing.json);
    const headers = { ...this.requestHeaders(outgoing.withKey), ...(payload !== undefined && { 'content-type': 'application/json' }) };
    let written = false;
    return this.attempts(outgoing.kind, method, url, call, async (attempt, budget, answered) => {
      // Another attempt starts from an empty sink.
      if (written) await sink.reset!();
      written = false;
      const scene = this.scene(target, attempt.number, payload !== undefined, budget, call.signal);
      const deadlineMs = budget.responseMs();
      const limit = this.attemptLimit(call.signal, target.host, attempt, payload !== undefined);
      const outcome = await download(
        this.dispatcher,
        { origin: target.origin, path: `${target.pathname}${target.search}`, method, headers, body: payload, headersTimeout: scene.headersMs, bodyTimeout: scene.bodyIdleMs },
        {
          imageProblem: (statusCode, answerHeaders) => this.imageProblem(answerHeaders, statusCode),
          sink,
          onImage: () => {
            attempt.answered = true;
            written = true;
            // What went where it cannot be taken back is never asked for again.
            if (!sink.reset) attempt.final = true;
            call.onImage?.();
          },
          maxImageBytes: this.maxImageBytes,
          maxAnswerBytes: MAX_ERROR_BYTES,
          deadlineMs,
          // Through a proxy the body is taken in without waiting for the sink (see PROXIED_BODY_BUFFER).
          bufferBytes: this.options.proxy ? PROXIED_BODY_BUFFER : undefined,
          networkError: (error) => networkFailure(error, { ...scene, elapsedMs: budget.elapsedMs() }),
          tooLarge: () => tooLarge(this.maxImageBytes),
          timedOut: () => responseTimeout(target.host, deadlineMs, attempt.number),
          signal: limit.signal,
        },
      ).finally(() => limit.clear());
      if (outcome.kind === 'answer') throw this.errorFromAnswer(outcome.statusCode, outcome.headers, outcome.body, outgoing.kind === 'download');
      answered(outcome.statusCode);
      return { statusCode: outcome.statusCode, bytes: outcome.bytes, written: outcome.written };
    });
  }

  /**
   * The signal one attempt runs under: the caller's, and, with
   * attemptTimeoutMs, a timer of the attempt's own that aborts it on time with
   * a TimeoutError (AttemptTimeout) naming the stage it was in (no answer yet, or its body).
   */
  private attemptLimit(signal: AbortSignal | undefined, host: string, attempt: Attempt, bodySent: boolean): { signal?: AbortSignal; clear(): void } {
    const limitMs = this.options.attemptTimeoutMs;
    if (limitMs === undefined) return { signal, clear() {} };
    const own = new AbortController();
    const timer = setTimeout(() => {
      // The stage is said in words; the code says which limit it was (the attempt's, not a stage's).
      const error = attempt.answered
        ? new TimeoutError(timeoutMessage('body', host, limitMs, attempt.number, true), 'AttemptTimeout', true)
        : new TimeoutError(timeoutMessage('headers', host, limitMs, attempt.number), 'AttemptTimeout', bodySent);
      own.abort(error);
    }, limitMs);
    return { signal: signal ? AbortSignal.any([signal, own.signal]) : own.signal, clear: () => clearTimeout(timer) };
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

  private async errorFrom(res: Answer): Promise<RequestError> {
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
  private errorFromAnswer(statusCode: number, headers: Dispatcher.ResponseData['headers'], bytes: Buffer, imageUrl = false): RequestError {
    const retryAfter = parseRetryAfter(headers['retry-after']);
    if (statusCode >= 300 && statusCode < 400) {
      const location = this.redact(header(headers, 'location') ?? '');
      return new BadResponseError(
        `unexpected redirect (HTTP ${statusCode}${location ? ` to ${oneLine(location, 100)}` : ''}); not followed`,
        'UnexpectedRedirect',
        statusCode,
      );
    }
    // Redacted whole, before any of it is picked out or cut: a cut must not leave half a key behind.
    const text = this.redact(new TextDecoder('utf-8').decode(bytes));
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
      const body = errorBodySchema().safeParse(parsedJson);
      // Whatever the server says is shown on one line, without its control characters.
      if (body.success) {
        // Again once parsed: JSON can spell the key with \u escapes.
        code = printable(this.redact(body.data.error), 60) || code;
        message = printable(this.redact(body.data.message ?? ''));
      } else if (parsedJson && typeof parsedJson === 'object' && 'message' in parsedJson) {
        message = printable(this.redact(String((parsedJson as { message: unknown }).message)));
      } else if (storageError(text)) {
        // Object storage refusing a temporary URL (S3 and those that copy it): <Error><Code>…<Message>….
        // Again once unescaped: an entity can spell the key.
        const { code: storageCode, message: storageMessage } = storageError(text)!;
        code = printable(this.redact(storageCode), 60) || code;
        message = printable(this.redact(storageMessage));
      } else if (!contentType.includes('html')) {
        message = oneLine(text);
      } else {
        message = `HTML error page${/<title>([^<]*)<\/title>/i.test(text) ? `: ${oneLine(RegExp.$1, 80)}` : ''}`;
      }
    }
    if (!message) message = `HTTP ${statusCode}${statusCode === 401 ? ': the API key is missing or invalid' : ''}`;
    // A temporary image URL refused: expired or revoked, nothing to do with the key (ImageUrlRefusedError).
    if (imageUrl && [401, 403, 404, 410].includes(statusCode)) return new ImageUrlRefusedError(statusCode, code, message, retryAfter);
    return apiErrorFor(statusCode, code, message, retryAfter);
  }

  /**
   * The body as `schema` takes it. `accepts`, when given, is the schema compiled
   * (it accepts exactly what the schema does): what it accepts is handed back
   * as parsed, and only what it refuses goes to zod, to say why.
   */
  private async jsonFrom<S extends z.ZodTypeAny>(res: Answer, schema: S, what: string, accepts?: (value: unknown) => value is z.infer<S>): Promise<z.infer<S>> {
    const bytes = await readBytes(res, MAX_JSON_BYTES);
    let text: string;
    try {
      // JSON is UTF-8 (RFC 8259); turning bad bytes into U+FFFD would hand scripts ids that match nothing.
      // ASCII (a listing, mostly) is its own decoding: read as Latin-1, in one pass, to a one-byte string.
      text = isAscii(bytes) ? bytes.toString('latin1') : UTF8.decode(bytes);
    } catch {
      throw new BadResponseError(`server sent an unreadable ${what} (invalid UTF-8)`, 'UnexpectedResponse', res.statusCode);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadResponseError(`server sent an unreadable ${what} (not JSON)`, 'UnexpectedResponse', res.statusCode);
    }
    if (accepts?.(parsed)) return parsed;
    const result = schema.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new BadResponseError(
        `server sent an unexpected ${what}: ${issue ? `${issue.path.join('.') || 'body'} ${issue.message}` : 'invalid'}`,
        'UnexpectedResponse',
        res.statusCode,
      );
    }
    return result.data;
  }

  /** What is wrong with a 2xx answer that should carry an image: not a JPEG, or announced over the size cap. */
  private imageProblem(headers: Dispatcher.ResponseData['headers'], statusCode: number): BadResponseError | undefined {
    const contentType = this.redact(header(headers, 'content-type') ?? '');
    if (!/^image\/(jpeg|jpg|pjpeg)\b/i.test(contentType.trim())) {
      return new BadResponseError(
        `expected an image/jpeg response, got ${contentType ? `'${oneLine(contentType, 60)}'` : 'no content type'}`,
        'UnexpectedResponse',
        statusCode,
      );
    }
    const length = Number(header(headers, 'content-length'));
    if (Number.isFinite(length) && length > this.maxImageBytes) {
      return new BadResponseError(`image of ${formatBytes(length)} exceeds the ${formatBytes(this.maxImageBytes)} limit`, 'ResponseTooLarge', statusCode);
    }
    return undefined;
  }

}

/** Redaction of one key, for a client made without the run's (tests, library use). */
function redactorOf(apiKey: string): Redact {
  const redactor = new Redactor();
  redactor.add(apiKey);
  return (text) => redactor.redact(text);
}

export interface OpenClientOptions extends Pick<ClientOptions, 'retry' | 'redact' | 'onTrace' | 'userAgent' | 'sleep' | 'maxImageBytes' | 'attemptTimeoutMs'> {
  /** Where to connect and with which key; asked for once the environment's network settings have been checked. */
  endpoint: () => Promise<{ baseUrl: string; apiKey: string }> | { baseUrl: string; apiKey: string };
  /** Connections the pool keeps per origin (batch's concurrency). */
  connections?: number;
  /** No proxies: for a sandbox on loopback in this process. */
  direct?: boolean;
  /** Told of the network as soon as it is open (what --verbose says of proxies, values to redact, closing the pool). */
  onNetwork?: (setup: NetworkSetup) => void;
}

/**
 * The one way a client is made, by the CLI's commands and by the library
 * alike: the environment's timeouts, proxies and CA advice read and checked
 * (a bad value is an InvalidInputError naming its variable, before anything is
 * sent), then the endpoint, then the client on that network. The pool is the
 * caller's to close (onNetwork); `close()` of the client leaves it open.
 */
export async function openClient(env: Record<string, string | undefined>, options: OpenClientOptions): Promise<GenAerialClient> {
  const setup = await openNetwork(env, { connections: options.connections, direct: options.direct });
  options.onNetwork?.(setup);
  const { baseUrl, apiKey } = await options.endpoint();
  const { endpoint: _endpoint, connections: _connections, direct: _direct, onNetwork: _onNetwork, ...client } = options;
  return new GenAerialClient({ baseUrl, apiKey, ...setup.network, ...client });
}
