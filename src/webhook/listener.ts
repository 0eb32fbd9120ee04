// The webhook listener behind `generate-async --listen` (one request) and
// `batch --async` (every row's request): a small node:http server that waits
// for the callbacks of the async requests it is told about, by requestId.
//
// The service does not sign its callbacks, so everything the listener trusts
// comes from two facts only a genuine sender can know: the unguessable token in
// the callback path, and the requestId of an acceptance record. Whatever
// fails a check is answered 404/400 and ignored; the waits go on.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatBytes } from '../text/bytes.js';
import { webhookPayloadSchema, webhookSuccessSchema, type WebhookPayload, type WebhookSuccess } from '../api/schema.js';

/** Both documented payloads are a handful of short fields; anything near this is not one of them. */
export const MAX_CALLBACK_BYTES = 64 * 1024;

// A callback can beat its acceptance record here (the service calls back while
// its 202 is still on the way to us). Such a callback is held unanswered, on its
// own connection, until its requestId is registered, and refused with 503 (the
// sender may try again) when holding it would pass either bound below.
/**
 * Held at once, at most: twice batch's top --concurrency (256), since each
 * request in flight has one delivery outstanding at a time.
 */
export const MAX_HELD_CALLBACKS = 512;
/**
 * Bodies held at once, in bytes: the memory bound of holding. Genuine payloads
 * are well under 1 KB, so only padded ones (up to MAX_CALLBACK_BYTES each) reach it.
 */
export const MAX_HELD_BYTES = 4 * 1024 * 1024;
/**
 * How long a callback is held before its requestId is taken as not ours (400):
 * far longer than an acceptance record takes to arrive, far shorter than a wait.
 */
export const HOLD_MS = 30_000;

export type ListenerOutcome = 'accepted' | 'duplicate' | 'rejected' | 'held' | 'dropped';

/** One request the listener answered, for --verbose traces and tests. Never carries the body. */
export interface ListenerEvent {
  outcome: ListenerOutcome;
  status: number;
  method: string;
  reason: string;
  /** Only once the requestId is a registered one: an unregistered id is whatever a sender made up. */
  requestId?: string;
}

export interface ListenerOptions {
  /** Address to bind; default 127.0.0.1 (reachable from this machine only). */
  host?: string;
  /** Port to bind; 0 picks a free one. */
  port?: number;
  /**
   * The URL the service must call when it cannot reach the bound address
   * (a tunnel such as ngrok or cloudflared). The token path is appended to it.
   */
  publicUrl?: string;
  /** Fixed token, for tests; by default 192 random bits. */
  token?: string;
  maxBodyBytes?: number;
  /** Bounds on holding early callbacks; the defaults above, smaller in tests. */
  maxHeld?: number;
  maxHeldBytes?: number;
  holdMs?: number;
  onEvent?: (event: ListenerEvent) => void;
}

/** A parsed callback and the connection that waits for its answer. */
interface Callback {
  payload: WebhookPayload;
  res: ServerResponse;
  method: string;
  bytes: number;
}

interface Held extends Callback {
  timer: NodeJS.Timeout;
}

interface Waiter {
  resolve: (payload: WebhookPayload) => void;
  reject: (reason: unknown) => void;
}

/** A registered requestId: its first payload once it came, and whoever waits for it. */
interface Expected {
  payload?: WebhookPayload;
  waiters: Set<Waiter>;
}

/** Formats a bound address as a URL host: IPv6 in brackets, wildcard addresses as loopback. */
export function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::' || address === '::0') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

