// One webhook listener for a whole `batch --async`: every row's request gets
// the same callback URL, and callbacks are matched to rows by requestId.
//
// src/listener.ts's WebhookListener waits for exactly one request; a batch has
// hundreds in flight, so this keeps a table of waiters instead. The trust
// rules are the listener's: only POSTs to the unguessable token path, JSON
// under MAX_CALLBACK_BYTES that is one of the two documented payloads.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookPayloadSchema, type WebhookPayload } from '../api/schema.js';
import { callbackUrlFor, MAX_CALLBACK_BYTES, urlHost } from '../listener.js';

/** Callbacks for ids nobody waits for yet (they beat their acceptance record here) are kept, up to this many. */
const MAX_EARLY_CALLBACKS = 1024;

export interface HubOptions {
  host: string;
  port: number;
  publicUrl?: string;
  onEvent?: (message: string) => void;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class CallbackHub {
  readonly callbackUrl: string;
  readonly localUrl: string;
  readonly port: number;
  private readonly paths: string[];
  private readonly waiters = new Map<string, (payload: WebhookPayload) => void>();
  private readonly early = new Map<string, WebhookPayload>();
  private readonly settled = new Set<string>();
  private closing?: Promise<void>;

  private constructor(
    private readonly server: Server,
    token: string,
    options: HubOptions,
  ) {
    const address = server.address() as AddressInfo;
    this.port = address.port;
    const boundUrl = `http://${urlHost(address.address)}:${address.port}/`;
    this.localUrl = callbackUrlFor(token, boundUrl);
    this.callbackUrl = callbackUrlFor(token, boundUrl, options.publicUrl);
    this.paths = [...new Set([new URL(this.callbackUrl).pathname, `/${token}`])];
  }

  static async start(options: HubOptions): Promise<CallbackHub> {
    const token = randomBytes(24).toString('base64url');
    let hub: CallbackHub | undefined;
    const server = createServer((req, res) => hub!.handle(req, res, options.onEvent ?? (() => {})));
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    hub = new CallbackHub(server, token, options);
    return hub;
  }

  /** The callback of `requestId`, including one that arrived before this call; rejects when `signal` aborts. */
  wait(requestId: string, signal: AbortSignal): Promise<WebhookPayload> {
    const arrived = this.early.get(requestId);
    if (arrived) {
      this.early.delete(requestId);
      this.settled.add(requestId);
      return Promise.resolve(arrived);
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(requestId);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(requestId, (payload) => {
        signal.removeEventListener('abort', onAbort);
        resolve(payload);
      });
    });
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private handle(req: IncomingMessage, res: ServerResponse, onEvent: (message: string) => void): void {
    const path = new URL(req.url ?? '/', 'http://hub').pathname;
    if (req.method !== 'POST' || !this.paths.some((accepted) => sameText(path, accepted))) {
      req.resume();
      onEvent(`ignored ${req.method} (404, unknown path or method)`);
      return this.answer(res, 404, { error: 'not found' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > MAX_CALLBACK_BYTES) {
        refused = true;
        res.setHeader('connection', 'close');
        onEvent('ignored a callback over the size limit');
        this.answer(res, 400, { error: 'body too large' });
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) this.receive(Buffer.concat(chunks), res, onEvent);
    });
    req.on('error', () => {
      refused = true;
    });
  }

  private receive(body: Buffer, res: ServerResponse, onEvent: (message: string) => void): void {
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch {
      onEvent('ignored a callback that is not JSON');
      return this.answer(res, 400, { error: 'body is not JSON' });
    }
    const parsed = WebhookPayloadSchema.safeParse(json);
    if (!parsed.success) {
      onEvent('ignored a callback that is neither payload');
      return this.answer(res, 400, { error: 'not a success or error payload' });
    }
    const payload = parsed.data;
    const waiter = this.waiters.get(payload.requestId);
    if (waiter) {
      this.waiters.delete(payload.requestId);
      this.settled.add(payload.requestId);
      onEvent(`callback for ${payload.requestId}`);
      waiter(payload);
    } else if (this.settled.has(payload.requestId) || this.early.has(payload.requestId)) {
      onEvent(`ignored a repeated callback for ${payload.requestId}`);
    } else if (this.early.size < MAX_EARLY_CALLBACKS) {
      this.early.set(payload.requestId, payload);
      onEvent(`kept an early callback for ${payload.requestId}`);
    } else {
      return this.answer(res, 503, { error: 'too many unclaimed callbacks' });
    }
    this.answer(res, 200, { received: true });
  }

  private answer(res: ServerResponse, status: number, body: object): void {
    if (res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}
