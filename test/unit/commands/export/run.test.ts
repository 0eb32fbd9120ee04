import { describe, expect, it } from 'vitest';
import type { ImageRecord } from '../../../../src/api/schema.js';
import { URL_LIFETIME_MS } from '../../../../src/api/spec.js';
import { imageFileName, imageFileNames, UrlRefresher } from '../../../../src/commands/export/run.js';

const record = (id: string, url = `http://x/${id}?v=1`): ImageRecord => ({
  id,
  url,
  coordinates: { latitude: 1, longitude: 2 },
  resolution: 'HD',
  createdAt: '2030-01-01T00:00:00Z',
});

describe('imageFileName', () => {
  it('names a file by id, never by a path the id spells; a changed id carries a hash of itself', () => {
    expect(imageFileName('0b6f-42')).toBe('0b6f-42.jpg');
    expect(imageFileName('../../etc/x')).toMatch(/^___\.\._etc_x~[0-9a-f]{10}\.jpg$/);
    expect(imageFileName('a/b')).not.toBe(imageFileName('a_b'));
    expect(imageFileName('a_b')).toBe('a_b.jpg');
  });

  it('tells apart ids that differ only in case, and keeps the others plain', () => {
    const names = imageFileNames(['ABC', 'abc', 'x', 'a/b', 'a_b']);
    expect(names.get('x')).toBe('x.jpg');
    expect(names.get('a_b')).toBe('a_b.jpg');
    expect(names.get('ABC')).toMatch(/^ABC~[0-9a-f]{10}\.jpg$/);
    expect(names.get('abc')).toMatch(/^abc~[0-9a-f]{10}\.jpg$/);
    expect(new Set([...names.values()].map((n) => n.toLowerCase())).size).toBe(5);
  });
});

describe('UrlRefresher', () => {
  it('calls a URL expired five minutes before its two hours are up', () => {
    let now = 0;
    const refresher = new UrlRefresher(async () => new Map(), new Map(), () => now);
    const listed = { record: record('a'), listedAt: 0 };
    now = URL_LIFETIME_MS - 6 * 60_000;
    expect(refresher.expired(listed)).toBe(false);
    now = URL_LIFETIME_MS - 4 * 60_000;
    expect(refresher.expired(listed)).toBe(true);
  });

  it('shares one re-listing among concurrent callers, and skips it when one finished meanwhile', async () => {
    let listings = 0;
    const listing = new Map([['a', { record: record('a'), listedAt: 0 }], ['gone', { record: record('gone'), listedAt: 0 }]]);
    const refresher = new UrlRefresher(async () => {
      listings++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return new Map([['a', { record: record('a', `http://x/a?v=${listings + 1}`), listedAt: 1 }]]);
    }, listing);
    const seen = refresher.version;
    await Promise.all([refresher.refresh(seen), refresher.refresh(seen), refresher.refresh(seen)]);
    expect(listings).toBe(1);
    expect(refresher.current('a')?.record.url).toBe('http://x/a?v=2');
    // Deleted from the account since the first listing.
    expect(refresher.current('gone')).toBeUndefined();
    // A caller whose URL failed before that re-listing finished does not trigger another.
    await refresher.refresh(seen);
    expect(listings).toBe(1);
    await refresher.refresh(refresher.version);
    expect(listings).toBe(2);
  });
});
