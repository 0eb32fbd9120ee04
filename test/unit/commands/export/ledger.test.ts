import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExportLedger, LEDGER_IDS_NAME, LEDGER_RECORDS_NAME, Saved } from '../../../../src/commands/export/ledger.js';

const root = mkdtempSync(join(tmpdir(), 'aerial-export-ledger-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let made = 0;
/** A ledger in a directory of its own, as each export's is. */
function newLedger(): { ledger: ExportLedger; dir: string } {
  const dir = join(root, String(made++));
  mkdirSync(dir);
  return { ledger: ExportLedger.create(dir), dir };
}

describe('ExportLedger', () => {
  it('numbers images in the order first listed, and tells a repeat within one walk from a listing by the next', () => {
    const { ledger } = newLedger();
    expect(ledger.meet('a', 1)).toEqual({ ordinal: 0, first: true, again: false });
    expect(ledger.meet('b', 1)).toEqual({ ordinal: 1, first: true, again: false });
    expect(ledger.meet('a', 1)).toEqual({ ordinal: 0, first: false, again: true });
    expect(ledger.meet('a', 2)).toEqual({ ordinal: 0, first: false, again: false });
    expect(ledger.has('b')).toBe(true);
    expect(ledger.has('c')).toBe(false);
    expect(ledger.size).toBe(2);
  });

  it('says whether an image of the walk before is missing from a walk', () => {
    const { ledger } = newLedger();
    for (const id of ['a', 'b', 'c']) ledger.meet(id, 1);
    for (const id of ['a', 'c', 'd']) ledger.meet(id, 2);
    expect(ledger.vanishedSince(2)).toBe(true);
    for (const id of ['a', 'c', 'd', 'e']) ledger.meet(id, 3);
    // b was gone from walk 2 already: only walk 2's images count.
    expect(ledger.vanishedSince(3)).toBe(false);
  });

  it('keeps states, counts and failures in step, over a history that makes its arrays grow', () => {
    const { ledger } = newLedger();
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

  it('keeps its state on disk, in files of its own that remove() takes away, and takes a history larger than it reserved', () => {
    const { ledger, dir } = newLedger();
    ledger.reserve(1_000);
    const count = 50_000;
    for (let n = 0; n < count; n++) expect(ledger.meet(`image-${n}`, 1).ordinal).toBe(n);
    for (let n = 0; n < count; n += 7) ledger.set(n, Saved.Downloaded, 1 + (n % 5), n * 1000);
    for (let n = count - 1; n >= 0; n--) expect(ledger.meet(`image-${n}`, 2)).toEqual({ ordinal: n, first: false, again: false });
    expect(ledger.meet('image-49999', 2).again).toBe(true);
    expect(ledger.vanishedSince(2)).toBe(false);
    expect([ledger.size, ledger.saved]).toEqual([count, Math.ceil(count / 7)]);
    expect([ledger.state(49_994), ledger.attempts(49_994), ledger.bytes(49_994)]).toEqual([Saved.Downloaded, 1 + (49_994 % 5), 49_994_000]);
    expect([ledger.state(49_995), ledger.bytes(49_995)]).toEqual([Saved.None, 0]);
    expect(ledger.has('image-12345')).toBe(true);
    expect(ledger.has('image-50000')).toBe(false);
    expect(readdirSync(dir).sort()).toEqual([LEDGER_IDS_NAME, LEDGER_RECORDS_NAME].sort());
    // 16 bytes a record; the id table at most 3/4 full, 16 bytes a slot.
    expect(statSync(join(dir, LEDGER_RECORDS_NAME)).size).toBe(count * 16);
    expect(statSync(join(dir, LEDGER_IDS_NAME)).size).toBe(2 ** 17 * 16);
    expect(statSync(join(dir, LEDGER_IDS_NAME)).mode & 0o777).toBe(0o600);
    ledger.remove();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('replaces the files a killed export left', () => {
    const { ledger, dir } = newLedger();
    ledger.meet('left-over', 1);
    const again = ExportLedger.create(dir);
    expect(again.has('left-over')).toBe(false);
    expect(again.meet('new', 1)).toEqual({ ordinal: 0, first: true, again: false });
    again.remove();
    ledger.remove();
  });
});
