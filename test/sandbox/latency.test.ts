// --latency as a floor, over real sockets: no API answer (error answers
// included) comes sooner than the latency after its request, the sandbox's
// own work happens while it runs, and work whose answer never goes out is
// undone. Timing checks are lower bounds only; what must happen during the wait
// is shown under a latency longer than the test, so a busy machine cannot make
// them fail.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../src/api/schema.js';
import { generationRequest, manualClock, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { writeStandInWorker } from './worker-scripts.js';

let sb: TestSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'aerial-latency-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

let unique = 0;
/** A scene nothing else asks for, so it is really rendered rather than taken from the render cache. */
function freshScene(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return generationRequest({ tags: [`latency-${process.pid}-${++unique}`], ...overrides });
}

interface Timed {
  status: number;
  /** From just before the request was sent until the answer's head arrived. */
  ms: number;
}

async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, init);
  const ms = performance.now() - started;
  await res.arrayBuffer();
  return { status: res.status, ms };
}

function generation(target: TestSandbox, body: unknown, key = target.key, signal?: AbortSignal): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  };
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function imageFiles(target: TestSandbox): string[] {
  return readdirSync(join(target.dataDir, 'images'));
}

describe('--latency is a floor under every API answer', () => {
  it('answers successes and errors no sooner than the latency after the request', async () => {
    const latency = 300;
    sb = await startTestSandbox({ latencyMs: latency });
    const broke = await sb.createAccount({ credits: 0 });
    const api = sb.api();
    const answers = await Promise.all([
      timed(api, generation(sb, generationRequest())),
      timed(api, { headers: { 'x-api-key': sb.key } }),
      timed(api, generation(sb, generationRequest(), 'sbx_not-a-key-of-this-sandbox')),
      timed(api, generation(sb, '{"coordinates":')),
      timed(api, generation(sb, generationRequest(), broke.key)),
      timed(sb.api('/no/such/thing'), { headers: { 'x-api-key': sb.key } }),
      timed(api, { method: 'PUT', headers: { 'x-api-key': sb.key } }),
      timed(sb.api('/async'), generation(sb, generationRequest())),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 401, 400, 402, 404, 405, 400]);
    for (const answer of answers) expect(answer.ms).toBeGreaterThanOrEqual(latency);

    sb.setFaults({ failRate: 1 });
    const failed = await timed(api, generation(sb, generationRequest()));
    expect(failed.status).toBe(500);
    expect(failed.ms).toBeGreaterThanOrEqual(latency);
  });

  it('answers 429 RateLimited after the latency too, counting requests as they arrive', async () => {
    const latency = 200;
    sb = await startTestSandbox({ latencyMs: latency, rateLimit: 1, now: manualClock().now });
    const list = () => timed(sb!.api(), { headers: { 'x-api-key': sb!.key } });
    // Sent together: the second arrives while the first still waits, and is already over the limit.
    const answers = await Promise.all([list(), list()]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 429]);
    for (const answer of answers) expect(answer.ms).toBeGreaterThanOrEqual(latency);
  });

  it('still resets dropped connections at once', async () => {
    // A drop that waited for the latency would outlast this test's timeout.
    sb = await startTestSandbox({ latencyMs: 600_000, dropRate: 1 });
    await expect(fetch(sb.api(), { headers: { 'x-api-key': sb.key } })).rejects.toThrow();
  });

  it('renders and persists while the latency runs, not after it', async () => {
    // A latency far longer than the test: work waiting for it to pass would never be seen.
    sb = await startTestSandbox({ latencyMs: 600_000, renderThreads: 1, renderWorker: writeStandInWorker(work, 500) });
    const before = (await sb.credits(sb.key))!;
    const client = new AbortController();
    let answered = false;
    const answer = fetch(sb.api(), generation(sb, freshScene(), sb.key, client.signal)).finally(() => (answered = true));
    answer.catch(() => {});
    // The charge (made after the render, with the image record) is visible while the answer waits for the latency.
    await until(async () => (await sb!.credits(sb!.key)) === before - 1, 'the charge');
    expect(imageFiles(sb)).toHaveLength(1);
    expect(answered).toBe(false);
    client.abort();
    await expect(answer).rejects.toThrow();
  });
});

