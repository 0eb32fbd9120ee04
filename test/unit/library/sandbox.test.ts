// 'aerial/sandbox' (src/library/sandbox.ts): the sandbox as a test fixture, in
// this process over real sockets: a private data directory unless told, the
// fault knobs, the request log, accounts, and nothing left behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { API_PATH } from '../../../src/api/spec.js';
import {
  Forbidden,
  GenAerial,
  ImageUrlRefusedError,
  InsufficientCredits,
  NetworkError,
  NotFound,
  RateLimited,
  ServerError,
  TimeoutError,
  Unauthorized,
  ValidationFailed,
} from '../../../src/library/index.js';
import { startSandbox, type Sandbox } from '../../../src/library/sandbox.js';

const running: Sandbox[] = [];
const clients: GenAerial[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(running.splice(0).map((sandbox) => sandbox.close()));
});

async function fixture(options: Parameters<typeof startSandbox>[0] = {}): Promise<{ sandbox: Sandbox; client: GenAerial }> {
  const sandbox = await startSandbox({ renderThreads: 0, ...options });
  running.push(sandbox);
  const client = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, env: {}, retry: { rateLimitedAttempts: 1 } });
  clients.push(client);
  return { sandbox, client };
}

const paris = { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD' } as const;

describe('startSandbox', () => {
  it('serves on a free loopback port, over a temporary directory of its own that close() removes', async () => {
    const sandbox = await startSandbox({ renderThreads: 0 });
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.port).toBeGreaterThan(0);
    expect(sandbox.dataDir.startsWith(tmpdir())).toBe(true);
    expect(existsSync(sandbox.dataDir)).toBe(true);
    const other = await startSandbox({ renderThreads: 0 });
    expect(other.port).not.toBe(sandbox.port);
    expect(other.dataDir).not.toBe(sandbox.dataDir);
    await Promise.all([sandbox.close(), other.close()]);
    expect(existsSync(sandbox.dataDir)).toBe(false);
    await sandbox.close();
  });

  it('keeps a data directory it was given', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aerial-fixture-'));
    try {
      const sandbox = await startSandbox({ renderThreads: 0, dataDir, apiKey: 'sk_fixture_key_0001' });
      expect(sandbox.apiKey).toBe('sk_fixture_key_0001');
      await sandbox.close();
      expect(readdirSync(dataDir).length).toBeGreaterThan(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('logs the requests it answered, without the key', async () => {
    const { sandbox, client } = await fixture();
    await client.generate(paris);
    await client.list({ size: 5 });
    const log = sandbox.requests();
    expect(log.map((entry) => [entry.method, entry.path, entry.status])).toEqual([
      ['POST', API_PATH, 200],
      ['GET', API_PATH, 200],
    ]);
    expect(log[1]!.query).toEqual({ size: '5' });
    expect(JSON.stringify(log)).not.toContain(sandbox.apiKey);
    sandbox.clearRequests();
    expect(sandbox.requests()).toEqual([]);
  });

  it('turns its fault knobs: credits, failures, rate limit, latency', async () => {
    const { sandbox, client } = await fixture({ credits: 1, latencyMs: 150 });
    expect(sandbox.faults()).toMatchObject({ latencyMs: 150, failRate: 0, dropRate: 0, webhookFail: 0 });
    const started = Date.now();
    await client.generate(paris);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await sandbox.credits()).toBe(0);
    await expect(client.generate(paris)).rejects.toBeInstanceOf(InsufficientCredits);

    const account = await sandbox.createAccount({ credits: 5 });
    const other = new GenAerial({ apiKey: account.apiKey, baseUrl: sandbox.url, env: {}, retry: { rateLimitedAttempts: 1 } });
    clients.push(other);
    sandbox.setFaults({ latencyMs: 0, failRate: 1 });
    await expect(other.generate(paris)).rejects.toMatchObject({ constructor: ServerError, status: 500, code: 'ErrorGeneratingImage' });
    sandbox.setFaults({ failRate: 0, rateLimit: 1 });
    const answers = await Promise.allSettled([other.list(), other.list(), other.list()]);
    expect(answers.some((answer) => answer.status === 'rejected' && answer.reason instanceof RateLimited && answer.reason.retryAfterSeconds! >= 1)).toBe(true);
    expect(await sandbox.credits(account.apiKey)).toBe(5);
  });

  it('refuses a knob out of range, naming it, and leaves no directory behind', async () => {
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('aerial-sandbox-')).length;
    await expect(startSandbox({ failRate: 2 })).rejects.toThrow(/failRate must be between 0 and 1/);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('aerial-sandbox-')).length).toBe(before);
  });
});

