// The sandbox's logs of requests and webhook attempts (src/sandbox/server/recent-log.ts):
// the newest 10,000 entries, handed out as copies, cleared with a count.
import { describe, expect, it } from 'vitest';
import { RecentLog } from '../../../src/sandbox/server/recent-log.js';
import { RequestLog } from '../../../src/sandbox/server/request-log.js';

describe('RecentLog', () => {
  it('keeps the newest 10,000 entries, oldest first', () => {
    const log = new RecentLog<{ n: number }>();
    for (let n = 1; n <= 10_005; n++) log.push({ n });
    const entries = log.entries();
    expect(entries).toHaveLength(10_000);
    expect([entries[0]!.n, entries.at(-1)!.n]).toEqual([6, 10_005]);
  });

  it('hands out copies that show a record as it is when read, and clears with a count', () => {
    const log = new RecentLog<{ outcome?: string }>();
    const record: { outcome?: string } = {};
    log.push(record);
    record.outcome = 'delivered';
    const [copy] = log.entries();
    expect(copy).toEqual({ outcome: 'delivered' });
    copy!.outcome = 'changed by a reader';
    expect(log.entries()).toEqual([{ outcome: 'delivered' }]);
    expect(log.clear()).toBe(1);
    expect(log.entries()).toEqual([]);
  });

  it('numbers the requests of a RequestLog from 1, on across a clear', () => {
    const log = new RequestLog();
    const entry = { time: 't', method: 'GET', path: '/x', query: {}, status: 200, keyId: null, durationMs: 1 };
    expect(log.add(entry).seq).toBe(1);
    log.clear();
    expect(log.add(entry).seq).toBe(2);
    expect(log.entries().map((e) => e.seq)).toEqual([2]);
  });
});
