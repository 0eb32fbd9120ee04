// A tiny HTTP server whose every answer the test decides: truncated bodies,
// wrong content types, endless streams, redirects, odd error bodies. It records
// what it received (method, URL, headers, body) so a test can prove what was,
// and was not, sent — e.g. that a redirect target never saw the API key.
import { readdirSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { tempDir } from './cli.js';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived (Date.now()), to measure the waits between retries. */
  at: number;
}

/** Answers one request; `received` is the request with its whole body already read. */
export type Responder = (res: ServerResponse, received: ReceivedRequest, req: IncomingMessage) => void | Promise<void>;

export interface HostileServer {
  url: string;
  port: number;
  /** Every request received since start or the last reset(), in order. */
  readonly requests: ReceivedRequest[];
  /** Sets how the server answers from now on. */
  respond(responder: Responder): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startHostileServer(): Promise<HostileServer> {
  const requests: ReceivedRequest[] = [];
  let responder: Responder = (res) => {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('no responder set');
  };

  const server = createServer(async (req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = {
      at,
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(received);
    try {
      await responder(res, received, req);
    } catch {
      res.destroy();
    }
  });
  const { port, close } = await serveOnLoopback(server);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    respond(next) {
      responder = next;
    },
    reset() {
      requests.length = 0;
    },
    close,
  };
}

/**
 * Starts `server` on a free loopback port. Its close() destroys every
 * connection it accepted, those a CONNECT or an upgrade took over included
 * (which the http server no longer counts as its own), then closes it.
 */
export async function serveOnLoopback(server: Server): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The usual hostile-test file setup: one server and one config directory for
 * the whole file, the server's log reset before each test. `onStart` hands
 * both to the file's own variables.
 */
export function useHostileServerPerFile(
  onStart: (server: HostileServer, config: ReturnType<typeof tempDir>) => void,
  options: { configPrefix?: string } = {},
): void {
  let server: HostileServer | undefined;
  let config: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => {
    server = await startHostileServer();
    config = tempDir(options.configPrefix);
    onStart(server, config);
  });
  afterAll(async () => {
    await server?.close();
    config?.remove();
  });
  beforeEach(() => server!.reset());
}

let cachedJpeg: Buffer | undefined;
/** A real, decodable 16×16 JPEG: small enough to answer thousands of requests. */
export function tinyJpeg(): Buffer {
  cachedJpeg ??= Buffer.from(
    jpeg.encode({ data: Buffer.alloc(16 * 16 * 4, 0x80), width: 16, height: 16 }, 80).data,
  );
  return cachedJpeg;
}

/** Answers every request with the tiny JPEG, as a well-behaved synchronous generation would. */
export const answerJpeg: Responder = (res) => {
  const body = tinyJpeg();
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
};

/** Answers with a status, a content type and a body (string or bytes), or no body at all. */
export function answer(status: number, body?: string | Buffer, contentType?: string, headers: Record<string, string> = {}): Responder {
  return (res) => {
    const head: Record<string, string | number> = { ...headers };
    if (contentType) head['content-type'] = contentType;
    head['content-length'] = body === undefined ? 0 : Buffer.byteLength(body);
    res.writeHead(status, head);
    res.end(body);
  };
}

export function answerJson(status: number, value: unknown, headers: Record<string, string> = {}): Responder {
  return answer(status, JSON.stringify(value), 'application/json', headers);
}

/**
 * Answers the list endpoint (GET …/image-generation?page=&size=) with the
 * history `ids` make, in that order and paged as asked, and every other
 * request with `otherwise`: for commands that look ids up before acting on them.
 */
export function listingOf(ids: string[], otherwise: Responder): Responder {
  return (res, received, req) => {
    const url = new URL(received.url, 'http://x');
    if (received.method !== 'GET' || !url.pathname.endsWith('/image-generation')) return otherwise(res, received, req);
    const page = Number(url.searchParams.get('page') ?? 0);
    const size = Number(url.searchParams.get('size') ?? 20);
    const content = ids.slice(page * size, (page + 1) * size).map((id, index) => ({
      id,
      url: `http://127.0.0.1:9/images/${page * size + index}.jpg`,
      coordinates: { latitude: 1, longitude: 2 },
      resolution: 'HD',
      createdAt: '2025-01-01T00:00:00Z',
    }));
    answerJson(200, { content, totalElements: ids.length, totalPages: Math.ceil(ids.length / size), page, size })(res, received, req);
  };
}

/** Lowercased header names of a request, for checking what travelled. */
export function headerNames(headers: IncomingHttpHeaders): string[] {
  return Object.keys(headers).map((name) => name.toLowerCase());
}

/**
 * Keeps writing `chunk` every `intervalMs` (0: as fast as the socket drains)
 * until the client goes away: an endless body, slow or fast.
 */
export function writeForever(res: ServerResponse, chunk: Buffer | string, intervalMs: number): void {
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  const pump = () => {
    if (closed) return;
    if (intervalMs > 0) {
      res.write(chunk);
      setTimeout(pump, intervalMs);
      return;
    }
    while (!closed && res.write(chunk));
    if (!closed) res.once('drain', pump);
  };
  pump();
}

/** Files left in a directory (an output file, a .part temp file): after a failure there must be none. */
export function leftovers(dir: string): string[] {
  return readdirSync(dir);
}

/** POSTs JSON to a URL (a webhook listener) and resolves once it answered, or failed to. */
export function postJson(url: string, body: unknown): Promise<number | undefined> {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(undefined));
    req.end(data);
  });
}

/**
 * Plays an async service: every POST to …/async is accepted (req-1, req-2, …)
 * and, a moment later, called back at its x-callback-url with `payload(requestId)`
 * (a success or error payload, whatever the test makes of it); anything else
 * is answered by `otherwise`, 404 by default.
 */
export function acceptAndCallBack(server: HostileServer, payload: (requestId: string) => Record<string, unknown>, otherwise?: Responder): void {
  let next = 0;
  server.respond((res, received, req) => {
    if (received.method === 'POST' && received.url.endsWith('/async')) {
      const requestId = `req-${++next}`;
      answerJson(202, { requestId, status: 'processing' })(res, received, req);
      const callbackUrl = String(received.headers['x-callback-url']);
      setTimeout(() => void postJson(callbackUrl, { requestId, ...payload(requestId) }), 20);
      return;
    }
    return (otherwise ?? answerJson(404, { error: 'NotFound', message: 'no' }))(res, received, req);
  });
}

/** Every spelling of a metadata or link-local destination the URL parser and the kernel would take. */
export const FORBIDDEN_URLS = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://169.254.170.2/v2/credentials',
  'http://169.254.169.254./latest',
  'http://2852039166/latest',
  'http://0xA9FEA9FE/latest',
  'http://0251.0376.0251.0376/latest',
  'http://169.254.43518/latest',
  'http://[::ffff:169.254.169.254]/latest',
  'http://[::ffff:a9fe:a9fe]/latest',
  'http://[fe80::1]/latest',
  'http://[febf:ffff::1]/latest',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://100.100.100.200/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.google.internal./computeMetadata/v1/',
  'http://metadata/computeMetadata/v1/',
  'https://instance-data/latest/',
];
/** Image URLs that are no plain http(s). */
export const NOT_HTTP = ['file:///etc/passwd', 'ftp://images.example/x.jpg', 'data:image/jpeg;base64,/9j/2Q==', 'javascript:alert(1)', 'gopher://169.254.169.254/'];
