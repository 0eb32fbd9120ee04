// Asynchronous generation over real sockets: acceptance, its 400/402 answers,
// both webhook payloads, and delivery retries against a real local receiver.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { imageDimensions } from '../../../src/api/enums.js';
import { underForcedGc } from '../../helpers/forced-gc.js';
import { generationRequest, jpegInfo, manualClock, startTestSandbox, type ManualClock, type TestSandbox } from '../../helpers/sandbox.js';

interface Delivery {
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Resolves with the next delivery (or one already received and not yet taken). */
  next(): Promise<Delivery>;
  close(): Promise<void>;
}

/** A webhook receiver on loopback; `answer(n)` is the status for the n-th POST (1-based). */
async function startReceiver(answer: (n: number) => number | 'hang' = () => 200): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      deliveries.push({ body: JSON.parse(text) as Record<string, unknown>, headers: req.headers });
      wake?.();
      const status = answer(deliveries.length);
      if (status === 'hang') return;
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    async next() {
      while (deliveries.length <= taken) await new Promise<void>((resolve) => (wake = resolve));
      return deliveries[taken++]!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function accept(sb: TestSandbox, body: unknown, callbackUrl: string | undefined, key = sb.key): Promise<Response> {
  return fetch(sb.api('/async'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      ...(callbackUrl === undefined ? {} : { 'x-callback-url': callbackUrl }),
    },
    body: JSON.stringify(body),
  });
}

async function acceptedId(res: Response): Promise<string> {
  expect(res.status).toBe(202);
  const body = (await res.json()) as { requestId: string; status: string };
  expect(body).toEqual({ requestId: expect.any(String), status: 'processing' });
  return body.requestId;
}

let clock: ManualClock;
let sb: TestSandbox;
let receiver: Receiver;

beforeAll(async () => {
  clock = manualClock();
  sb = await startTestSandbox({ now: clock.now });
});
afterAll(async () => {
  await sb?.close();
});
afterEach(async () => {
  sb.setFaults({ failRate: 0, webhookFail: 0 });
  await receiver?.close();
});

describe('POST /image-generation/async', () => {
  it('accepts with 202, charges at acceptance and POSTs the success payload with a working 2-hour signedUrl', async () => {
    receiver = await startReceiver();
    const account = await sb.createAccount({ credits: 10 });
    const requestId = await acceptedId(await accept(sb, generationRequest({ resolution: 'FHD', aspectRatio: 'Portrait' }), receiver.url, account.key));
    const { body, headers } = await receiver.next();
    expect(headers['content-type']).toBe('application/json');
    expect(body).toEqual({ requestId, signedUrl: expect.any(String), generatedImageId: expect.any(String), creditsUsed: 2 });
    expect(await sb.credits(account.key)).toBe(8);

    const image = await fetch(body.signedUrl as string);
    expect(image.status).toBe(200);
    expect(jpegInfo(new Uint8Array(await image.arrayBuffer()))).toEqual({ baseline: true, ...imageDimensions('FHD', 'Portrait') });

    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': account.key } })).json()) as { content: Array<{ id: string }> };
    expect(page.content.map((record) => record.id)).toEqual([body.generatedImageId]);

    clock.advance(2 * 60 * 60 * 1000 + 1000);
    expect((await fetch(body.signedUrl as string)).status).toBe(403);
  });

  it('with saveImage:false still delivers a downloadable image but keeps it out of history', async () => {
    receiver = await startReceiver();
    const account = await sb.createAccount({ credits: 10 });
    await acceptedId(await accept(sb, generationRequest({ saveImage: false }), receiver.url, account.key));
    const { body } = await receiver.next();
    expect((await fetch(body.signedUrl as string)).status).toBe(200);
    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': account.key } })).json()) as { totalElements: number };
    expect(page.totalElements).toBe(0);
    const del = await fetch(sb.api(`/${body.generatedImageId as string}`), { method: 'DELETE', headers: { 'x-api-key': account.key } });
    expect(del.status).toBe(404);
    expect(await sb.credits(account.key)).toBe(9);
  });

  const badCallbacks: Array<[string, string | undefined, RegExp]> = [
    ['a missing x-callback-url', undefined, /x-callback-url header is required/],
    ['an empty x-callback-url', '', /x-callback-url header is required/],
    ['a relative x-callback-url', '/hook', /absolute http\(s\) URL/],
    ['a non-http x-callback-url', 'ftp://127.0.0.1/hook', /absolute http\(s\) URL/],
    ['a malformed x-callback-url', 'http//nope', /absolute http\(s\) URL/],
  ];
  it.each(badCallbacks)('answers %s with 400 ValidationFailed and charges nothing', async (_what, callbackUrl, message) => {
    const account = await sb.createAccount({ credits: 3 });
    const res = await accept(sb, generationRequest(), callbackUrl, account.key);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { status: number; error: string; message: string };
    expect(body).toMatchObject({ status: 400, error: 'ValidationFailed' });
    expect(body.message).toMatch(message);
    expect(await sb.credits(account.key)).toBe(3);
  });

  it('answers an invalid body with 400 ValidationFailed naming the field', async () => {
    const res = await accept(sb, { ...generationRequest(), coordinates: { lat: 100, lng: 0 } }, 'http://127.0.0.1:9/hook');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, error: 'ValidationFailed', message: expect.stringMatching(/coordinates\.lat/) });
  });

  it('answers too few credits with 402 InsufficientCredits and charges nothing', async () => {
    const account = await sb.createAccount({ credits: 3 });
    const res = await accept(sb, generationRequest({ resolution: 'UHD' }), 'http://127.0.0.1:9/hook', account.key);
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ status: 402, error: 'InsufficientCredits' });
    expect(await sb.credits(account.key)).toBe(3);
    expect(sb.webhookAttempts().filter((attempt) => attempt.url === 'http://127.0.0.1:9/hook')).toEqual([]);
  });

  it('reports a failed generation with the error payload and refunds the credits', async () => {
    receiver = await startReceiver();
    const account = await sb.createAccount({ credits: 5 });
    sb.setFaults({ failRate: 1 });
    const requestId = await acceptedId(await accept(sb, generationRequest(), receiver.url, account.key));
    const { body } = await receiver.next();
    expect(body).toEqual({ requestId, errorCode: 'ErrorGeneratingImage', errorMessage: expect.stringMatching(/--fail-rate/) });
    await sb.idle();
    expect(await sb.credits(account.key)).toBe(5);
    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': account.key } })).json()) as { totalElements: number };
    expect(page.totalElements).toBe(0);
  });
});

