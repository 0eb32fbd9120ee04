// A service that answers every generation at once with a tiny JPEG, behind a
// per-account rate limiter of one of the shapes real services use:
//   - a sliding window: at most `perSecond` requests accepted in any window of
//     one second (a log of the requests' arrival times), the strict shape; a
//     refused request counts too with `countRefused` (a client that keeps
//     asking keeps itself out);
//   - a token bucket: `perSecond` tokens a second, holding at most `burst`
//     (by default one second's worth, as the sandbox's own limiter).
// Refusals are 429 with Retry-After (whole seconds, at least 1), as the spec
// describes. Answering at once matters: the requests a client has on the wire
// then do not bound its rate, only the rate it sends at can. Times are the
// requests' arrival, measured when their headers are read.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { serveOnLoopback, tinyJpeg } from './hostile-server.js';

export type LimiterShape = 'sliding-window' | 'token-bucket';

export interface RateLimitedService {
  url: string;
  /** Requests accepted (answered with an image) and refused (429). */
  accepted(): number;
  refused(): number;
  /** Arrival times (ms, performance.now()) of the accepted requests, in order. */
  acceptedAt(): number[];
  close(): Promise<void>;
}

interface Limiter {
  /** Accepts the request arriving at `now`, or says how many whole seconds until it would be. */
  take(now: number): { ok: true } | { ok: false; retryAfterSeconds: number };
}

function slidingWindow(perSecond: number, countRefused: boolean): Limiter {
  const counted: number[] = [];
  let first = 0;
  return {
    take(now) {
      while (first < counted.length && counted[first]! <= now - 1000) first++;
      if (counted.length - first < perSecond) {
        counted.push(now);
        return { ok: true };
      }
      const retryAfterSeconds = Math.max(1, Math.ceil((counted[first]! + 1000 - now) / 1000));
      if (countRefused) counted.push(now);
      return { ok: false, retryAfterSeconds };
    },
  };
}

function tokenBucket(perSecond: number, burst: number): Limiter {
  let tokens = burst;
  let at: number | undefined;
  return {
    take(now) {
      tokens = Math.min(burst, tokens + (at === undefined ? 0 : ((now - at) / 1000) * perSecond));
      at = now;
      if (tokens >= 1) {
        tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perSecond)) };
    },
  };
}

export interface LimiterOptions {
  shape: LimiterShape;
  perSecond: number;
  /** A token bucket's depth; `perSecond` when absent. */
  burst?: number;
  /** A sliding window counts refused requests too. */
  countRefused?: boolean;
}

export async function startRateLimitedService(options: LimiterOptions): Promise<RateLimitedService> {
  const limiters = new Map<string, Limiter>();
  const limiterOf = (account: string) => {
    let limiter = limiters.get(account);
    if (!limiter) {
      limiter = options.shape === 'sliding-window' ? slidingWindow(options.perSecond, options.countRefused ?? false) : tokenBucket(options.perSecond, options.burst ?? options.perSecond);
      limiters.set(account, limiter);
    }
    return limiter;
  };
  const acceptedAt: number[] = [];
  let refused = 0;
  const image = tinyJpeg();
  const server = createServer((req, res) => {
    const now = performance.now();
    const verdict = limiterOf(String(req.headers['x-api-key'])).take(now);
    req.resume();
    req.on('end', () => {
      if (verdict.ok) {
        acceptedAt.push(now);
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length }).end(image);
        return;
      }
      refused++;
      const body = JSON.stringify({ status: 429, error: 'TooManyRequests', message: `rate limit of ${options.perSecond} requests per second exceeded` });
      res.writeHead(429, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'retry-after': String(verdict.retryAfterSeconds) }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  const { port, close } = await serveOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => acceptedAt.length,
    refused: () => refused,
    acceptedAt: () => [...acceptedAt],
    close,
  };
}
