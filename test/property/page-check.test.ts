// The compiled check of a list page (isPage, isImageRecord in schema.ts) and
// the zod schema it stands in for, over the same hostile pages: records with
// a field missing, of another type, or null; ids empty or with controls;
// coordinates as strings, arrays, NaN-free oddities (1e999 is Infinity);
// counts that are not integers; objects that are arrays; whatever else
// JSON can say. They must agree on every one, and what the check accepts
// must be the value zod hands back. Then the client over a real socket: a
// page the check refuses still fails with zod's reason.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenAerialClient } from '../../src/api/client.js';
import { imageRecordSchema, isImageRecord, isPage, pageSchema } from '../../src/api/schema.js';

const good = () => ({
  id: '00000000-0000-4000-8000-000000000001',
  url: 'https://img.example/a.jpg?expires=1&signature=ab',
  coordinates: { latitude: 48.85, longitude: 2.29 },
  resolution: 'HD',
  createdAt: '2030-01-01T00:00:00Z',
  zoom: 'Medium',
});

/** What JSON.parse makes of a value: the check's inputs come from it, never from code. */
const parsed = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('', 'a\u0000b', '\u009b2J', '\u007f', '\u2028', 'x'.repeat(300), 0, -0, 1.5, 2 ** 53, null, true, [], {}, [1, 2], { latitude: 1 }),
);
const recordKeys = ['id', 'url', 'coordinates', 'resolution', 'createdAt', 'zoom', 'latitude', 'longitude', '__proto__', 'constructor', 'toString'];

/**
 * A value with every own "__proto__" member left out, at any depth. JSON.parse makes such a member an ordinary own
 * key, and the check hands it back so: data, never a prototype. zod's copy assigns it, which sets the copy's prototype
 * instead, so the two values are compared without it (and the check's own handling is asserted on its own below).
 */
function withoutOwnProto(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutOwnProto);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (key !== '__proto__') copy[key] = withoutOwnProto((value as Record<string, unknown>)[key]);
  return copy;
}

/** A good record with a few of its fields (or its coordinates' fields) removed or replaced by odd values. */
const hostileRecord = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.array(fc.tuple(fc.constantFrom(...recordKeys), fc.option(oddValue, { nil: undefined }), fc.boolean()), { maxLength: 4 })).map(([changes]) => {
    const record: Record<string, unknown> = good();
    for (const [key, value, inCoordinates] of changes) {
      const target = inCoordinates && record.coordinates && typeof record.coordinates === 'object' ? (record.coordinates as Record<string, unknown>) : record;
      if (value === undefined) delete target[key];
      // A copy: the constants are shared between runs, and one set inside itself would be a cycle.
      else target[key] = structuredClone(value);
    }
    return record;
  }) },
  { weight: 1, arbitrary: oddValue },
  { weight: 1, arbitrary: fc.constant(good()) },
);

/** Raw JSON text for what objects cannot carry: Infinity and an own "__proto__" member. */
const hostileText = fc.constantFrom(
  '{"id":"a","url":"u","coordinates":{"latitude":1e999,"longitude":-1e999},"resolution":"HD","createdAt":"t"}',
  '{"id":"a","url":"u","coordinates":{"latitude":1,"longitude":2},"resolution":"HD","createdAt":"t","__proto__":{"id":""}}',
  '{"__proto__":{"id":"a","url":"u","coordinates":{"latitude":1,"longitude":2},"resolution":"HD","createdAt":"t"}}',
  '{"id":"\\u0000","url":"u","coordinates":{"latitude":1,"longitude":2},"resolution":"HD","createdAt":"t"}',
  '{"id":"a","url":"u","coordinates":[1,2],"resolution":"HD","createdAt":"t"}',
);

const count = fc.oneof(fc.nat(5000), fc.constantFrom(-1, 1.5, '3', null, 1e999, 2 ** 60));

describe('the compiled page check', () => {
  it('accepts exactly the records zod accepts, and hands back the value zod makes of them', () => {
    fc.assert(
      fc.property(fc.oneof(hostileRecord.map(parsed), hostileText.map((text) => JSON.parse(text) as unknown)), (value) => {
        const zod = imageRecordSchema().safeParse(value);
        expect(isImageRecord(value)).toBe(zod.success);
        if (zod.success) expect(withoutOwnProto(value)).toEqual(withoutOwnProto(zod.data));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps an own "__proto__" member as data, at the top and inside coordinates: it never becomes a prototype', () => {
    const text = '{"id":"a","url":"u","coordinates":{"latitude":1,"longitude":2,"__proto__":{"polluted":true}},"resolution":"HD","createdAt":"t","__proto__":{"id":""}}';
    const value = JSON.parse(text) as Record<string, Record<string, unknown>>;
    expect(isImageRecord(value)).toBe(true);
    expect(imageRecordSchema().safeParse(value).success).toBe(true);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(value.coordinates)).toBe(Object.prototype);
    expect(Object.hasOwn(value.coordinates!, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(value)).toBe(text);
  });

  it('accepts exactly the pages zod accepts', () => {
    const page = fc.record({
      content: fc.oneof({ weight: 5, arbitrary: fc.array(hostileRecord, { maxLength: 5 }) }, { weight: 5, arbitrary: fc.array(fc.constant(good()), { maxLength: 5 }) }, { weight: 1, arbitrary: oddValue }),
      totalElements: count,
      totalPages: count,
      page: count,
      size: count,
    }, { requiredKeys: [] });
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 8, arbitrary: page.map(parsed) }, { weight: 1, arbitrary: oddValue.map(parsed) }), (value) => {
        const zod = pageSchema().safeParse(value);
        expect(isPage(value)).toBe(zod.success);
        if (zod.success) {
          accepted++;
          expect(withoutOwnProto(value)).toEqual(withoutOwnProto(zod.data));
        }
      }),
      { numRuns: 3000 },
    );
    // The generator reaches both answers, not only refusals.
    expect(accepted).toBeGreaterThan(50);
  });
});

describe('the client over a socket', () => {
  let body = '';
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  let client: GenAerialClient;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new GenAerialClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'page-check-key-0123' });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes a page the check accepts as parsed (non-ASCII text included), and refuses one it does not with zod’s reason', async () => {
    const record = { ...good(), note: 'Zürich — 東京' };
    body = JSON.stringify({ content: [record], totalElements: 1, totalPages: 1, page: 0, size: 20 });
    expect((await client.list()).content).toEqual([record]);
    body = JSON.stringify({ content: [good(), { ...good(), id: 'b\u0007' }], totalElements: 2, totalPages: 1, page: 0, size: 20 });
    await expect(client.list()).rejects.toThrow(/unexpected page of images: content\.1\.id must be an identifier without control characters/);
    body = JSON.stringify({ content: [], totalElements: 0.5, totalPages: 1, page: 0, size: 20 });
    await expect(client.list()).rejects.toThrow(/unexpected page of images: totalElements/);
  });
});
