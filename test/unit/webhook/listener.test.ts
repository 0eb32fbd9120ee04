// The listener's guard rules, exercised over real sockets: only a POST of a
// small JSON payload to the token path with the awaited requestId completes
// the wait; everything else is answered 404/400 and the wait goes on.
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONCURRENCY } from '../../../src/commands/batch/run.js';
import {
  callbackUrlFor,
  isSuccessPayload,
  MAX_CALLBACK_BYTES,
  MAX_HELD_BYTES,
  MAX_HELD_CALLBACKS,
  urlHost,
  WebhookListener,
  type ListenerEvent,
} from '../../../src/webhook/listener.js';

interface Reply {
  status: number;
  body: string;
}

/** A raw HTTP request (not fetch): tests need control of method, headers and chunking. */
function send(
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
    if (body && !options.chunked) headers['content-length'] = String(body.length);
    const req = httpRequest(url, { method: options.method ?? 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    if (body && options.chunked) {
      // Several writes with no content-length: the listener only finds out the size while reading.
      for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
    } else if (body) {
      req.write(body);
    }
    req.end();
  });
}

const post = (url: string, payload: unknown) => send(url, { body: JSON.stringify(payload) });

const success = (requestId: string) => ({
  requestId,
  signedUrl: 'http://127.0.0.1:1/images/img_1.jpg?sig=abc',
  generatedImageId: 'img_1',
  creditsUsed: 1,
});
/** A genuine-looking success payload whose JSON body is `bytes` long. */
function padded(requestId: string, bytes: number): string {
  const bare = JSON.stringify({ ...success(requestId), padding: '' });
  return JSON.stringify({ ...success(requestId), padding: 'x'.repeat(bytes - bare.length) });
}
const failure = (requestId: string) => ({ requestId, errorCode: 'ErrorGeneratingImage', errorMessage: 'render failed' });

/** True when the promise has not settled within `ms`: the wait is still going on. */
async function stillPending(promise: Promise<unknown>, ms = 50): Promise<boolean> {
  const marker = Symbol('pending');
  const winner = await Promise.race([promise.then(() => 'settled', () => 'settled'), new Promise((r) => setTimeout(() => r(marker), ms))]);
  return winner === marker;
}

/** Polls until `condition` holds (events arrive when the listener has read a request). */
async function until(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function canBind(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

const open: WebhookListener[] = [];
async function start(options: Parameters<typeof WebhookListener.start>[0] = {}): Promise<{ listener: WebhookListener; events: ListenerEvent[] }> {
  const events: ListenerEvent[] = [];
  const listener = await WebhookListener.start({ ...options, onEvent: (event) => events.push(event) });
  open.push(listener);
  return { listener, events };
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((listener) => listener.close()));
});

