// The page walker behind `list --all` and `export`, against generated servers:
// honest ones (every record once, however the pages fall), shifting ones
// (pages overlapping as history moves), and arbitrary ones that lie about
// their totals, repeat pages or never end. Whatever a server does, the walk
// ends within its caps, yields each id at most once (within its window of
// recent ids), and either finishes at an announced end or stops with a
// PagingError. It asks for large pages and follows the size granted.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cliErrorOf, ExitCode } from '../../src/lifecycle/errors.js';
import { ApiError } from '../../src/api/errors.js';
import { PagingError, WALK_LIMITS, WALK_PAGE_SIZES, walkPages, type WalkLimits, type WalkOptions } from '../../src/api/pages.js';
import type { ImageRecord, Page } from '../../src/api/schema.js';

const record = (id: string, extra: Record<string, unknown> = {}): ImageRecord => ({
  id,
  url: `https://cdn.example/${id}.jpg`,
  coordinates: { latitude: 1, longitude: 2 },
  resolution: 'HD',
  createdAt: '2030-01-01T00:00:00Z',
  ...extra,
});

/** A server's honest page `index` of `ids` at `size` per page. */
function honestPage(ids: string[], index: number, size: number): Page {
  return {
    content: ids.slice(index * size, index * size + size).map((id) => record(id)),
    totalElements: ids.length,
    totalPages: Math.ceil(ids.length / size),
    page: index,
    size,
  };
}

interface Walked {
  ids: string[];
  requests: number;
  error?: unknown;
}

async function walk(server: (index: number, size: number) => Page, limits?: WalkLimits, options: WalkOptions = {}): Promise<Walked> {
  const ids: string[] = [];
  let requests = 0;
  try {
    for await (const { fresh } of walkPages(async (index, size) => {
      requests++;
      return server(index, size);
    }, { ...options, limits })) {
      for (const r of fresh) ids.push(r.id);
    }
    return { ids, requests };
  } catch (error) {
    return { ids, requests, error };
  }
}

describe('walkPages against honest servers', () => {
  it('collects every record exactly once, in one request per page (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 120 }), fc.integer({ min: 1, max: 40 }), async (ids, size) => {
        const result = await walk((index) => honestPage(ids, index, size));
        expect(result.error).toBeUndefined();
        expect(result.ids).toEqual(ids);
        expect(result.requests).toBe(Math.max(1, Math.ceil(ids.length / size)));
      }),
      { numRuns: 300 },
    );
  });

  it('goes on through pages that overlap as history shifts, as long as each brings something new (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 60 }), fc.integer({ min: 2, max: 10 }), fc.array(fc.nat(), { maxLength: 30 }), async (count, size, shifts) => {
        // Newest first, and between two requests up to size-1 images are created: the next page repeats that many.
        let ids = Array.from({ length: count }, (_, i) => `img-${i}`);
        let created = 0;
        const result = await walk((index) => {
          const shift = (shifts[index] ?? 0) % size;
          const page = honestPage(ids, index, size);
          ids = [...Array.from({ length: shift }, () => `new-${created++}`), ...ids];
          return page;
        });
        expect(result.error).toBeUndefined();
        expect(new Set(result.ids).size).toBe(result.ids.length);
        // Nothing of the history that existed at the start is lost.
        for (let i = 0; i < count; i++) expect(result.ids).toContain(`img-${i}`);
      }),
      { numRuns: 200 },
    );
  });

  it('takes an empty listing called zero pages or one', async () => {
    for (const totalPages of [0, 1]) {
      const result = await walk(() => ({ content: [], totalElements: 0, totalPages, page: 0, size: 20 }));
      expect(result).toEqual({ ids: [], requests: 1 });
    }
  });
});

