// The shared listener of `batch --async`, over real sockets.
import { afterEach, describe, expect, it } from 'vitest';
import { CallbackHub } from '../../src/batch/callbacks.js';

let hub: CallbackHub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
});

async function start(): Promise<CallbackHub> {
  hub = await CallbackHub.start({ host: '127.0.0.1', port: 0 });
  return hub;
}

function post(url: string, body: unknown, method = 'POST'): Promise<Response> {
  return fetch(url, { method, body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

const success = (requestId: string) => ({ requestId, signedUrl: 'http://x/y.jpg', generatedImageId: `img-${requestId}`, creditsUsed: 1 });

describe('CallbackHub', () => {
  it('hands each callback to the row waiting for its requestId', async () => {
    const h = await start();
    expect(h.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}$/);
    const signal = new AbortController().signal;
    const a = h.wait('a', signal);
    const b = h.wait('b', signal);
    expect((await post(h.callbackUrl, success('b'))).status).toBe(200);
    expect((await post(h.callbackUrl, { requestId: 'a', errorCode: 'ErrorGeneratingImage', errorMessage: 'no' })).status).toBe(200);
    expect(await b).toMatchObject({ generatedImageId: 'img-b' });
    expect(await a).toMatchObject({ errorCode: 'ErrorGeneratingImage' });
  });

  it('keeps a callback that arrives before its row asks, and acknowledges repeats without delivering them twice', async () => {
    const h = await start();
    expect((await post(h.callbackUrl, success('early'))).status).toBe(200);
    expect(await h.wait('early', new AbortController().signal)).toMatchObject({ requestId: 'early' });
    expect((await post(h.callbackUrl, success('early'))).status).toBe(200);
    const controller = new AbortController();
    const again = h.wait('early', controller.signal);
    controller.abort(new Error('timed out'));
    await expect(again).rejects.toThrow('timed out');
  });

  it('answers nothing but POSTs of a documented payload to the token path', async () => {
    const h = await start();
    const origin = new URL(h.callbackUrl).origin;
    expect((await post(`${origin}/wrong-token`, success('x'))).status).toBe(404);
    expect((await fetch(h.callbackUrl)).status).toBe(404);
    expect((await post(h.callbackUrl, 'not json')).status).toBe(400);
    expect((await post(h.callbackUrl, { requestId: 'x', hello: 1 })).status).toBe(400);
    expect((await post(h.callbackUrl, { ...success('x'), padding: 'x'.repeat(70_000) })).status).toBe(400);
    // None of those reached a waiter.
    const controller = new AbortController();
    const waiting = h.wait('x', controller.signal);
    setTimeout(() => controller.abort(new Error('nothing came')), 20);
    await expect(waiting).rejects.toThrow('nothing came');
  });
});