describe('listener addresses', () => {
  it('binds 127.0.0.1 on a free port and advertises a long random token path', async () => {
    const { listener: a } = await start();
    const { listener: b } = await start();
    const url = new URL(a.callbackUrl);
    expect(url.hostname).toBe('127.0.0.1');
    expect(Number(url.port)).toBe(a.port);
    expect(a.port).toBeGreaterThan(0);
    const token = url.pathname.slice(1);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new URL(b.callbackUrl).pathname).not.toBe(url.pathname);
    expect(a.localUrl).toBe(a.callbackUrl);
  });

  it('appends the token to a public URL, keeping its path and query', () => {
    expect(callbackUrlFor('tok', 'http://127.0.0.1:5000/', 'https://abc.ngrok-free.app/hooks/aerial/?via=tunnel')).toBe(
      'https://abc.ngrok-free.app/hooks/aerial/tok?via=tunnel',
    );
    expect(callbackUrlFor('tok', 'http://127.0.0.1:5000/', 'https://x.trycloudflare.com')).toBe('https://x.trycloudflare.com/tok');
    expect(callbackUrlFor('tok', 'http://127.0.0.1:5000/')).toBe('http://127.0.0.1:5000/tok');
  });

  it('formats wildcard and IPv6 addresses as reachable URL hosts', () => {
    expect(urlHost('0.0.0.0')).toBe('127.0.0.1');
    expect(urlHost('::')).toBe('[::1]');
    expect(urlHost('::1')).toBe('[::1]');
    expect(urlHost('192.168.1.4')).toBe('192.168.1.4');
  });

  it('behind a public URL, accepts the forwarded path and the bare token path, nothing else', async () => {
    const { listener } = await start({ publicUrl: 'https://tunnel.example/hooks', token: 'T0k3n-for-this-test-only-abcdefgh' });
    expect(listener.callbackUrl).toBe('https://tunnel.example/hooks/T0k3n-for-this-test-only-abcdefgh');
    const base = `http://127.0.0.1:${listener.port}`;
    listener.expect('req_1');
    expect((await post(`${base}/hooks`, success('req_1'))).status).toBe(404);
    expect((await post(`${base}/other/T0k3n-for-this-test-only-abcdefgh`, success('req_1'))).status).toBe(404);
    expect((await post(`${base}/hooks/T0k3n-for-this-test-only-abcdefgh`, success('req_1'))).status).toBe(200);
    // The bare form is the same callback again: acknowledged as a duplicate.
    expect((await post(`${base}/T0k3n-for-this-test-only-abcdefgh`, success('req_1'))).status).toBe(200);
  });

  it('rejects with the bind error when the port is taken', async () => {
    const { listener } = await start();
    await expect(WebhookListener.start({ port: listener.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('listener guard rules', () => {
  it('completes the wait with the genuine success payload and answers it 200', async () => {
    const { listener, events } = await start();
    listener.expectOnly('req_ok');
    const waiting = listener.waitFor('req_ok');
    const reply = await post(listener.callbackUrl, success('req_ok'));
    expect(reply).toEqual({ status: 200, body: '{"received":true}' });
    const payload = await waiting;
    expect(payload).toEqual(success('req_ok'));
    expect(isSuccessPayload(payload)).toBe(true);
    expect(events.map((e) => e.outcome)).toEqual(['accepted']);
  });

  it('completes the wait with the genuine error payload too', async () => {
    const { listener } = await start();
    listener.expectOnly('req_err');
    const waiting = listener.waitFor('req_err');
    expect((await post(listener.callbackUrl, failure('req_err'))).status).toBe(200);
    const payload = await waiting;
    expect(isSuccessPayload(payload)).toBe(false);
    expect(payload).toMatchObject({ errorCode: 'ErrorGeneratingImage', errorMessage: 'render failed' });
  });

  it('ignores forgeries with 404/400 while the wait goes on, then takes the genuine callback', async () => {
    const { listener, events } = await start();
    listener.expectOnly('req_real');
    const waiting = listener.waitFor('req_real');
    const url = listener.callbackUrl;
    const origin = new URL(url).origin;
    const token = new URL(url).pathname;

    const forgeries: Array<[string, Promise<Reply>, number]> = [
      ['no token', post(`${origin}/`, success('req_real')), 404],
      ['wrong token', post(`${origin}/${'x'.repeat(32)}`, success('req_real')), 404],
      ['token with a suffix', post(`${url}x`, success('req_real')), 404],
      ['GET on the token path', send(url, { method: 'GET' }), 404],
      ['PUT on the token path', send(url, { method: 'PUT', body: JSON.stringify(success('req_real')) }), 404],
      ['wrong requestId', post(url, success('req_forged')), 400],
      ['malformed JSON', send(url, { body: '{"requestId": "req_real", ' }), 400],
      ['JSON that is no payload', post(url, { requestId: 'req_real', hello: 'world' }), 400],
      ['a JSON array', post(url, [success('req_real')]), 400],
      ['empty body', send(url, { body: '' }), 400],
      ['invalid UTF-8', send(url, { body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }), 400],
      ['wrong field types', post(url, { ...success('req_real'), creditsUsed: 'one' }), 400],
    ];
    for (const [what, reply, status] of forgeries) {
      expect((await reply).status, what).toBe(status);
    }
    expect(token.length).toBeGreaterThan(30);
    expect(await stillPending(waiting)).toBe(true);
    expect(events.every((e) => e.outcome === 'rejected')).toBe(true);
    expect(events).toHaveLength(forgeries.length);

    expect((await post(url, success('req_real'))).status).toBe(200);
    expect(await waiting).toEqual(success('req_real'));
  });

  it('refuses a body over 64 KiB, declared or streamed, and keeps waiting', async () => {
    const { listener, events } = await start();
    listener.expectOnly('req_big');
    const waiting = listener.waitFor('req_big');
    // A genuine-looking payload padded past the limit: size alone is enough to refuse it.
    const big = JSON.stringify({ ...success('req_big'), padding: 'x'.repeat(70 * 1024) });
    expect((await send(listener.callbackUrl, { body: big })).status).toBe(400);
    expect((await send(listener.callbackUrl, { body: big, chunked: true })).status).toBe(400);
    expect(events.filter((e) => e.reason.startsWith('body over 64 KiB'))).toHaveLength(2);
    expect(await stillPending(waiting)).toBe(true);

    // Just under the limit is still a payload.
    const fits = JSON.stringify({ ...success('req_big'), padding: 'x'.repeat(60 * 1024) });
    expect((await send(listener.callbackUrl, { body: fits })).status).toBe(200);
    expect((await waiting).requestId).toBe('req_big');
  });

  it('acknowledges a repeated delivery but keeps the first payload', async () => {
    const { listener, events } = await start();
    listener.expectOnly('req_dup');
    const waiting = listener.waitFor('req_dup');
    const first = success('req_dup');
    expect((await post(listener.callbackUrl, first)).status).toBe(200);
    expect((await post(listener.callbackUrl, first)).status).toBe(200);
    // A later, different delivery for the same request does not replace the first either.
    expect((await post(listener.callbackUrl, { ...first, signedUrl: 'http://127.0.0.1:1/other.jpg' })).status).toBe(200);
    expect((await post(listener.callbackUrl, failure('req_dup'))).status).toBe(200);
    expect(await waiting).toEqual(first);
    expect(await listener.waitFor('req_dup')).toEqual(first);
    expect(events.map((e) => e.outcome)).toEqual(['accepted', 'duplicate', 'duplicate', 'duplicate']);
  });

  it('holds a callback that beats the acceptance record, then settles it once the requestId is known', async () => {
    const { listener, events } = await start();
    const forged = post(listener.callbackUrl, success('req_other'));
    const genuine = post(listener.callbackUrl, success('req_early'));
    // Both are held unanswered until the requestId arrives.
    await new Promise((r) => setTimeout(r, 50));
    expect(events.map((e) => e.outcome)).toEqual(['held', 'held']);
    expect(await stillPending(genuine)).toBe(true);
    // The one id of a single request: the other held callback cannot be genuine.
    listener.expectOnly('req_early');
    expect((await forged).status).toBe(400);
    expect((await genuine).status).toBe(200);
    expect((await listener.waitFor('req_early')).requestId).toBe('req_early');
  });
});

describe('listener with many requests (batch --async)', () => {
  it('hands each callback to the wait for its own requestId, in any order', async () => {
    const { listener, events } = await start();
    const a = listener.waitFor('req_a');
    const b = listener.waitFor('req_b');
    expect((await post(listener.callbackUrl, success('req_b'))).status).toBe(200);
    expect(await stillPending(a)).toBe(true);
    expect((await post(listener.callbackUrl, failure('req_a'))).status).toBe(200);
    expect(await b).toEqual(success('req_b'));
    expect(await a).toEqual(failure('req_a'));
    expect(events.map((e) => [e.outcome, e.requestId])).toEqual([
      ['accepted', 'req_b'],
      ['accepted', 'req_a'],
    ]);
  });

  it('holds the early callbacks of more requests than batch runs at once, each answered when its id is registered', async () => {
    // Default bounds: every row at batch's top --concurrency can be early at the same time.
    const { listener, events } = await start();
    const ids = Array.from({ length: MAX_CONCURRENCY }, (_, i) => `req_${i}`);
    const replies = ids.map((id) => post(listener.callbackUrl, success(id)));
    await until(() => events.filter((e) => e.outcome === 'held').length === ids.length);
    expect(await stillPending(replies[0]!)).toBe(true);
    const payloads = await Promise.all(ids.map((id) => listener.waitFor(id)));
    expect(payloads.map((p) => p.requestId)).toEqual(ids);
    expect((await Promise.all(replies)).every((reply) => reply.status === 200)).toBe(true);
    // A late retry of any of them is acknowledged and changes nothing.
    expect((await post(listener.callbackUrl, failure('req_7'))).status).toBe(200);
    expect(await listener.waitFor('req_7')).toEqual(success('req_7'));
    expect(events.filter((e) => e.outcome === 'accepted')).toHaveLength(ids.length);
    expect(events.at(-1)).toMatchObject({ outcome: 'duplicate', requestId: 'req_7' });
  });

  it('holds repeated early deliveries of one id: the first is the payload, the rest are duplicates', async () => {
    const { listener, events } = await start();
    const first = post(listener.callbackUrl, success('req_twice'));
    await until(() => events.length === 1);
    const second = post(listener.callbackUrl, failure('req_twice'));
    await until(() => events.length === 2);
    listener.expect('req_twice');
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(await listener.waitFor('req_twice')).toEqual(success('req_twice'));
    expect(events.map((e) => e.outcome)).toEqual(['held', 'held', 'accepted', 'duplicate']);
  });

  it('refuses a held callback 400 when its requestId never becomes known', async () => {
    const { listener, events } = await start({ holdMs: 100 });
    const waiting = listener.waitFor('req_mine');
    const started = Date.now();
    const reply = await post(listener.callbackUrl, success('req_unknown'));
    expect(reply.status).toBe(400);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(events.map((e) => e.outcome)).toEqual(['held', 'rejected']);
    expect(events[1]!.requestId).toBeUndefined();
    expect(await stillPending(waiting)).toBe(true);
  });

  it('refuses early callbacks 503 past the held count, and takes more once a slot frees', async () => {
    const { listener } = await start({ maxHeld: 2 });
    const held = [post(listener.callbackUrl, success('req_1')), post(listener.callbackUrl, success('req_2'))];
    await new Promise((r) => setTimeout(r, 30));
    const over = await post(listener.callbackUrl, success('req_3'));
    expect(over).toEqual({ status: 503, body: '{"error":"too many callbacks for unknown requests"}' });
    listener.expect('req_1');
    expect((await held[0]!).status).toBe(200);
    const third = post(listener.callbackUrl, success('req_3'));
    await new Promise((r) => setTimeout(r, 30));
    listener.expect('req_3');
    listener.expect('req_2');
    expect([(await third).status, (await held[1]!).status]).toEqual([200, 200]);
  });

  it('refuses early callbacks 503 past the held bytes, whatever their count', async () => {
    const { listener, events } = await start({ maxHeldBytes: 100_000 });
    const first = send(listener.callbackUrl, { body: padded('req_big1', 60_000) });
    await until(() => events.some((e) => e.outcome === 'held'));
    // 60 KiB held + 60 KiB would pass 100 KiB; a small one still fits.
    expect((await send(listener.callbackUrl, { body: padded('req_big2', 60_000) })).status).toBe(503);
    const small = post(listener.callbackUrl, success('req_small'));
    await until(() => events.filter((e) => e.outcome === 'held').length === 2);
    listener.expect('req_big1');
    listener.expect('req_small');
    expect([(await first).status, (await small).status]).toEqual([200, 200]);
  });

  it('frees the slot of a held callback whose sender hangs up', async () => {
    const { listener, events } = await start({ maxHeld: 1 });
    const body = JSON.stringify(success('req_gone'));
    const hanging = httpRequest(listener.callbackUrl, { method: 'POST', agent: false, headers: { 'content-length': String(body.length) } });
    hanging.on('error', () => {});
    hanging.end(body);
    await until(() => events.some((e) => e.outcome === 'held'));
    hanging.destroy();
    await until(() => events.some((e) => e.outcome === 'dropped'));
    const next = post(listener.callbackUrl, success('req_next'));
    await until(() => events.filter((e) => e.outcome === 'held').length === 2);
    expect((await listener.waitFor('req_next')).requestId).toBe('req_next');
    expect((await next).status).toBe(200);
    // The dropped one is gone, not delivered later: its sender retries if it was genuine.
    expect(await stillPending(listener.waitFor('req_gone'))).toBe(true);
  });

  it('after refuseUnknown, refuses unregistered ids at once and still takes registered ones', async () => {
    const { listener } = await start();
    const waiting = listener.waitFor('req_known');
    const early = post(listener.callbackUrl, success('req_stray'));
    await new Promise((r) => setTimeout(r, 30));
    listener.refuseUnknown();
    expect((await early).status).toBe(400);
    expect((await post(listener.callbackUrl, success('req_other'))).status).toBe(400);
    expect((await post(listener.callbackUrl, success('req_known'))).status).toBe(200);
    expect((await waiting).requestId).toBe('req_known');
  });

  it('documents bounds that cover batch and a memory ceiling', () => {
    expect(MAX_HELD_CALLBACKS).toBeGreaterThanOrEqual(2 * MAX_CONCURRENCY);
    // Memory: at most MAX_HELD_BYTES of bodies are held, each at most MAX_CALLBACK_BYTES.
    expect(MAX_HELD_BYTES).toBeGreaterThanOrEqual(MAX_CALLBACK_BYTES);
    expect(MAX_HELD_BYTES).toBeLessThanOrEqual(16 * 1024 * 1024);
  });
});

describe('listener shutdown', () => {
  it('frees its port on close, even with a connection still open, and close is idempotent', async () => {
    const { listener } = await start();
    const { port } = listener;
    expect(await canBind(port)).toBe(false);
    // A sender that opened a request and never finished it must not keep the port.
    const hanging = httpRequest(listener.callbackUrl, { method: 'POST', headers: { 'content-length': '100' } });
    hanging.on('error', () => {});
    let hungUp = false;
    hanging.on('close', () => (hungUp = true));
    hanging.write('{"requestId":');
    await new Promise((r) => setTimeout(r, 30));
    // Waiting for the sender would last until Node's request timeout (5 minutes): past this test's own timeout.
    await Promise.all([listener.close(), listener.close()]);
    // The listener ended the open connection itself; the sender never finished its request.
    await until(() => hungUp);
    expect(await canBind(port)).toBe(true);
    await listener.close();
  });

  it('answers held callbacks 503 when it closes before the requestId is known', async () => {
    const { listener } = await start();
    const held = post(listener.callbackUrl, success('req_never'));
    await new Promise((r) => setTimeout(r, 30));
    await listener.close();
    expect((await held).status).toBe(503);
  });

  it('ends the wait with the abort reason on Ctrl-C', async () => {
    const { listener } = await start();
    listener.expectOnly('req_abort');
    const controller = new AbortController();
    const waiting = listener.waitFor('req_abort', controller.signal);
    const reason = new Error('interrupted');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(listener.waitFor('req_abort', controller.signal)).rejects.toBe(reason);
  });

  it('ends pending waits when it closes, and refuses new ones', async () => {
    const { listener } = await start();
    const waiting = listener.waitFor('req_pending');
    await listener.close();
    await expect(waiting).rejects.toThrow('the webhook listener is closed');
    await expect(listener.waitFor('req_later')).rejects.toThrow('the webhook listener is closed');
  });

  it('is unreachable once closed', async () => {
    const { listener } = await start();
    await listener.close();
    const address = { port: listener.port, host: '127.0.0.1' } as AddressInfo & { host: string };
    await expect(post(`http://${address.host}:${address.port}/x`, {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