describe('webhook delivery', () => {
  it('withholds the first --webhook-fail attempts, then the retry gets through', async () => {
    receiver = await startReceiver();
    sb.setFaults({ webhookFail: 2 });
    const requestId = await acceptedId(await accept(sb, generationRequest(), receiver.url));
    await receiver.next();
    await sb.idle();
    expect(receiver.deliveries).toHaveLength(1);
    const attempts = sb.webhookAttempts().filter((attempt) => attempt.requestId === requestId);
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'skipped'],
      [2, 'skipped'],
      [3, 'delivered'],
    ]);
    expect(receiver.deliveries[0]!.headers['x-sandbox-delivery-attempt']).toBe('3');
  });

  it('retries when the receiver answers non-2xx', async () => {
    receiver = await startReceiver((n) => (n <= 2 ? 500 : 204));
    const requestId = await acceptedId(await accept(sb, generationRequest(), receiver.url));
    await sb.idle();
    expect(receiver.deliveries.map((d) => d.body.requestId)).toEqual([requestId, requestId, requestId]);
    const attempts = sb.webhookAttempts().filter((attempt) => attempt.requestId === requestId);
    expect(attempts.map((a) => [a.outcome, a.status])).toEqual([
      ['failed', 500],
      ['failed', 500],
      ['delivered', 204],
    ]);
  });

  it('retries network errors with doubling backoff and gives up after 6 attempts', async () => {
    const gone = await startReceiver();
    const url = gone.url;
    await gone.close();
    const started = performance.now();
    const requestId = await acceptedId(await accept(sb, generationRequest(), url));
    await sb.idle();
    const attempts = sb.webhookAttempts().filter((attempt) => attempt.requestId === requestId);
    expect(attempts).toHaveLength(6);
    expect(attempts.every((a) => a.outcome === 'failed' && a.detail)).toBe(true);
    expect(attempts[5]!.gaveUp).toBe(true);
    // 20 + 40 + 80 + 160 + 320 ms of backoff in the test configuration.
    expect(performance.now() - started).toBeGreaterThanOrEqual(600);
  });

  it('gives up on a receiver that never answers as soon as each attempt is out of time, while the garbage collector runs', async () => {
    const own = await startTestSandbox({ webhook: { timeoutMs: 400, attempts: 2, firstRetryDelayMs: 20 } });
    const silent = await startReceiver(() => 'hang');
    try {
      const started = performance.now();
      const requestId = await acceptedId(await accept(own, generationRequest(), silent.url));
      const { collections } = await underForcedGc(own.idle());
      const elapsed = performance.now() - started;
      const attempts = own.webhookAttempts().filter((attempt) => attempt.requestId === requestId);
      expect(attempts.map((a) => [a.attempt, a.outcome, a.detail])).toEqual([
        [1, 'failed', 'no answer within 400ms'],
        [2, 'failed', 'no answer within 400ms'],
      ]);
      expect(attempts[1]!.gaveUp).toBe(true);
      expect(silent.deliveries).toHaveLength(2);
      // Two attempts of 400 ms and a 20 ms pause, each ended by its deadline ('no answer within 400ms' above),
      // not whenever the connection gives up: a deadline the collector dropped would leave idle() waiting past the test's timeout.
      expect(elapsed).toBeGreaterThanOrEqual(820);
      // Collections ran all through both attempts (how many depends on how busy the machine is: each takes a while).
      expect(collections).toBeGreaterThanOrEqual(4);
    } finally {
      await own.close();
      await silent.close();
    }
  });
});

describe('closing with work pending', () => {
  it('aborts a hanging delivery instead of waiting for it', async () => {
    // A delivery allowed far longer than the test: a close that waited for it would never end.
    const own = await startTestSandbox({ webhook: { timeoutMs: 600_000 } });
    const hanging = await startReceiver(() => 'hang');
    try {
      await acceptedId(await accept(own, generationRequest(), hanging.url));
      await hanging.next();
      await own.close();
    } finally {
      await hanging.close();
    }
  });
});