describe('work whose answer never goes out', () => {
  it('a sync generation whose client leaves during the wait is not charged, and its image is not kept', async () => {
    sb = await startTestSandbox({ latencyMs: 10_000 });
    const before = (await sb.credits(sb.key))!;
    const client = new AbortController();
    const request = fetch(sb.api(), generation(sb, freshScene(), sb.key, client.signal));
    request.catch(() => {});
    await until(async () => (await sb!.credits(sb!.key)) === before - 1, 'the charge');
    expect(imageFiles(sb)).toHaveLength(1);
    client.abort();
    await expect(request).rejects.toThrow();

    await until(async () => (await sb!.credits(sb!.key)) === before, 'the refund');
    await until(async () => imageFiles(sb!).length === 0, 'the image file to go');
    sb.setFaults({ latencyMs: 0 });
    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': sb.key } })).json()) as { totalElements: number };
    expect(page.totalElements).toBe(0);
    const [entry] = sb.requests();
    expect(entry).toMatchObject({ method: 'POST', status: null });
    expect(entry).not.toHaveProperty('imageId');
  });

  it('an async request whose client leaves during the wait is refunded and never started', async () => {
    sb = await startTestSandbox({ latencyMs: 10_000 });
    const before = (await sb.credits(sb.key))!;
    const client = new AbortController();
    const init = generation(sb, freshScene(), sb.key, client.signal);
    const request = fetch(sb.api('/async'), { ...init, headers: { ...(init.headers as Record<string, string>), 'x-callback-url': 'http://127.0.0.1:9/hook' } });
    request.catch(() => {});
    await until(async () => (await sb!.credits(sb!.key)) === before - 1, 'the charge');
    client.abort();
    await expect(request).rejects.toThrow();

    await until(async () => (await sb!.credits(sb!.key)) === before, 'the refund');
    await sb.idle();
    expect(sb.webhookAttempts()).toEqual([]);
    expect(imageFiles(sb)).toEqual([]);
  });
});

describe('async generation under --latency', () => {
  let receiver: Server;
  let hookUrl: string;
  let deliveries: Array<{ at: number; body: Record<string, unknown> }>;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        deliveries.push({ at: performance.now(), body: JSON.parse(text) as Record<string, unknown> });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  function accept(target: TestSandbox, request: GenerationRequest): Promise<Response> {
    const init = generation(target, request);
    return fetch(target.api('/async'), { ...init, headers: { ...(init.headers as Record<string, string>), 'x-callback-url': hookUrl } });
  }

  it('answers 202 after the latency, and sends the webhook no sooner than the latency after that', async () => {
    deliveries = [];
    const latency = 300;
    sb = await startTestSandbox({ latencyMs: latency });
    const started = performance.now();
    const res = await accept(sb, freshScene());
    expect(res.status).toBe(202);
    expect(performance.now() - started).toBeGreaterThanOrEqual(latency);
    await sb.idle();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.body).toMatchObject({ creditsUsed: 1 });
    // The 202 went out no sooner than one latency after the request, the webhook one more after that.
    // (Measured from the request: this process also renders, so it may notice the 202 late.)
    expect(deliveries[0]!.at - started).toBeGreaterThanOrEqual(2 * latency);
  });

  it('takes the image back and refunds it when the sandbox closes before the webhook is sent', async () => {
    deliveries = [];
    const dataDir = mkdtempSync(join(work, 'closing-'));
    sb = await startTestSandbox({ latencyMs: 1_000, dataDir });
    const key = sb.key;
    const before = (await sb.credits(key))!;
    expect((await accept(sb, freshScene())).status).toBe(202);
    // The image is made during the webhook's wait; close the sandbox once it is stored.
    await until(async () => {
      const account = (await (await fetch(`${sb!.url}/__sandbox/accounts/${key}`)).json()) as { images: number };
      return account.images === 1;
    }, 'the stored image');
    await sb.close();
    sb = undefined;
    expect(deliveries).toEqual([]);

    sb = await startTestSandbox({ dataDir, key });
    expect(await sb.credits(key)).toBe(before);
    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': key } })).json()) as { totalElements: number };
    expect(page.totalElements).toBe(0);
    expect(imageFiles(sb)).toEqual([]);
  });
});