describe('walkPages against servers that lie', () => {
  const small: WalkLimits = { maxPages: 50, maxImages: 200, minGrowth: 20, growthShare: 0.1, window: 1000 };

  /** A page as a hostile server might write it: ids from a small pool (so repeats happen), any totals. */
  const anyPage = fc.record({
    ids: fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), { maxLength: 6 }),
    fresh: fc.nat({ max: 4 }),
    totalElements: fc.oneof(fc.nat({ max: 300 }), fc.constant(1e9), fc.integer({ min: -3, max: -1 })),
    totalPages: fc.oneof(fc.nat({ max: 300 }), fc.constant(1e9), fc.constant(-1)),
    size: fc.oneof(fc.nat({ max: 10 }), fc.constant(1e6)),
    pageField: fc.oneof(fc.constant('asked'), fc.nat({ max: 5 })),
  });

  it('ends within its caps, never yields an id twice, and fails only with PagingError (property)', async () => {
    let stopped = 0;
    let ended = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(anyPage, { minLength: 1, maxLength: 8 }), fc.boolean(), async (pages, consistentTotals) => {
        let counter = 0;
        const result = await walk((index) => {
          const spec = pages[index % pages.length]!;
          // Half the servers keep their totals consistent, so the repeats and caps are reached, not only the arithmetic.
          const size = consistentTotals ? Math.max(1, spec.size) : spec.size;
          const content = [...spec.ids, ...Array.from({ length: spec.fresh }, () => `fresh-${counter++}`)].slice(0, consistentTotals ? size : undefined);
          const totalElements = consistentTotals ? Math.abs(spec.totalElements) : spec.totalElements;
          return {
            content: content.map((id) => record(id)),
            totalElements,
            totalPages: consistentTotals ? Math.ceil(totalElements / size) : spec.totalPages,
            page: consistentTotals || spec.pageField === 'asked' ? index : (spec.pageField as number),
            size,
          };
        }, small);
        expect(result.requests).toBeLessThanOrEqual(small.maxPages);
        expect(new Set(result.ids).size).toBe(result.ids.length);
        // The largest claim believed, what it may grow by, and one more page (at most 10 here).
        expect(result.ids.length).toBeLessThanOrEqual(small.maxImages + Math.max(small.minGrowth, small.maxImages * small.growthShare) + 10);
        if (result.error === undefined) {
          ended++;
        } else {
          stopped++;
          expect(result.error).toBeInstanceOf(PagingError);
          expect(cliErrorOf(result.error as PagingError).exitCode).toBe(ExitCode.Server);
          expect((result.error as Error).message).not.toMatch(/[\r\n]/);
        }
      }),
      { numRuns: 1000 },
    );
    // Both outcomes were exercised, so neither assertion above is vacuous.
    expect(stopped).toBeGreaterThan(100);
    expect(ended).toBeGreaterThan(20);
  });

  it('stops at once when the same page comes back claiming a billion pages, and at the second request when its claim is modest', async () => {
    const billion = await walk((index) => ({ content: [record('img_1')], totalElements: 1e9, totalPages: 1e9, page: index, size: 1 }));
    expect(billion.requests).toBe(1);
    expect((billion.error as Error).message).toMatch(/claims 1000000000 images/);
    const modest = await walk((index) => ({ content: [record('img_1')], totalElements: 100, totalPages: 100, page: index, size: 1 }));
    expect(modest.requests).toBe(2);
    expect(modest.ids).toEqual(['img_1']);
    expect((modest.error as Error).message).toBe(
      "the service's paging cannot be trusted: page 1 brought no image that earlier pages had not; stopped after 1 page (1 image)",
    );
  });

  it('stops at the first page whose claim is past the caps, or whose numbers do not add up', async () => {
    const cases: Array<[Partial<Page>, RegExp]> = [
      [{ totalElements: 1e9, totalPages: 1e9, size: 1 }, /claims 1000000000 images, more than the 100000000 one walk believes/],
      [{ totalElements: 1, totalPages: 1e9, size: 1 }, /page 0 says 1000000000 pages of 1 for 1 images, which is 1 page/],
      [{ page: 3 }, /asked for page 0, got page 3/],
      [{ size: 0, content: [] }, /page 0 has size 0 for 1 images/],
      [{ totalElements: -1 }, /negative count/],
      [{ content: [record('a'), record('b')], totalElements: 2, size: 1, totalPages: 2 }, /page 0 holds 2 images but its size is 1/],
    ];
    for (const [overrides, message] of cases) {
      const result = await walk((index) => ({ content: [record('a')], totalElements: 1, totalPages: 1, page: index, size: 1, ...overrides }));
      expect(result.requests).toBe(1);
      expect(result.ids).toEqual([]);
      expect((result.error as Error).message).toMatch(message);
    }
  });

  it('stops a server that always has one more page of new images once the listing has grown past what a walk follows', async () => {
    const result = await walk((index) => ({ content: [record(`img-${index}`)], totalElements: index + 2, totalPages: index + 2, page: index, size: 1 }));
    // The first page claims 2 images; a walk follows 1,000 more (WALK_LIMITS.minGrowth) at the size granted, 1.
    expect(WALK_LIMITS.minGrowth).toBe(1000);
    expect(result.requests).toBe(1002);
    expect(result.ids).toHaveLength(1001);
    expect((result.error as Error).message).toMatch(/the listing is too large to walk: it grew to 1003 images while it was walked, past the 1002 one walk follows; stopped after 1001 pages \(1001 images\)$/);
  });

  it('bounds the pages by the size granted: a claim believable in images but not in requests stops at once', async () => {
    const result = await walk((index) => ({ content: [record(`img-${index}`)], totalElements: 5_000_000, totalPages: 5_000_000, page: index, size: 1 }));
    expect(result.requests).toBe(1);
    expect((result.error as Error).message).toMatch(/claims 5000000 pages of 1, more than the 1000000 one walk reads/);
  });

  it('stops at a page whose size is not the one the first page granted', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `img-${i}`);
    const result = await walk((index) => honestPage(ids, index, index === 0 ? 10 : 5));
    expect(result.requests).toBe(2);
    expect(result.ids).toHaveLength(10);
    expect((result.error as Error).message).toMatch(/page 1 has size 5, but page 0 granted 10/);
  });
});

