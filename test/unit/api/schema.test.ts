// The record schema of the list endpoint: what an identifier may hold, and
// that a page reports a bad record at its path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONTROL_CHARACTERS } from '../../../src/api/image-id.js';
import { imageRecordSchema, pageSchema } from '../../../src/api/schema.js';

const record = (id: string) => ({ id, url: 'https://img.example/a.jpg', coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2030-01-01T00:00:00Z', zoom: 'Medium' });

describe('image records', () => {
  it('take an id exactly when it is non-empty and holds no C0 or C1 control character', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('\u007f', 'a\u009fb', '\u00a0', '\u2028', 'id\u0000')), (id) => {
        expect(imageRecordSchema().safeParse(record(id)).success).toBe(id !== '' && !CONTROL_CHARACTERS.test(id));
      }),
      { numRuns: 500 },
    );
  });

  it('name what is wrong with an id', () => {
    const refused = imageRecordSchema().safeParse(record('a\u001b[2Jb'));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({ path: ['id'], message: 'must be an identifier without control characters' });
    expect(imageRecordSchema().safeParse(record('')).error?.issues[0]).toMatchObject({ path: ['id'], message: 'must be a non-empty identifier' });
  });

  it('keep the fields the spec does not show, and a page reports a bad record at its place', () => {
    expect(imageRecordSchema().parse(record('a')).zoom).toBe('Medium');
    const page = { content: [record('a'), record('b\u0007')], totalElements: 2, totalPages: 1, page: 0, size: 20 };
    expect(pageSchema().safeParse(page).error?.issues[0]?.path).toEqual(['content', 1, 'id']);
  });
});
