// The outcome of every row of a run, kept on disk as it comes rather than in
// memory: each row's result is written to a private spool file the moment it
// is known, with its place noted in a few bytes per row. The summary then
// reads them back in row order, however many there are.
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateTempDirectory } from '../files/atomic-file.js';
import type { Shard } from './shard.js';
import type { OutcomeStatus, RowOutcome } from '../bulk/summary.js';

const STATUS: OutcomeStatus[] = ['done', 'failed', 'skipped'];
/** Beside a status: done by an earlier run. */
const PREVIOUSLY = 8;
const FLUSH_BYTES = 64 * 1024;

export interface OutcomeCounts {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  /** Done by an earlier run. */
  previously: number;
  /** Rows that did not succeed, by their exit code class. */
  exitCodes: Map<number, number>;
}

export class OutcomeLog {
  /** The spool's directory while it still has a name (see the constructor). */
  private dir: string | undefined;
  private readonly fd: number;
  private readonly status: Uint8Array;
  private readonly offset: Float64Array;
  private readonly length: Uint32Array;
  private written = 0;
  private pending: string[] = [];
  private pendingBytes = 0;
  private readonly counts: OutcomeCounts;

  /** Places for rows: the shard's share of the most rows the file can hold. */
  private readonly capacity: number;
  /** The shard's rows, once the first pass has counted them (see complete()). */
  private total: number;

  constructor(
    /** The most rows the batch file can hold (its line breaks, plus one). */
    rowsAtMost: number,
    private readonly shard?: Shard,
  ) {
    this.capacity = shard ? Math.ceil(rowsAtMost / shard.count) : rowsAtMost;
    this.total = this.capacity;
    this.dir = makePrivateTempDirectory('aerial-batch-outcomes-');
    this.fd = openSync(join(this.dir, 'outcomes.jsonl'), 'wx+', 0o600);
    // The open descriptor is all the spool needs: removed now, it cannot be
    // left behind in the temp dir by a process killed with SIGKILL. Where an
    // open file cannot be removed, close() removes it.
    try {
      rmSync(this.dir, { recursive: true });
      this.dir = undefined;
    } catch {
      // Removed at close().
    }
    this.status = new Uint8Array(this.capacity);
    this.offset = new Float64Array(this.capacity);
    this.length = new Uint32Array(this.capacity);
    this.counts = { total: 0, succeeded: 0, failed: 0, skipped: 0, previously: 0, exitCodes: new Map() };
  }

  /** A row's place among the shard's rows. */
  private place(row: number): number {
    return this.shard ? (row - this.shard.index) / this.shard.count : row - 1;
  }

  has(row: number): boolean {
    return this.status[this.place(row)] !== 0;
  }

  record(outcome: RowOutcome): void {
    const place = this.place(outcome.row);
    if (!(place < this.capacity)) throw new Error(`row ${outcome.row} is past the rows the file can hold`);
    if (this.status[place] !== 0) throw new Error(`row ${outcome.row} has two outcomes`);
    const line = `${JSON.stringify(outcome)}\n`;
    const bytes = Buffer.byteLength(line);
    this.status[place] = (STATUS.indexOf(outcome.status) + 1) | (outcome.previously ? PREVIOUSLY : 0);
    this.offset[place] = this.written + this.pendingBytes;
    this.length[place] = bytes - 1;
    this.pending.push(line);
    this.pendingBytes += bytes;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    this.count(outcome);
  }

  /**
   * Takes back the outcome of a row found done by an earlier run, when the
   * first pass decides it again (its name changed to tell it from another
   * row's, or it turned out alike to an earlier row). Its line stays in the
   * spool, unread.
   */
  forget(row: number): void {
    const place = this.place(row);
    const status = this.status[place]!;
    if (status !== (STATUS.indexOf('done') + 1 | PREVIOUSLY)) throw new Error(`row ${row}: only an outcome from an earlier run can be taken back`);
    this.status[place] = 0;
    this.counts.succeeded--;
    this.counts.previously--;
  }

  private count(outcome: RowOutcome): void {
    const counts = this.counts;
    if (outcome.status === 'done') {
      counts.succeeded++;
      if (outcome.previously) counts.previously++;
      return;
    }
    if (outcome.status === 'failed') counts.failed++;
    else counts.skipped++;
    const code = outcome.exitCode ?? 1;
    counts.exitCodes.set(code, (counts.exitCodes.get(code) ?? 0) + 1);
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const buffer = Buffer.from(this.pending.join(''));
    writeSync(this.fd, buffer, 0, buffer.length, this.written);
    this.written += buffer.length;
    this.pending = [];
    this.pendingBytes = 0;
  }

  /**
   * The shard's rows (`total` of them) that have no outcome (never started,
   * or cut off) get `outcomeOf(row)`; the counts are then whole.
   */
  complete(total: number, outcomeOf: (row: number) => RowOutcome): OutcomeCounts {
    this.total = Math.min(total, this.capacity);
    this.counts.total = this.total;
    for (let place = 0; place < this.total; place++) {
      if (this.status[place] === 0) this.record(outcomeOf(this.rowAt(place)));
    }
    this.flush();
    return this.counts;
  }

  private rowAt(place: number): number {
    return this.shard ? place * this.shard.count + this.shard.index : place + 1;
  }

  /** Each row's outcome as recorded (its JSON text), in row order. */
  *lines(only?: OutcomeStatus): Generator<string> {
    this.flush();
    const wanted = only === undefined ? 0 : STATUS.indexOf(only) + 1;
    let buffer = Buffer.alloc(4096);
    for (let place = 0; place < this.total; place++) {
      const status = this.status[place]! & ~PREVIOUSLY;
      if (status === 0 || (wanted !== 0 && status !== wanted)) continue;
      const length = this.length[place]!;
      if (length > buffer.length) buffer = Buffer.alloc(length);
      readSync(this.fd, buffer, 0, length, this.offset[place]!);
      yield buffer.toString('utf8', 0, length);
    }
  }

  /** Each row's outcome, in row order (only those of one status, when asked). */
  *outcomes(only?: OutcomeStatus): Generator<RowOutcome> {
    for (const line of this.lines(only)) yield JSON.parse(line) as RowOutcome;
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Closed already.
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