describe('sandbox.use: scripted answers', () => {
  it('answers the next POST 503 with Retry-After, and the client\'s retry gets the image: 503 then 200', async () => {
    const { sandbox } = await fixture();
    const client = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, env: {} });
    clients.push(client);
    sandbox.use({ method: 'POST', times: 1 }, { status: 503, headers: { 'retry-after': '0' } });
    const jpeg = await client.generate(paris);
    expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
    const log = sandbox.requests();
    expect(log.map((entry) => [entry.method, entry.status, entry.error, entry.scripted])).toEqual([
      ['POST', 503, 'ServiceUnavailable', true],
      ['POST', 200, undefined, undefined],
    ]);
    // The scripted answer charged nothing: only the image did.
    expect(await sandbox.credits()).toBe(999);
  });

  it('gives each 4xx and 5xx the service\'s error body, which the client reads as the service\'s own', async () => {
    const { sandbox, client } = await fixture();
    const cases = [
      [400, ValidationFailed, 'ValidationFailed'],
      [401, Unauthorized, 'Unauthorized'],
      [402, InsufficientCredits, 'InsufficientCredits'],
      [403, Forbidden, 'Forbidden'],
      [404, NotFound, 'NotFound'],
      [500, ServerError, 'ErrorGeneratingImage'],
      [502, ServerError, 'BadGateway'],
      [504, ServerError, 'GatewayTimeout'],
    ] as const;
    for (const [status] of cases) sandbox.use({ method: 'post' }, { status });
    for (const [status, kind, code] of cases) {
      const error = await client.generate(paris).catch((caught: unknown) => caught);
      expect(error, String(status)).toBeInstanceOf(kind);
      expect(error).toMatchObject({ status, code, message: expect.stringMatching(/a scripted answer/) });
    }
    const raw = await fetch(`${sandbox.url}${API_PATH}`, { headers: { 'x-api-key': sandbox.apiKey } });
    expect(raw.status).toBe(200);
    sandbox.use({ method: 'GET' }, { status: 429, headers: { 'Retry-After': '7' } });
    const limited = await fetch(`${sandbox.url}${API_PATH}`, { headers: { 'x-api-key': sandbox.apiKey } });
    expect([limited.status, limited.headers.get('retry-after'), limited.headers.get('content-type')]).toEqual([429, '7', 'application/json; charset=utf-8']);
    expect(await limited.json()).toEqual({ status: 429, error: 'RateLimited', message: 'Too Many Requests (a scripted answer)' });
    // A scripted answer of its own body, and a 2xx with none.
    sandbox.use({ path: API_PATH }, { status: 418, body: 'short and stout' });
    const teapot = await fetch(`${sandbox.url}${API_PATH}`, { headers: { 'x-api-key': sandbox.apiKey } });
    expect([teapot.status, await teapot.text()]).toEqual([418, 'short and stout']);
    sandbox.use({ method: 'DELETE' }, { status: 200 });
    await client.delete('no-such-image');
  });

  it('are used in the order they were added, each for its times, and only for the requests they match', async () => {
    const { sandbox, client } = await fixture();
    sandbox.use({ method: 'POST', times: 2 }, { status: 500 });
    sandbox.use({ method: 'POST' }, { status: 402 });
    sandbox.use({ path: `${API_PATH}/*`, method: 'DELETE', times: Infinity }, { status: 404 });
    sandbox.use({ path: /\/nowhere$/ }, { status: 410 });
    await client.list();
    await expect(client.generate(paris)).rejects.toBeInstanceOf(ServerError);
    await expect(client.generate(paris)).rejects.toBeInstanceOf(ServerError);
    await expect(client.generate(paris)).rejects.toBeInstanceOf(InsufficientCredits);
    await client.generate(paris);
    for (let i = 0; i < 3; i++) await expect(client.delete(`gone-${i}`)).rejects.toBeInstanceOf(NotFound);
    expect(sandbox.requests().map((entry) => [entry.method, entry.status])).toEqual([
      ['GET', 200],
      ['POST', 500],
      ['POST', 500],
      ['POST', 402],
      ['POST', 200],
      ['DELETE', 404],
      ['DELETE', 404],
      ['DELETE', 404],
    ]);
    // What a script answered is logged as the request it was: body, account.
    const scripted = sandbox.requests()[1]!;
    expect(scripted).toMatchObject({ scripted: true, body: { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD' } });
    expect(scripted.keyId).toMatch(/^key_/);
  });

  it('shape the sandbox\'s own answer when they give no status: headers and a delay', async () => {
    const { sandbox, client } = await fixture();
    sandbox.use({ method: 'GET' }, { headers: { 'x-request-id': 'abc', 'cache-control': 'max-age=1' } });
    const answer = await fetch(`${sandbox.url}${API_PATH}?size=1`, { headers: { 'x-api-key': sandbox.apiKey } });
    expect([answer.status, answer.headers.get('x-request-id'), answer.headers.get('cache-control')]).toEqual([200, 'abc', 'max-age=1']);
    expect(await answer.json()).toMatchObject({ content: [], totalElements: 0, size: 1 });
    expect(sandbox.requests()[0]).toMatchObject({ status: 200, scripted: true });
    await client.list();
    expect(sandbox.requests()[1]!.scripted).toBeUndefined();
    // Delayed past a client's patience: it gives up first, and the answer never reached it.
    sandbox.use({ method: 'GET' }, { delayMs: 60_000 });
    const impatient = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, env: {}, timeoutMs: 200, retry: { attempts: { lookup: 1 } } });
    clients.push(impatient);
    await expect(impatient.list()).rejects.toBeInstanceOf(TimeoutError);
    await client.list();
    expect(sandbox.requests().map((entry) => [entry.status, entry.scripted])).toEqual([[200, true], [200, undefined], [null, true], [200, undefined]]);
  });

  it('drop a connection, cut an image short after it was charged, and stall until the client gives up', async () => {
    const { sandbox, client } = await fixture();
    sandbox.use({ method: 'GET' }, { drop: true });
    const dropped = await fetch(`${sandbox.url}${API_PATH}`, { headers: { 'x-api-key': sandbox.apiKey } }).catch((error: unknown) => error);
    expect(dropped).toBeInstanceOf(TypeError);

    sandbox.use({ method: 'POST' }, { truncateAfterBytes: 1000 });
    const cut = await client.generate(paris).catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(NetworkError);
    expect(cut).toMatchObject({ maybeProcessed: true, message: expect.stringMatching(/connection closed by the other side/) });
    expect(await sandbox.credits()).toBe(999); // the service did its work, and charged for it

    sandbox.use({ method: 'GET' }, { stall: true });
    const impatient = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, env: {}, timeoutMs: 300, retry: { attempts: { lookup: 1 } } });
    clients.push(impatient);
    await expect(impatient.list()).rejects.toBeInstanceOf(TimeoutError);

    sandbox.use({ method: 'GET' }, { status: 200, body: { content: [] }, truncateAfterBytes: 5, stall: true });
    const partial = await new Promise<IncomingMessage>((resolve, reject) => httpGet(`${sandbox.url}${API_PATH}`, { headers: { 'x-api-key': sandbox.apiKey } }, resolve).on('error', reject));
    expect(partial.headers['content-length']).toBe('14');
    const received: Buffer[] = [];
    const ended = new Promise<string>((resolve) => {
      partial.on('error', () => resolve('error'));
      partial.on('end', () => resolve('end'));
    });
    const first = new Promise<void>((resolve) => partial.once('data', () => resolve()));
    partial.on('data', (chunk: Buffer) => received.push(chunk));
    await first;
    expect(Buffer.concat(received).toString()).toBe('{"con');
    // Held, until reset() lets it go: it never ends as a whole answer.
    await sandbox.reset();
    expect(await ended).toBe('error');
    expect(Buffer.concat(received).toString()).toBe('{"con');
    expect(sandbox.requests()).toEqual([]);
  });

  it('refuse a script that cannot be played, naming the field', () => {
    const sandbox = { use: (match: unknown, answer: unknown) => running[0]!.use(match as never, answer as never) };
    return fixture().then(() => {
      expect(() => sandbox.use({ method: 'POST', times: 0 }, { status: 503 })).toThrow(/^match\.times must be a whole number of requests from 1, or Infinity; got 0$/);
      expect(() => sandbox.use({ metod: 'POST' }, { status: 503 })).toThrow(/^match\.metod is not a setting of a scripted match; it takes method, path, times$/);
      expect(() => sandbox.use({ path: 'image-generation' }, {})).toThrow(/^match\.path must be a path starting with \//);
      expect(() => sandbox.use({}, { status: 99 })).toThrow(/^answer\.status must be an HTTP status from 200 to 599; got 99$/);
      expect(() => sandbox.use({}, { delayMs: -1 })).toThrow(/^answer\.delayMs must be between 0 and 600000/);
      expect(() => sandbox.use({}, { truncateAfterBytes: 1.5 })).toThrow(/^answer\.truncateAfterBytes must be a whole number/);
      expect(() => sandbox.use({}, { body: 'x' })).toThrow(/^answer\.body needs answer\.status/);
      expect(() => sandbox.use({}, { drop: true, status: 500 })).toThrow(/^answer\.drop .* cannot be combined with answer\.status$/);
      expect(() => sandbox.use({}, { headers: { 'x-a': 'one\ntwo' } })).toThrow(/^answer\.headers\["x-a"\] must be text on one line/);
      expect(() => sandbox.use({}, { stall: 'yes' })).toThrow(/^answer\.stall must be true or false; got "yes"$/);
      expect(() => sandbox.use({}, { retry: 1 })).toThrow(/^answer\.retry is not a setting of a scripted answer/);
    });
  });
});

