import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { textKey } from '../../../src/bulk/compact.js';
import { DiskHashTable, DiskRecords } from '../../../src/bulk/disk-table.js';

const dir = mkdtempSync(join(tmpdir(), 'aerial-disk-table-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DiskHashTable', () => {
  it('finds every key it was given, with its values, through doublings, and no key it was not', () => {
    const table = DiskHashTable.create(join(dir, 'grow'), 2, 16);
    const count = 20_000;
    for (let n = 0; n < count; n++) {
      const { slot, added } = table.slotFor(textKey(`key-${n}`), [n, n * 3]);
      expect(added).toBe(true);
      if (n % 2 === 0) table.setValue(slot, 1, n + 7);
    }
    expect(table.size).toBe(count);
    for (let n = 0; n < count; n++) {
      const slot = table.find(textKey(`key-${n}`));
      expect([table.value(slot, 0), table.value(slot, 1)]).toEqual([n, n % 2 === 0 ? n + 7 : n * 3]);
      expect(table.slotFor(textKey(`key-${n}`), [99, 99])).toEqual({ slot, added: false });
    }
    for (let n = count; n < count + 2_000; n++) expect(table.find(textKey(`key-${n}`))).toBe(-1);
    // Doubled from 16 slots to the first power of two that holds 20,000 keys at 3/4 full; the file renamed over, not left beside.
    expect(statSync(join(dir, 'grow')).size).toBe(2 ** 15 * 20);
    expect(readdirSync(dir).filter((name) => name.startsWith('grow'))).toEqual(['grow']);
    const entries = [...table.entries()];
    expect(entries).toHaveLength(count);
    expect(new Set(entries.map((entry) => entry.values[0])).size).toBe(count);
    table.remove();
    expect(readdirSync(dir)).not.toContain('grow');
  });

  it('makes room once for what it is told to expect, but no more than two million keys, whatever a listing claims', () => {
    const table = DiskHashTable.create(join(dir, 'reserve'), 0);
    table.reserve(100_000);
    expect(statSync(join(dir, 'reserve')).size).toBe(2 ** 18 * 12);
    table.reserve(10);
    expect(statSync(join(dir, 'reserve')).size).toBe(2 ** 18 * 12);
    table.reserve(1e12);
    expect(statSync(join(dir, 'reserve')).size).toBe(2 ** 22 * 12);
    table.remove();
  });

  it('replaces what a killed run left at its path, and is private to its user', () => {
    writeFileSync(join(dir, 'left'), 'x'.repeat(5000));
    const table = DiskHashTable.create(join(dir, 'left'), 1);
    expect(table.find(textKey('x'))).toBe(-1);
    expect(statSync(join(dir, 'left')).mode & 0o777).toBe(0o600);
    table.remove();
    expect(() => table.find(textKey('x'))).toThrow(/closed/);
  });
});

describe('DiskRecords', () => {
  it('reads back what was written, zeros where nothing was, and scans in order', () => {
    const records = DiskRecords.create(join(dir, 'records'), 12);
    for (let n = 0; n < 10_000; n += 3) {
      const record = records.read(n);
      record.writeUInt32LE(n, 0);
      record.writeDoubleLE(n / 2, 4);
      records.write(n, record);
    }
    expect(records.read(9_999).readUInt32LE(0)).toBe(9_999);
    expect(records.read(9_998).readUInt32LE(0)).toBe(0);
    expect(records.read(50_000).every((byte) => byte === 0)).toBe(true);
    let n = 0;
    for (const record of records.scan(10_000)) {
      expect([record.readUInt32LE(0), record.readDoubleLE(4)]).toEqual(n % 3 === 0 ? [n, n / 2] : [0, 0]);
      n++;
    }
    expect(n).toBe(10_000);
    records.remove();
  });
});
