import { describe, expect, it } from 'vitest';
import { ExportLedger, Saved } from '../../../../src/commands/export/ledger.js';

describe('ExportLedger', () => {
  it('numbers images in the order first listed, and tells a repeat within one walk from a listing by the next', () => {
    const ledger = new ExportLedger();
    expect(ledger.meet('a', 1)).toEqual({ ordinal: 0, first: true, again: false });
    expect(ledger.meet('b', 1)).toEqual({ ordinal: 1, first: true, again: false });
    expect(ledger.meet('a', 1)).toEqual({ ordinal: 0, first: false, again: true });
    expect(ledger.meet('a', 2)).toEqual({ ordinal: 0, first: false, again: false });
    expect(ledger.has('b')).toBe(true);
    expect(ledger.has('c')).toBe(false);
    expect(ledger.size).toBe(2);
  });

  it('says whether an image of the walk before is missing from a walk', () => {
    const ledger = new ExportLedger();
    for (const id of ['a', 'b', 'c']) ledger.meet(id, 1);
    for (const id of ['a', 'c', 'd']) ledger.meet(id, 2);
    expect(ledger.vanishedSince(2)).toBe(true);
    for (const id of ['a', 'c', 'd', 'e']) ledger.meet(id, 3);
    // b was gone from walk 2 already: only walk 2's images count.
    expect(ledger.vanishedSince(3)).toBe(false);
  });

  it('keeps states, counts and failures in step, over a history that makes its arrays grow', () => {
    const ledger = new ExportLedger();
    for (let n = 0; n < 5_000; n++) ledger.meet(`id-${n}`, 1);
    ledger.found(0, 100);
    ledger.set(1, Saved.Downloaded, 2, 200);
    ledger.set(2, Saved.Failed, 6, 0, { id: 'id-2', error: 'server error', exitCode: 6, attempts: 6 });
    ledger.set(4_999, Saved.Deleted, 1);
    expect(ledger.saved).toBe(2);
    expect(ledger.failures.get(2)?.error).toBe('server error');
    // Downloaded by a check after failing: the failure is forgotten; found again, it stays downloaded.
    ledger.set(2, Saved.Downloaded, 1, 300);
    ledger.found(2, 300);
    expect(ledger.failures.size).toBe(0);
    expect(ledger.state(2)).toBe(Saved.Downloaded);
    expect([ledger.bytes(1), ledger.attempts(1), ledger.saved]).toEqual([200, 2, 3]);
    const tally = ledger.tally();
    expect([tally[Saved.Existing], tally[Saved.Downloaded], tally[Saved.Deleted], tally[Saved.None]]).toEqual([1, 2, 1, 4_996]);
  });
});
