// The temporary webhook listener behind `generate-async --listen`: a small
// node:http server that waits for the one callback of one async request.
//
// The service does not sign its callbacks, so everything the listener trusts
// comes from two facts only a genuine sender can know: the unguessable token in
// the callback path, and the requestId of the acceptance record. Whatever
// fails a check is answered 404/400 and ignored; the wait goes on.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookPayloadSchema, WebhookSuccessSchema, type WebhookPayload, type WebhookSuccess } from './api/schema.js';

/** Both documented payloads are a handful of short fields; anything near this is not one of them. */
export const MAX_CALLBACK_BYTES = 64 * 1024;
/** Callbacks that beat the acceptance record to us are held (not answered) until its requestId is known. */
const MAX_EARLY_CALLBACKS = 8;

export type ListenerOutcome = 'accepted' | 'duplicate' | 'rejected' | 'held';

/** One request the listener answered, for --verbose traces and tests. Never carries the body. */
export interface ListenerEvent {
  outcome: ListenerOutcome;
  status: number;
  method: string;
  reason: string;
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
  onEvent?: (event: ListenerEvent) => void;
}

interface HeldCallback {
  payload: WebhookPayload;
  res: ServerResponse;
  method: string;
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
  return WebhookSuccessSchema.safeParse(payload).success;
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
  private expected?: string;
  private received?: WebhookPayload;
  private readonly early: HeldCallback[] = [];
  private deliver!: (payload: WebhookPayload) => void;
  private readonly delivered = new Promise<WebhookPayload>((resolve) => {
    this.deliver = resolve;
  });
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
    this.onEvent = options.onEvent ?? (() => {});
  }

  /** Binds the port; rejects with the bind error (EADDRINUSE, EADDRNOTAVAIL, EACCES) untouched. */
  static async start(options: ListenerOptions = {}): Promise<WebhookListener> {
    const token = options.token ?? randomBytes(24).toString('base64url');
    let listener: WebhookListener | undefined;
    const server = createServer((req, res) => {
      // Requests cannot arrive before listen() resolved, so the listener exists by now.
      listener!.handle(req, res);
    });
    // A sender that trickles bytes must not hold the port open for the whole wait.
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
    server.keepAliveTimeout = 1_000;
    server.maxConnections = 64;
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

  /** Tells the listener which requestId is genuine; callbacks held until now are answered. */
  expect(requestId: string): void {
    this.expected = requestId;
    for (const held of this.early.splice(0)) this.settle(held.payload, held.res, held.method);
  }

  /** Resolves with the first genuine callback; rejects with the signal's reason when it aborts. */
  waitForCallback(signal?: AbortSignal): Promise<WebhookPayload> {
    if (!signal) return this.delivered;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void this.delivered.then((payload) => {
        signal.removeEventListener('abort', onAbort);
        resolve(payload);
      });
    });
  }

  /** Frees the port and drops every open connection. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const held of this.early.splice(0)) this.answer(held.res, 503, held.method, 'rejected', 'listener closing');
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
    this.answer(res, 400, method, 'rejected', `body over ${Math.round(this.maxBodyBytes / 1024)} KB`);
    req.pause();
  }

  private receive(body: Buffer, res: ServerResponse, method: string): void {
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch {
      return this.answer(res, 400, method, 'rejected', 'body is not JSON');
    }
    const parsed = WebhookPayloadSchema.safeParse(json);
    if (!parsed.success) return this.answer(res, 400, method, 'rejected', 'not a success or error payload');
    if (this.expected === undefined) {
      if (this.early.length >= MAX_EARLY_CALLBACKS) return this.answer(res, 503, method, 'rejected', 'too many early callbacks');
      this.early.push({ payload: parsed.data, res, method });
      this.onEvent({ outcome: 'held', status: 0, method, reason: 'arrived before the acceptance record' });
      return;
    }
    this.settle(parsed.data, res, method);
  }

  private settle(payload: WebhookPayload, res: ServerResponse, method: string): void {
    if (!sameText(payload.requestId, this.expected!)) {
      return this.answer(res, 400, method, 'rejected', 'requestId does not match');
    }
    if (this.received) {
      // A retry of a delivery we already have: acknowledged so the sender stops, otherwise ignored.
      return this.answer(res, 200, method, 'duplicate', 'already received');
    }
    this.received = payload;
    this.answer(res, 200, method, 'accepted', isSuccessPayload(payload) ? 'success payload' : 'error payload');
    this.deliver(payload);
  }

  private answer(res: ServerResponse, status: number, method: string, outcome: ListenerOutcome, reason: string): void {
    if (!res.headersSent) {
      const body = JSON.stringify(status === 200 ? { received: true } : { error: reason });
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }
    this.onEvent({ outcome, status, method, reason });
  }
}