/** The advertised callback URL: the public base (path kept, token appended) or the bound address. */
export function callbackUrlFor(token: string, boundUrl: string, publicUrl?: string): string {
  const url = new URL(publicUrl ?? boundUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${token}`;
  return url.toString();
}

/** Success and error payloads are told apart by the success fields, the way the schema's union does. */
export function isSuccessPayload(payload: WebhookPayload): payload is WebhookSuccess {
  return webhookSuccessSchema().safeParse(payload).success;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class WebhookListener {
  /** The URL to hand to the service in x-callback-url. */
  readonly callbackUrl: string;
  /** Where the listener actually answers, token path included (for --verbose and tests). */
  readonly localUrl: string;
  readonly port: number;
  /** The secret path segment; shown to people as <token>. */
  readonly token: string;

  private readonly acceptedPaths: string[];
  private readonly maxBodyBytes: number;
  private readonly maxHeld: number;
  private readonly maxHeldBytes: number;
  private readonly holdMs: number;
  // Looked up by hash, not compared in constant time: the secret is the token
  // (compared in constant time above); a requestId is the service's identifier.
  private readonly expected = new Map<string, Expected>();
  private readonly held = new Set<Held>();
  private heldBytes = 0;
  private refusingUnknown = false;
  private closing?: Promise<void>;
  private readonly onEvent: (event: ListenerEvent) => void;

  private constructor(
    private readonly server: Server,
    token: string,
    options: ListenerOptions,
  ) {
    const address = server.address() as AddressInfo;
    this.token = token;
    this.port = address.port;
    const boundUrl = `http://${urlHost(address.address)}:${address.port}/`;
    this.localUrl = callbackUrlFor(token, boundUrl);
    this.callbackUrl = callbackUrlFor(token, boundUrl, options.publicUrl);
    // Tunnels (ngrok, cloudflared) forward the path unchanged; a reverse proxy may strip its prefix.
    this.acceptedPaths = [...new Set([new URL(this.callbackUrl).pathname, `/${token}`])];
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_CALLBACK_BYTES;
    this.maxHeld = options.maxHeld ?? MAX_HELD_CALLBACKS;
    this.maxHeldBytes = options.maxHeldBytes ?? MAX_HELD_BYTES;
    this.holdMs = options.holdMs ?? HOLD_MS;
    this.onEvent = options.onEvent ?? (() => {});
  }

  /** Binds the port; rejects with the bind error (EADDRINUSE, EADDRNOTAVAIL, EACCES) untouched. */
  static async start(options: ListenerOptions = {}): Promise<WebhookListener> {
    const token = options.token ?? randomBytes(24).toString('base64url');
    let listener: WebhookListener | undefined;
    // Node checks the timeouts below on this interval (30 s by default, longer than they are).
    const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
      // Requests cannot arrive before listen() resolved, so the listener exists by now.
      listener!.handle(req, res);
    });
    // A sender that trickles bytes must not hold the port open for the whole wait.
    // (Once a request is read these no longer apply: a held callback waits on HOLD_MS.)
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
    server.keepAliveTimeout = 1_000;
    // Every held callback keeps its connection: room for all of them and for the callbacks of known ids.
    server.maxConnections = (options.maxHeld ?? MAX_HELD_CALLBACKS) + 64;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    listener = new WebhookListener(server, token, options);
    return listener;
  }

  /** Registers a genuine requestId (more than once is harmless); callbacks held for it are answered now. */
  expect(requestId: string): void {
    if (!this.expected.has(requestId)) this.expected.set(requestId, { waiters: new Set() });
    for (const held of [...this.held]) {
      if (held.payload.requestId === requestId && this.release(held)) this.settle(held);
    }
  }

  /**
   * From now on a callback for an unregistered requestId is refused at once
   * rather than held, and those held are refused now: for a caller that has
   * registered every request it will make.
   */
  refuseUnknown(): void {
    this.refusingUnknown = true;
    for (const held of [...this.held]) {
      if (this.release(held)) this.settle(held);
    }
  }

  /** The single-request use (generate-async): `requestId` is the one genuine id there will be. */
  expectOnly(requestId: string): void {
    this.expect(requestId);
    this.refuseUnknown();
  }

  /**
   * Registers `requestId` and resolves with its first callback, even one that came
   * before this call; rejects with the signal's reason when it aborts, or when the
   * listener closes first.
   */
  waitFor(requestId: string, signal?: AbortSignal): Promise<WebhookPayload> {
    this.expect(requestId);
    const entry = this.expected.get(requestId)!;
    if (entry.payload) return Promise.resolve(entry.payload);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.closing) return Promise.reject(new Error('the webhook listener is closed'));
    return new Promise((resolve, reject) => {
      const onAbort = () => waiter.reject(signal!.reason);
      const done = () => {
        entry.waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: (payload) => {
          done();
          resolve(payload);
        },
        reject: (reason) => {
          done();
          reject(reason);
        },
      };
      entry.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Frees the port, drops every open connection and ends the waits. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const held of [...this.held]) {
        if (this.release(held)) this.answer(held.res, 503, held.method, 'rejected', 'listener closing');
      }
      const closed = new Error('the webhook listener is closed');
      for (const entry of this.expected.values()) for (const waiter of [...entry.waiters]) waiter.reject(closed);
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? '?';
    const path = new URL(req.url ?? '/', 'http://listener').pathname;
    if (method !== 'POST' || !this.acceptedPaths.some((accepted) => sameText(path, accepted))) {
      // The same answer for a wrong method as for a wrong path: nothing reveals where the token path is.
      req.resume();
      return this.answer(res, 404, method, 'rejected', method === 'POST' ? 'unknown path' : `method ${method}`);
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBodyBytes) {
      return this.refuseOversized(req, res, method);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > this.maxBodyBytes) {
        refused = true;
        this.refuseOversized(req, res, method);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) this.receive(Buffer.concat(chunks), res, method);
    });
    req.on('error', () => {
      refused = true;
    });
  }

  private refuseOversized(req: IncomingMessage, res: ServerResponse, method: string): void {
    // Stop reading: the connection is closed after the answer rather than drained.
    res.setHeader('connection', 'close');
    this.answer(res, 400, method, 'rejected', `body over ${formatBytes(this.maxBodyBytes)}`);
    req.pause();
  }

  private receive(body: Buffer, res: ServerResponse, method: string): void {
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch {
      return this.answer(res, 400, method, 'rejected', 'body is not JSON');
    }
    const parsed = webhookPayloadSchema().safeParse(json);
    if (!parsed.success) return this.answer(res, 400, method, 'rejected', 'not a success or error payload');
    const callback: Callback = { payload: parsed.data, res, method, bytes: body.length };
    if (this.refusingUnknown || this.expected.has(callback.payload.requestId)) return this.settle(callback);
    this.hold(callback);
  }

  private hold(callback: Callback): void {
    const { res, method, bytes } = callback;
    if (this.held.size >= this.maxHeld || this.heldBytes + bytes > this.maxHeldBytes) {
      return this.answer(res, 503, method, 'rejected', 'too many callbacks for unknown requests');
    }
    const held: Held = {
      ...callback,
      timer: setTimeout(() => {
        if (this.release(held)) this.answer(res, 400, method, 'rejected', 'requestId never became known');
      }, this.holdMs),
    };
    this.held.add(held);
    this.heldBytes += bytes;
    // A sender that gives up on us frees its slot; if the callback was genuine, its retry comes back.
    res.once('close', () => {
      if (this.release(held)) this.onEvent({ outcome: 'dropped', status: 0, method, reason: 'sender hung up while it was held' });
    });
    this.onEvent({ outcome: 'held', status: 0, method, reason: 'arrived before its acceptance record' });
  }

  /** Takes a callback out of the held set; false when something else already did. */
  private release(held: Held): boolean {
    if (!this.held.delete(held)) return false;
    clearTimeout(held.timer);
    this.heldBytes -= held.bytes;
    return true;
  }

  private settle({ payload, res, method }: Callback): void {
    const { requestId } = payload;
    const entry = this.expected.get(requestId);
    if (!entry) return this.answer(res, 400, method, 'rejected', 'requestId is not one of ours');
    if (entry.payload) {
      // A retry of a delivery we already have: acknowledged so the sender stops, otherwise ignored.
      return this.answer(res, 200, method, 'duplicate', 'already received', requestId);
    }
    entry.payload = payload;
    this.answer(res, 200, method, 'accepted', isSuccessPayload(payload) ? 'success payload' : 'error payload', requestId);
    for (const waiter of [...entry.waiters]) waiter.resolve(payload);
  }

  private answer(res: ServerResponse, status: number, method: string, outcome: ListenerOutcome, reason: string, requestId?: string): void {
    if (!res.headersSent) {
      const body = JSON.stringify(status === 200 ? { received: true } : { error: reason });
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }
    this.onEvent({ outcome, status, method, reason, ...(requestId === undefined ? {} : { requestId }) });
  }
}