describe('sandbox.advanceTime', () => {
  it('expires a listed URL two hours after the listing (403 as S3 says it), while a fresh listing\'s URL works', async () => {
    const { sandbox, client } = await fixture();
    await client.generate(paris);
    const [listed] = (await client.list()).content;
    expect((await client.download(listed!.url)).length).toBeGreaterThan(0);
    sandbox.advanceTime(2 * 3600 * 1000 + 1000);
    const refused = await client.download(listed!.url).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ImageUrlRefusedError);
    expect(refused).toMatchObject({ status: 403, code: 'AccessDenied', message: expect.stringMatching(/^Request has expired/) });
    const raw = await fetch(listed!.url);
    expect([raw.status, raw.headers.get('content-type')]).toEqual([403, 'application/xml']);
    expect(await raw.text()).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error><Code>AccessDenied<\/Code><Message>Request has expired[^<]*<\/Message><Expires>[^<]+<\/Expires><ServerTime>[^<]+<\/ServerTime><RequestId>[0-9A-F]{16}<\/RequestId><\/Error>$/);
    const [fresh] = (await client.list()).content;
    expect((await client.download(fresh!.url)).length).toBeGreaterThan(0);
    // New images are made at the sandbox's time.
    await client.generate(paris);
    const newest = (await client.list({ sort: ['createdAt,desc'] })).content[0]!;
    expect(Date.parse(newest.createdAt) - Date.now()).toBeGreaterThan(2 * 3600 * 1000);
  });

  it('takes milliseconds from 0, naming itself otherwise', async () => {
    const { sandbox } = await fixture();
    for (const wrong of [-1, Number.NaN, Infinity]) expect(() => sandbox.advanceTime(wrong)).toThrow(/^advanceTime\(ms\) takes milliseconds from 0 to/);
  });
});

