import { describe, expect, it } from 'vitest';
import type { ImageRecord } from '../../../../src/api/schema.js';
import { renderTable, StreamingTable, type TableOptions } from '../../../../src/commands/list/table.js';

const plain = { bold: (t: string) => `*${t}*`, dim: (t: string) => t, red: (t: string) => t, green: (t: string) => t, yellow: (t: string) => t, cyan: (t: string) => t };
const CREATED = '2025-01-01T00:00:00Z';
const options = (width: number): TableOptions => ({ width, style: plain, retrievedAt: Date.parse(CREATED), now: Date.parse(CREATED) });
const image = (id: string): ImageRecord => ({ id, url: `https://img.example/${id}.jpg`, coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: CREATED });

describe('the list table', () => {
  it('is the same drawn whole or page by page, the header once and bold, no line ending in spaces', () => {
    const records = ['img_a', 'img_b', 'img_c', 'img_d', 'img_e'].map(image);
    const whole = renderTable(records, options(80));
    const table = new StreamingTable(options(80));
    const paged = [records.slice(0, 2), records.slice(2, 4), records.slice(4)].map((page) => table.render(page)).join('');
    expect(paged).toBe(whole);
    const lines = whole.split('\n').slice(0, -1);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^\*ID {5}Created/);
    expect(lines.filter((line) => line.includes('ID '))).toHaveLength(1);
    for (const line of lines) expect(line).toBe(line.trimEnd());
  });

  it('keeps the first page columns and widens a column on a later page rather than cut an id', () => {
    const long = `img_${'0123456789abcdef'.repeat(3)}`;
    const table = new StreamingTable(options(60));
    const first = table.render([image('img_a'), image('img_b')]);
    const later = table.render([image('img_c'), image(long)]).split('\n');
    const column = first.split('\n')[1]!.indexOf('2025');
    expect(later[0]!.startsWith('img_c ')).toBe(true);
    expect(later[1]!.startsWith(`${long}  2025-01-01`)).toBe(true);
    // Within the later page, its rows share the widened column; the first page kept its narrower one.
    expect(later[0]!.indexOf('2025')).toBe(later[1]!.indexOf('2025'));
    expect(later[0]!.indexOf('2025')).toBeGreaterThan(column);
    expect(table.render([])).toBe('');
  });

  it('drops columns by priority to fit a narrow terminal, never the id', () => {
    const lines = renderTable([image('img_a')], options(40)).split('\n');
    expect(lines[0]).toMatch(/^\*ID/);
    for (const line of lines) expect(line.replace(/\*/g, '').length).toBeLessThanOrEqual(40);
  });
});
