import { describe, expect, it } from 'vitest';
import type { ImageRecord } from '../../../../src/api/schema.js';
import { URL_LIFETIME_MS } from '../../../../src/api/spec.js';
import { DownloadQueue, UrlRefresher } from '../../../../src/commands/export/downloads.js';

const record = (id: string, url = `http://x/${id}?v=1`): ImageRecord => ({
  id,
  url,
  coordinates: { latitude: 1, longitude: 2 },
  resolution: 'HD',
  createdAt: '2030-01-01T00:00:00Z',
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

  it('looks for the images waiting when it starts; one queued while it runs is not taken for deleted', async () => {
    const listing = new Map([['a', { record: record('a'), listedAt: 0 }]]);
    let asked: string[] = [];
    const refresher = new UrlRefresher(async (wanted) => {
      asked = [...wanted];
      // Queued while the re-listing walks: listed fresh by the walk that queued it.
      listing.set('b', { record: record('b'), listedAt: 1 });
      return new Map();
    }, listing);
    await refresher.refresh(refresher.version);
    expect(asked).toEqual(['a']);
    expect(refresher.current('a')).toBeUndefined();
    expect(refresher.current('b')?.record.id).toBe('b');
  });
});

describe('DownloadQueue', () => {
  it('runs `concurrency` at a time in order, holds the pusher back while enough wait, and drains', async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const queue = new DownloadQueue<number>(2, async (n) => {
      started.push(n);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
    });
    for (let n = 0; n < 10; n++) {
      queue.push(n);
      await queue.roomFor(3);
      expect(queue.queued).toBeLessThanOrEqual(3);
    }
    await queue.drain();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(most).toBe(2);
    expect(queue.active).toBe(0);
  });

  it('starts nothing more once stopped or once a job throws, and keeps the first error', async () => {
    const started: number[] = [];
    const queue = new DownloadQueue<number>(1, async (n) => {
      started.push(n);
      if (n === 1) throw new Error('relisting failed');
    });
    for (let n = 0; n < 5; n++) queue.push(n);
    await queue.drain();
    expect(started).toEqual([0, 1]);
    expect((queue.failure as Error).message).toBe('relisting failed');
    queue.push(9);
    await queue.drain();
    expect(started).toEqual([0, 1]);
  });
});