describe('sandbox.webhookDeliveries', () => {
  it('shows each delivery attempt of an async generation, with its payload', async () => {
    const { sandbox, client } = await fixture({ webhookFail: 1 });
    const listener = await client.listen();
    try {
      const { requestId } = await client.generateAsync(paris, { callbackUrl: listener.callbackUrl });
      const done = await listener.waitFor(requestId, { timeoutMs: 30_000 });
      await sandbox.idle();
      const deliveries = sandbox.webhookDeliveries();
      expect(deliveries.map((delivery) => [delivery.attempt, delivery.outcome, delivery.kind])).toEqual([
        [1, 'skipped', 'success'],
        [2, 'delivered', 'success'],
      ]);
      expect(deliveries[1]).toMatchObject({ requestId, url: listener.callbackUrl, status: expect.any(Number), payload: { requestId, generatedImageId: done.generatedImageId, creditsUsed: 1, signedUrl: done.signedUrl } });
    } finally {
      await listener.close();
    }
  });
});

describe('sandbox.reset', () => {
  it('leaves no images, the credits, knobs and clock as started, and one logged request after the next list()', async () => {
    const { sandbox, client } = await fixture({ credits: 10, failRate: 0 });
    await client.generate(paris);
    await client.generate({ ...paris, resolution: 'FHD' });
    const other = await sandbox.createAccount({ credits: 3 });
    sandbox.setFaults({ latencyMs: 50, dropRate: 0.5 });
    sandbox.use({ method: 'GET', times: Infinity }, { status: 500 });
    sandbox.advanceTime(3 * 3600 * 1000);
    expect(await sandbox.credits()).toBe(7);
    const files = () => readdirSync(join(sandbox.dataDir, 'images'));
    expect(files()).toHaveLength(2);

    await sandbox.reset();
    expect(sandbox.requests()).toEqual([]);
    expect(sandbox.webhookDeliveries()).toEqual([]);
    expect(sandbox.faults()).toEqual({ latencyMs: 0, failRate: 0, dropRate: 0, webhookFail: 0 });
    expect(await sandbox.credits()).toBe(10);
    expect(await sandbox.credits(other.apiKey)).toBeUndefined();
    expect(files()).toEqual([]);
    const page = await client.list();
    expect(page.totalElements).toBe(0);
    expect(sandbox.requests()).toHaveLength(1);
    await client.generate(paris);
    expect(Math.abs(Date.parse((await client.list()).content[0]!.createdAt) - Date.now())).toBeLessThan(60_000);
  });
});