describe('walkPages asks for large pages and follows what is granted', () => {
  it('asks for the largest size first, then every page at the size the service granted (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 2000 }), async (count, cap) => {
        const ids = Array.from({ length: count }, (_, i) => `img-${i}`);
        const asked: number[] = [];
        const result = await walk((index, size) => {
          asked.push(size);
          return honestPage(ids, index, Math.min(size, cap));
        });
        expect(result.error).toBeUndefined();
        expect(result.ids).toEqual(ids);
        const granted = Math.min(WALK_PAGE_SIZES[0]!, cap);
        expect(asked).toEqual([WALK_PAGE_SIZES[0]!, ...Array.from({ length: Math.max(0, Math.ceil(count / granted) - 1) }, () => granted)]);
      }),
      { numRuns: 50 },
    );
  });

  it('tries the next size when the service refuses the first page at one (400), and only then', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `img-${i}`);
    const asked: number[] = [];
    const refusing = (index: number, size: number): Page => {
      asked.push(size);
      if (size > 100) throw new ApiError(400, 'ValidationFailed', 'size must be a whole number from 1 to 100');
      return honestPage(ids, index, size);
    };
    const result = await walk(refusing);
    expect(result.ids).toEqual(ids);
    expect(asked).toEqual([1000, 100, 100, 100]);
    // A size of the caller's own is asked for as it is: a refusal of it is the caller's error.
    const own = await walk(refusing, undefined, { sizes: [500] });
    expect(own.error).toBeInstanceOf(ApiError);
    // Other refusals pass through at once.
    asked.length = 0;
    const unauthorized = await walk(() => {
      asked.push(0);
      throw new ApiError(401, 'Unauthorized', 'bad key');
    });
    expect((unauthorized.error as ApiError).status).toBe(401);
    expect(asked).toHaveLength(1);
  });

  it('remembers a bounded window of ids: a walk of 30,000 records over 300 pages yields each once, however many it has seen', async () => {
    const ids = Array.from({ length: 30_000 }, (_, i) => `img-${i}`);
    const result = await walk((index) => honestPage(ids, index, 100));
    expect(result.error).toBeUndefined();
    expect(result.ids).toEqual(ids);
  });
});
