// The URLs an MCP server has seen listed (src/commands/mcp/image-urls.ts): used
// while they live (2 hours, less a margin), the newest kept, the oldest forgotten.
import { describe, expect, it } from 'vitest';
import { SeenImageUrls } from '../../../../src/commands/mcp/image-urls.js';

describe('SeenImageUrls', () => {
  it('gives the URL last listed for an id while it lives, and forgets it after', () => {
    let now = 0;
    const seen = new SeenImageUrls(() => now);
    seen.remember([{ id: 'a', url: 'https://x/a?1' }]);
    now = 60_000;
    seen.remember([{ id: 'a', url: 'https://x/a?2' }, { id: 'b', url: 'https://x/b' }]);
    expect(seen.urlOf('a')).toBe('https://x/a?2');
    now += 2 * 3600_000 - 5 * 60_000 - 1;
    expect(seen.urlOf('b')).toBe('https://x/b');
    now += 1;
    expect(seen.urlOf('b')).toBeUndefined();
    expect(seen.urlOf('nothing')).toBeUndefined();
    seen.remember([{ id: 'c', url: 'https://x/c' }]);
    seen.forget('c');
    expect(seen.urlOf('c')).toBeUndefined();
  });

  it('keeps the newest 10,000', () => {
    const seen = new SeenImageUrls(() => 0);
    seen.remember(Array.from({ length: 10_005 }, (_, n) => ({ id: `i${n}`, url: `u${n}` })));
    expect(seen.urlOf('i4')).toBeUndefined();
    expect(seen.urlOf('i5')).toBe('u5');
    expect(seen.urlOf('i10004')).toBe('u10004');
  });
});