describe('setFaults', () => {
  it('refuses a knob out of range or one that does not exist, naming it, and keeps the knobs as they were', async () => {
    const { sandbox } = await fixture();
    expect(() => sandbox.setFaults({ failRate: 2 })).toThrow(/^failRate must be between 0 and 1 \(a share of the requests\); got 2$/);
    expect(() => sandbox.setFaults({ dropRate: -0.1 })).toThrow(/^dropRate must be between 0 and 1/);
    expect(() => sandbox.setFaults({ latencyMs: Number.NaN })).toThrow(/^latencyMs must be between 0 and 600000 \(milliseconds\); got NaN$/);
    expect(() => sandbox.setFaults({ webhookFail: 1.5 })).toThrow(/^webhookFail must be a whole number/);
    expect(() => sandbox.setFaults({ rateLimit: -1 })).toThrow(/^rateLimit must be a number of requests per second above 0/);
    expect(() => sandbox.setFaults({ failrate: 1 } as never)).toThrow(/^"failrate" is not a fault knob; the knobs are latencyMs, failRate, dropRate, rateLimit, webhookFail$/);
    expect(() => sandbox.setFaults({ latencyMs: 10, failRate: 7 })).toThrow(/failRate/);
    expect(sandbox.faults()).toEqual({ latencyMs: 0, failRate: 0, dropRate: 0, webhookFail: 0 });
  });

  it('refuses an option startSandbox does not have, naming it', async () => {
    await expect(startSandbox({ failrate: 0.5 } as never)).rejects.toThrow(/^"failrate" is not an option of startSandbox; it takes dataDir, host/);
  });
});
