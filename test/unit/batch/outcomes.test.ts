import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OutcomeLog } from '../../../src/batch/outcomes.js';
import { Terminal } from '../../../src/terminal/terminal.js';

describe('OutcomeLog', () => {
  it('keeps the outcomes of far more rows than a call can take as arguments, and gives them back in row order', async () => {
    const rows = 300_000;
    // Shard 2/3: every third row from the second.
    const log = new OutcomeLog(rows, { index: 2, count: 3 });
    try {
      // Recorded out of order, as concurrent rows finish; the last few never started.
      for (let place = rows / 3 - 11; place >= 0; place--) {
        const row = place * 3 + 2;
        log.record(place % 1000 === 7 ? { row, status: 'failed', attempts: 2, error: `row ${row} failed`, exitCode: 6 } : { row, status: 'done', file: `/out/${row}.jpg`, bytes: 10, attempts: 1 });
      }
      const counts = log.complete(rows / 3, (row) => ({ row, status: 'skipped', attempts: 0, error: 'not started: interrupted' }));
      expect(counts).toMatchObject({ total: 100_000, succeeded: 99_890, failed: 100, skipped: 10 });
      expect(counts.exitCodes.get(6)).toBe(100);

      // The --json summary, written to a reader that takes one chunk at a time.
      const chunks: string[] = [];
      const stdout = new Writable({
        highWaterMark: 16 * 1024,
        write(chunk, _encoding, done) {
          chunks.push(String(chunk));
          setImmediate(done);
        },
      });
      const stderr = new Writable({ write: (_chunk, _encoding, done) => done() });
      const terminal = new Terminal({ stdout, stderr, stdin: process.stdin, env: {}, json: true });
      await terminal.outJsonStream({ total: counts.total }, 'rows', log.lines());
      const summary = JSON.parse(chunks.join('')) as { total: number; rows: Array<{ row: number; status: string }> };
      expect(summary.rows).toHaveLength(100_000);
      expect(summary.rows.every((outcome, place) => outcome.row === place * 3 + 2)).toBe(true);
      expect(summary.rows.at(-1)).toMatchObject({ status: 'skipped' });
      expect([...log.outcomes('failed')]).toHaveLength(100);
    } finally {
      log.close();
    }
  });

  it('takes back a row found done by an earlier run, when the first pass decides it again', () => {
    const log = new OutcomeLog(4);
    try {
      log.record({ row: 2, status: 'done', attempts: 0, previously: true, file: '/out/a.jpg' });
      log.record({ row: 3, status: 'done', attempts: 1, file: '/out/c.jpg' });
      expect(log.has(2)).toBe(true);
      log.forget(2);
      expect(log.has(2)).toBe(false);
      // Only an earlier run's outcome can be taken back: this run's are final.
      expect(() => log.forget(3)).toThrow();
      log.record({ row: 2, status: 'done', attempts: 1, file: '/out/a~1.jpg' });
      const counts = log.complete(3, (row) => ({ row, status: 'skipped', attempts: 0 }));
      expect(counts).toMatchObject({ total: 3, succeeded: 2, previously: 0, skipped: 1 });
      expect([...log.outcomes()].map((o) => [o.row, o.file])).toEqual([
        [1, undefined],
        [2, '/out/a~1.jpg'],
        [3, '/out/c.jpg'],
      ]);
    } finally {
      log.close();
    }
  });
});
