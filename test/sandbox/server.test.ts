// The sandbox over real HTTP: every row of the spec's endpoint, error and limit
// tables, account isolation, signed URLs, request hygiene and the test endpoints.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageDimensions, SANDBOX_PRICE, type AspectRatio, type Resolution } from '../../src/api/enums.js';
import {
  generationRequest,
  jpegInfo,
  manualClock,
  startTestSandbox,
  type ManualClock,
  type TestSandbox,
} from '../helpers/sandbox.js';

interface CallOptions {
  key?: string | null;
  headers?: Record<string, string>;
}

function headersFor(sb: TestSandbox, options: CallOptions): Record<string, string> {
  const key = options.key === undefined ? sb.key : options.key;
  return { ...(key === null ? {} : { 'x-api-key': key }), ...options.headers };
}

function generate(sb: TestSandbox, body: unknown, options: CallOptions = {}): Promise<Response> {
  return fetch(sb.api(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headersFor(sb, options) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function list(sb: TestSandbox, query = '', options: CallOptions = {}): Promise<Response> {
  return fetch(`${sb.api()}${query ? `?${query}` : ''}`, { headers: headersFor(sb, options) });
}

function remove(sb: TestSandbox, id: string, options: CallOptions = {}): Promise<Response> {
  return fetch(sb.api(`/${encodeURIComponent(id)}`), { method: 'DELETE', headers: headersFor(sb, options) });
}

async function expectError(res: Response, status: number, error: string, messagePart?: string | RegExp): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { status: number; error: string; message: string };
  expect(body).toMatchObject({ status, error });
  expect(typeof body.message).toBe('string');
  if (messagePart) expect(body.message).toMatch(messagePart);
  return body.message;
}

/** A temporary image URL refused as S3 refuses a presigned one: its XML error document. */
async function expectStorageError(res: Response, status: number, code: string, messagePart?: RegExp): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/xml');
  const text = await res.text();
  expect(text).toMatch(new RegExp(`^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\\n<Error><Code>${code}</Code><Message>[^<]+</Message>.*<RequestId>[0-9A-F]{16}</RequestId></Error>$`));
  if (messagePart) expect(/<Message>([^<]+)<\/Message>/.exec(text)![1]).toMatch(messagePart);
}

async function listPage(sb: TestSandbox, query = '', key = sb.key) {
  const res = await list(sb, query, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    content: Array<{ id: string; url: string; coordinates: { latitude: number; longitude: number }; resolution: string; createdAt: string }>;
    totalElements: number;
    totalPages: number;
    page: number;
    size: number;
  };
}

async function generatedId(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const id = res.headers.get('x-sandbox-image-id');
  expect(id).toBeTruthy();
  return id!;
}

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(async () => {
  await sb?.close();
});

describe('authentication (x-api-key)', () => {
  const calls: Array<[string, (key: string | null) => Promise<Response>]> = [
    ['sync generation', (key) => generate(sb, generationRequest(), { key })],
    [
      'async generation',
      (key) =>
        fetch(sb.api('/async'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-callback-url': 'http://127.0.0.1:9/hook', ...(key ? { 'x-api-key': key } : {}) },
          body: JSON.stringify(generationRequest()),
        }),
    ],
    ['listing', (key) => list(sb, '', { key })],
    ['deletion', (key) => remove(sb, 'some-id', { key })],
  ];

  it.each(calls)('%s answers 401 JSON without a key and with a wrong one', async (_name, call) => {
    const before = await sb.credits(sb.key);
    await expectError(await call(null), 401, 'Unauthorized', /missing x-api-key/);
    await expectError(await call('sbx_not-a-real-key-000'), 401, 'Unauthorized', /not a key/);
    expect(await sb.credits(sb.key)).toBe(before);
  });
});

describe('POST /image-generation (synchronous)', () => {
  const shapes: Array<[Resolution, AspectRatio]> = [
    ['HD', 'Square'],
    ['HD', 'Landscape'],
    ['HD', 'Portrait'],
    ['FHD', 'Landscape'],
  ];

  it.each(shapes)('returns a baseline %s %s JPEG of the implied size and charges the table price', async (resolution, aspectRatio) => {
    const account = await sb.createAccount({ credits: 10 });
    const res = await generate(sb, generationRequest({ resolution, aspectRatio }), { key: account.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const info = jpegInfo(new Uint8Array(await res.arrayBuffer()));
    expect(info).toEqual({ baseline: true, ...imageDimensions(resolution, aspectRatio) });
    expect(await sb.credits(account.key)).toBe(10 - SANDBOX_PRICE[resolution]);
  });

  it('prices UHD at 4 credits (checked through 402, since a UHD render is slow)', async () => {
    const account = await sb.createAccount({ credits: 3 });
    await expectError(await generate(sb, generationRequest({ resolution: 'UHD' }), { key: account.key }), 402, 'InsufficientCredits', /costs 4 credits; the account has 3/);
    expect(SANDBOX_PRICE).toEqual({ HD: 1, FHD: 2, UHD: 4 });
  });

  it('keeps the image in history by default and not with saveImage:false (still charged)', async () => {
    const account = await sb.createAccount({ credits: 10 });
    const saved = await generatedId(await generate(sb, generationRequest(), { key: account.key }));
    const unsaved = await generate(sb, generationRequest({ saveImage: false }), { key: account.key });
    expect(unsaved.status).toBe(200);
    expect(jpegInfo(new Uint8Array(await unsaved.arrayBuffer())).baseline).toBe(true);
    expect(unsaved.headers.get('x-sandbox-image-id')).toBeNull();
    const page = await listPage(sb, '', account.key);
    expect(page.content.map((record) => record.id)).toEqual([saved]);
    expect(await sb.credits(account.key)).toBe(8);
  });

  it('accepts every optional field and exactly 10 tags', async () => {
    const res = await generate(
      sb,
      generationRequest({
        includeContext: true,
        includeSurroundings: false,
        improveOutput: true,
        saveImage: true,
        prompt: 'golden light on the river',
        tags: Array.from({ length: 10 }, (_, i) => `tag${i}`),
        coordinates: { lat: -90, lng: 179.9 },
      }),
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['a missing required field', (({ zoom: _zoom, ...rest }) => rest)(generationRequest()), /zoom is required/],
    ['missing coordinates', (({ coordinates: _c, ...rest }) => rest)(generationRequest()), /coordinates is required/],
    ['missing tags', (({ tags: _t, ...rest }) => rest)(generationRequest()), /tags is required/],
    ['latitude above 90', generationRequest({ coordinates: { lat: 90.0001, lng: 0 } }), /coordinates\.lat must be between -90 and 90/],
    ['latitude below -90', generationRequest({ coordinates: { lat: -91, lng: 0 } }), /coordinates\.lat must be between -90 and 90/],
    ['a non-numeric longitude', { ...generationRequest(), coordinates: { lat: 1, lng: 'east' } }, /coordinates\.lng/],
    ['11 tags', generationRequest({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), /tags must have at most 10 entries/],
    ['a bad resolution', { ...generationRequest(), resolution: '4K' }, /resolution must be one of HD, FHD, UHD/],
    ['a bad zoom', { ...generationRequest(), zoom: 'Huge' }, /zoom must be one of/],
    ['a bad angle', { ...generationRequest(), angle: 'Sideways' }, /angle must be one of/],
    ['a bad weather', { ...generationRequest(), weather: 'Hail' }, /weather must be one of/],
    ['a bad daytime', { ...generationRequest(), daytime: 'Noon' }, /daytime must be one of/],
    ['a bad aspect ratio', { ...generationRequest(), aspectRatio: 'Wide' }, /aspectRatio must be one of/],
    ['a bad epoch', { ...generationRequest(), epoch: 'Future' }, /epoch must be one of/],
    ['a lower-case enum value', { ...generationRequest(), resolution: 'hd' }, /resolution must be one of/],
    ['an abbreviated bearing', { ...generationRequest(), bearing: 'NE' }, /bearing must be one of .*not NE/],
    [
      'latitude/longitude instead of lat/lng',
      { ...generationRequest(), coordinates: { latitude: 1, longitude: 2 } },
      /coordinates\.lat is required.*lat and lng, not latitude and longitude/,
    ],
    ['a non-boolean flag', { ...generationRequest(), saveImage: 'yes' }, /saveImage/],
    ['an unknown field', { ...generationRequest(), style: 'noir' }, /unknown field\(s\) style/],
    ['a JSON array body', [generationRequest()], /body/],
  ];

  it.each(invalid)('refuses %s with 400 ValidationFailed naming the field, without charging', async (_what, body, message) => {
    const before = await sb.credits(sb.key);
    await expectError(await generate(sb, body), 400, 'ValidationFailed', message);
    expect(await sb.credits(sb.key)).toBe(before);
  });

  it('refuses with 402 InsufficientCredits without charging, and spends the last credits exactly', async () => {
    const account = await sb.createAccount({ credits: 1 });
    await expectError(await generate(sb, generationRequest({ resolution: 'FHD' }), { key: account.key }), 402, 'InsufficientCredits', /costs 2 credits; the account has 1/);
    expect(await sb.credits(account.key)).toBe(1);
    expect((await listPage(sb, '', account.key)).totalElements).toBe(0);
    const ok = await generate(sb, generationRequest({ resolution: 'HD' }), { key: account.key });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect(await sb.credits(account.key)).toBe(0);
    await expectError(await generate(sb, generationRequest(), { key: account.key }), 402, 'InsufficientCredits');
  });

  it('answers 500 ErrorGeneratingImage when generation fails, without charging or storing', async () => {
    const account = await sb.createAccount({ credits: 5 });
    sb.setFaults({ failRate: 1 });
    try {
      await expectError(await generate(sb, generationRequest(), { key: account.key }), 500, 'ErrorGeneratingImage', /--fail-rate/);
    } finally {
      sb.setFaults({ failRate: 0 });
    }
    expect(await sb.credits(account.key)).toBe(5);
    expect((await listPage(sb, '', account.key)).totalElements).toBe(0);
  });
});

describe('request bodies the server must survive', () => {
  async function expectStillServing(): Promise<void> {
    const res = await generate(sb, generationRequest({ saveImage: false }));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }

  it('answers malformed JSON with a clear 400', async () => {
    await expectError(await generate(sb, '{"coordinates": {"lat": 1,'), 400, 'ValidationFailed', /not valid JSON/);
    await expectStillServing();
  });

  it('answers an empty body with a clear 400', async () => {
    await expectError(await generate(sb, ''), 400, 'ValidationFailed', /empty/);
  });

  it('answers a 10 MB body with a clear 400 and stays up', async () => {
    const huge = JSON.stringify({ ...generationRequest(), prompt: 'x'.repeat(10 * 1024 * 1024) });
    await expectError(await generate(sb, huge), 400, 'ValidationFailed', /exceeds 1 MiB/);
    await expectStillServing();
  });

  it('answers a wrong content type with a clear 400', async () => {
    const res = await fetch(sb.api(), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-api-key': sb.key },
      body: JSON.stringify(generationRequest()),
    });
    await expectError(res, 400, 'ValidationFailed', /Content-Type must be application\/json; got 'text\/plain'/);
    await expectStillServing();
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await generate(sb, generationRequest({ saveImage: false }), { headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('answers an absurd declared length at once and closes that connection', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(sb.api(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': sb.key, 'content-length': String(1024 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"coordinates":');
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'ValidationFailed' });
    await expectStillServing();
  });

  it('answers unknown paths with 404 JSON and wrong methods with 405 and Allow', async () => {
    await expectError(await fetch(`${sb.url}/nothing-here`), 404, 'NotFound');
    await expectError(await fetch(sb.api('/a/b'), { headers: { 'x-api-key': sb.key } }), 404, 'NotFound');
    const put = await fetch(sb.api(), { method: 'PUT', headers: { 'x-api-key': sb.key } });
    expect(put.headers.get('allow')).toBe('GET, POST');
    await expectError(put, 405, 'MethodNotAllowed');
  });
});

describe('GET /image-generation (listing)', () => {
  let clock: ManualClock;
  let lister: TestSandbox;
  let ids: string[];

  beforeAll(async () => {
    clock = manualClock();
    lister = await startTestSandbox({ now: clock.now });
    ids = [];
    // Only two distinct scenes: rendering is the slow part, and the renderer caches repeats.
    const resolutions: Resolution[] = ['FHD', 'HD', 'FHD', 'HD', 'HD'];
    for (const resolution of resolutions) {
      clock.advance(1000);
      ids.push(await generatedId(await generate(lister, generationRequest({ resolution }))));
    }
  });
  afterAll(async () => {
    await lister?.close();
  });

  it('answers the first page of 20, newest first, with the documented record fields', async () => {
    const page = await listPage(lister);
    expect(page).toMatchObject({ page: 0, size: 20, totalElements: 5, totalPages: 1 });
    expect(page.content.map((record) => record.id)).toEqual([...ids].reverse());
    const oldest = page.content[4]!;
    expect(oldest).toMatchObject({ id: ids[0], resolution: 'FHD', coordinates: { latitude: 48.8584, longitude: 2.2945 } });
    expect(oldest.createdAt).toBe('2030-01-01T00:00:01.000Z');
    expect(oldest.url).toMatch(new RegExp(`^${lister.url}/__sandbox/images/${ids[0]}\\.jpg\\?expires=\\d+&sig=[0-9a-f]{64}$`));
    expect(page.content[0]).toMatchObject({ id: ids[4], resolution: 'HD', zoom: 'Medium', aspectRatio: 'Landscape', width: 1280, height: 720 });
  });

  it('pages with page and size; a page past the end is empty with true totals', async () => {
    const pages = await Promise.all([0, 1, 2].map((page) => listPage(lister, `page=${page}&size=2`)));
    expect(pages.map((p) => p.content.length)).toEqual([2, 2, 1]);
    expect(pages.every((p) => p.totalElements === 5 && p.totalPages === 3 && p.size === 2)).toBe(true);
    expect(pages.flatMap((p) => p.content.map((record) => record.id))).toEqual([...ids].reverse());
    const past = await listPage(lister, 'page=7&size=2');
    expect(past).toMatchObject({ content: [], totalElements: 5, totalPages: 3, page: 7, size: 2 });
  });

  it('sorts by createdAt and id, asc and desc, and by repeated criteria', async () => {
    const order = async (query: string) => (await listPage(lister, query)).content.map((record) => record.id);
    expect(await order('sort=createdAt,asc')).toEqual(ids);
    expect(await order('sort=createdAt,desc')).toEqual([...ids].reverse());
    expect(await order('sort=createdAt')).toEqual(ids);
    expect(await order('sort=id,asc')).toEqual([...ids].sort());
    expect(await order('sort=id,desc')).toEqual([...ids].sort().reverse());
    // Resolution by pixel count, then newest first within a resolution.
    expect(await order('sort=resolution,desc&sort=createdAt,desc')).toEqual([ids[2], ids[0], ids[4], ids[3], ids[1]]);
    expect(await order('sort=resolution')).toEqual([ids[1], ids[3], ids[4], ids[0], ids[2]]);
  });

  it('keeps a stable total order when timestamps tie', async () => {
    const account = await lister.createAccount({ credits: 20 });
    const tied: string[] = [];
    for (let i = 0; i < 6; i++) tied.push(await generatedId(await generate(lister, generationRequest(), { key: account.key })));
    const walk = async (query: string) => {
      const seen: string[] = [];
      for (let page = 0; page < 3; page++) seen.push(...(await listPage(lister, `${query}&page=${page}&size=2`, account.key)).content.map((r) => r.id));
      return seen;
    };
    expect(await walk('sort=createdAt,desc')).toEqual([...tied].reverse());
    expect(await walk('sort=createdAt,asc')).toEqual(tied);
    expect(await walk('sort=createdAt,desc')).toEqual(await walk('sort=createdAt,desc'));
  });

  const invalid: Array<[string, RegExp]> = [
    ['size=0', /size must be a whole number from 1 to 1000/],
    ['size=1001', /size must be a whole number from 1 to 1000/],
    ['size=ten', /size must be a whole number/],
    ['page=-1', /page must be a whole number at least 0/],
    ['page=1.5', /page must be a whole number/],
    ['sort=colour,asc', /sort property 'colour' is not supported/],
    ['sort=createdAt,sideways', /sort property 'sideways' is not supported/],
    ['sort=desc', /names no property/],
  ];
  it.each(invalid)('refuses %s with 400 ValidationFailed', async (query, message) => {
    await expectError(await list(lister, query), 400, 'ValidationFailed', message);
  });
});

describe('DELETE /image-generation/{id}', () => {
  it('deletes permanently: 200, gone from the list, its URL 404, a second delete 404', async () => {
    const account = await sb.createAccount({ credits: 5 });
    const id = await generatedId(await generate(sb, generationRequest(), { key: account.key }));
    const [record] = (await listPage(sb, '', account.key)).content;
    const res = await remove(sb, id, { key: account.key });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect((await listPage(sb, '', account.key)).totalElements).toBe(0);
    await expectStorageError(await fetch(record!.url), 404, 'NoSuchKey', /deleted/);
    await expectError(await remove(sb, id, { key: account.key }), 404, 'NotFound', new RegExp(id));
  });

  it('answers an unknown id with 404 NotFound', async () => {
    await expectError(await remove(sb, 'no-such-image'), 404, 'NotFound', /no image with id 'no-such-image'/);
  });
});

describe('two accounts', () => {
  it('never see or delete each other\'s images, and pay only for their own', async () => {
    const alice = await sb.createAccount({ credits: 10 });
    const bob = await sb.createAccount({ credits: 10 });
    const aliceId = await generatedId(await generate(sb, generationRequest({ resolution: 'FHD' }), { key: alice.key }));
    const bobId = await generatedId(await generate(sb, generationRequest(), { key: bob.key }));

    expect((await listPage(sb, '', alice.key)).content.map((r) => r.id)).toEqual([aliceId]);
    expect((await listPage(sb, '', bob.key)).content.map((r) => r.id)).toEqual([bobId]);

    const unknown = await expectError(await remove(sb, 'no-such-image', { key: bob.key }), 404, 'NotFound');
    const foreign = await expectError(await remove(sb, aliceId, { key: bob.key }), 404, 'NotFound');
    // Someone else's id reads exactly like an unknown one.
    expect(foreign.replace(aliceId, 'X')).toBe(unknown.replace('no-such-image', 'X'));
    expect((await listPage(sb, '', alice.key)).content.map((r) => r.id)).toEqual([aliceId]);

    expect(await sb.credits(alice.key)).toBe(8);
    expect(await sb.credits(bob.key)).toBe(9);
  });
});

describe('temporary image URLs', () => {
  let clock: ManualClock;
  let signer: TestSandbox;
  let id: string;
  let generated: Buffer;

  beforeAll(async () => {
    clock = manualClock();
    signer = await startTestSandbox({ now: clock.now });
    const res = await generate(signer, generationRequest());
    generated = Buffer.from(await res.clone().arrayBuffer());
    id = await generatedId(res);
    await generatedId(await generate(signer, generationRequest({ aspectRatio: 'Square' })));
  });
  afterAll(async () => {
    await signer?.close();
  });

  async function urlOf(imageId: string): Promise<string> {
    const page = await listPage(signer);
    return page.content.find((record) => record.id === imageId)!.url;
  }

  it('serve the image without an API key', async () => {
    const res = await fetch(await urlOf(id));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await res.arrayBuffer()).equals(generated)).toBe(true);
  });

  it('stop working 2 hours after the list response, and a new listing gives a fresh one', async () => {
    const start = clock.now();
    const url = await urlOf(id);
    clock.set(start + 2 * 60 * 60 * 1000 - 1);
    expect((await fetch(url)).status).toBe(200);
    clock.set(start + 2 * 60 * 60 * 1000 + 1000);
    await expectStorageError(await fetch(url), 403, 'AccessDenied', /^Request has expired/);
    const fresh = await fetch(await urlOf(id));
    expect(fresh.status).toBe(200);
    await fresh.arrayBuffer();
  });

  it('answer 403 when tampered with', async () => {
    const url = new URL(await urlOf(id));
    const sig = url.searchParams.get('sig')!;
    const expires = url.searchParams.get('expires')!;

    const badSig = new URL(url);
    badSig.searchParams.set('sig', `${sig[0] === '0' ? '1' : '0'}${sig.slice(1)}`);
    await expectStorageError(await fetch(badSig), 403, 'SignatureDoesNotMatch', /signature does not match/);

    const later = new URL(url);
    later.searchParams.set('expires', String(Number(expires) + 86_400));
    await expectStorageError(await fetch(later), 403, 'SignatureDoesNotMatch', /signature does not match/);

    const [other] = (await listPage(signer)).content.filter((record) => record.id !== id);
    const swapped = new URL(url);
    swapped.pathname = `/__sandbox/images/${other!.id}.jpg`;
    await expectStorageError(await fetch(swapped), 403, 'SignatureDoesNotMatch');

    const unsigned = new URL(url);
    unsigned.search = '';
    await expectStorageError(await fetch(unsigned), 403, 'AccessDenied', /missing a valid expires or sig/);
  });
});

describe('request log and test endpoints', () => {
  it('log every API request with its key id (never the key) and generation bodies; DELETE clears', async () => {
    const account = await sb.createAccount({ credits: 5 });
    await fetch(`${sb.url}/__sandbox/requests`, { method: 'DELETE' });
    const body = generationRequest();
    await (await generate(sb, body, { key: account.key })).arrayBuffer();
    await (await list(sb, 'size=3&sort=createdAt,desc&sort=id,asc', { key: account.key })).text();
    await (await list(sb, '', { key: 'sbx_wrong-key-1234' })).text();

    const res = await fetch(`${sb.url}/__sandbox/requests`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(account.key);
    expect(text).not.toContain('sbx_wrong-key-1234');
    const entries = JSON.parse(text) as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatchObject({ method: 'POST', path: '/api/external/v1/image-generation', status: 200, keyId: account.keyId, body });
    expect(entries[0]!.imageId).toEqual(expect.any(String));
    expect(entries[1]).toMatchObject({ method: 'GET', status: 200, query: { size: '3', sort: ['createdAt,desc', 'id,asc'] } });
    expect(entries[2]).toMatchObject({ status: 401, error: 'Unauthorized', keyId: null });
    expect(Date.parse(entries[0]!.time as string)).not.toBeNaN();

    const cleared = await fetch(`${sb.url}/__sandbox/requests`, { method: 'DELETE' });
    expect(await cleared.json()).toEqual({ cleared: 3 });
    expect(await (await fetch(`${sb.url}/__sandbox/requests`)).json()).toEqual([]);
    expect(sb.requests()).toEqual([]);
  });

  it('create accounts and report their credits', async () => {
    const created = await fetch(`${sb.url}/__sandbox/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ credits: 7 }),
    });
    expect(created.status).toBe(201);
    const account = (await created.json()) as { key: string; keyId: string; credits: number };
    expect(account).toMatchObject({ credits: 7, keyId: expect.stringMatching(/^key_/) });
    await (await generate(sb, generationRequest({ resolution: 'FHD' }), { key: account.key })).arrayBuffer();
    const shown = await fetch(`${sb.url}/__sandbox/accounts/${encodeURIComponent(account.key)}`);
    expect(await shown.json()).toEqual({ keyId: account.keyId, credits: 5, images: 1 });

    const chosen = await fetch(`${sb.url}/__sandbox/accounts`, { method: 'POST', body: JSON.stringify({ credits: 0, key: 'my-fixed-test-key' }) });
    expect(await chosen.json()).toMatchObject({ key: 'my-fixed-test-key', credits: 0 });
    const duplicate = await fetch(`${sb.url}/__sandbox/accounts`, { method: 'POST', body: JSON.stringify({ key: 'my-fixed-test-key' }) });
    await expectError(duplicate, 409, 'Conflict');
    await expectError(await fetch(`${sb.url}/__sandbox/accounts`, { method: 'POST', body: '{"credits":-1}' }), 400, 'ValidationFailed', /credits/);
    await expectError(await fetch(`${sb.url}/__sandbox/accounts/nobody-has-this-key`), 404, 'NotFound');
  });
});
