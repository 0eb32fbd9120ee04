// What an export knows of each image it has listed, kept on disk beside the
// listing spool (spool.ts), so that memory does not grow with the history: the
// images are numbered in the order they were first listed (the line of their
// record in the spool), found again by a 64-bit hash of their id in a hash
// table on disk, and each number has a record on disk of its state, the last
// walk that listed it, its attempts and its size (bulk/disk-table.ts). Only
// failures keep their text in memory.
//
// Disk: 16 bytes a slot of the hash table (at most 3/4 full: 21 to 43 bytes
// an image as it doubles) and 16 bytes a record: 3.7 to 5.9 MB at 100,000
// images. Two ids share a 64-bit hash with a probability of about n²/2^65 for
// n ids (3 in 10^10 for 100,000, 3 in 10^8 for a million); the later would be
// taken for the earlier: it would be left out of the summary's rows and
// counts, and, listed twice in one walk by the reckoning of that walk, not
// downloaded. The check compares walks by these hashes too.
import { join } from 'node:path';
import { textKey } from '../../bulk/compact.js';
import { DiskHashTable, DiskRecords } from '../../bulk/disk-table.js';

/** The ledger's files in the export directory (under its run lock; removed when the export ends). */
export const LEDGER_IDS_NAME = '.aerial-export.ids';
export const LEDGER_RECORDS_NAME = '.aerial-export.states';

/** An image's state in this export. */
export const Saved = {
  /** Listed; no outcome yet (not started when the export ended). */
  None: 0,
  /** Downloaded by this export. */
  Downloaded: 1,
  /** Whole on disk before this export downloaded it. */
  Existing: 2,
  Failed: 3,
  /** Its download was refused and a fresh listing no longer had it. */
  Deleted: 4,
  /** Begun and stopped by a signal. */
  NotFinished: 5,
} as const;
export type Saved = (typeof Saved)[keyof typeof Saved];

export interface Failure {
  id: string;
  error: string;
  exitCode?: number;
  attempts: number;
}

/** Where each field sits in an image's record. */
const RECORD_BYTES = 16;
const STATE_AT = 0;
const WALK_AT = 1;
const ATTEMPTS_AT = 4;
const BYTES_AT = 8;

export class ExportLedger {
  /** Failed images by number, with why: only these keep text. */
  readonly failures = new Map<number, Failure>();
  private count = 0;
  private savedCount = 0;

  private constructor(
    private readonly ids: DiskHashTable,
    private readonly records: DiskRecords,
  ) {}

  /** A new, empty ledger in `dir`, replacing the files a killed export left there. */
  static create(dir: string): ExportLedger {
    return new ExportLedger(DiskHashTable.create(join(dir, LEDGER_IDS_NAME), 1), DiskRecords.create(join(dir, LEDGER_RECORDS_NAME), RECORD_BYTES));
  }

  /** Makes room at once for the images a listing says it has. */
  reserve(images: number): void {
    this.ids.reserve(images);
  }

  /** Images listed in this export. */
  get size(): number {
    return this.count;
  }

  /** Images whole on disk: downloaded or found there. */
  get saved(): number {
    return this.savedCount;
  }

  /**
   * Records that `walk` (1, 2, …; at most 255) listed `id`: its number, whether it is new to the
   * export, and whether this walk had already listed it (a page repeating another far apart).
   */
  meet(id: string, walk: number): { ordinal: number; first: boolean; again: boolean } {
    const { slot, added } = this.ids.slotFor(textKey(id), [this.count]);
    const ordinal = added ? this.count++ : this.ids.value(slot, 0);
    const record = this.records.read(ordinal);
    const again = !added && record[WALK_AT] === walk;
    if (record[WALK_AT] !== walk) {
      record[WALK_AT] = walk;
      this.records.write(ordinal, record);
    }
    return { ordinal, first: added, again };
  }

  /** Whether `id` was listed in this export (or shares a hash with one that was). */
  has(id: string): boolean {
    return this.ids.find(textKey(id)) !== -1;
  }

  state(ordinal: number): Saved {
    return this.records.read(ordinal)[STATE_AT] as Saved;
  }

  attempts(ordinal: number): number {
    return this.records.read(ordinal).readUInt32LE(ATTEMPTS_AT);
  }

  bytes(ordinal: number): number {
    return this.records.read(ordinal).readDoubleLE(BYTES_AT);
  }

  isSaved(ordinal: number): boolean {
    return isSavedState(this.state(ordinal));
  }

  /** Found whole on disk: kept as it is when this export saved it, else an image already there. */
  found(ordinal: number, bytes: number): void {
    if (this.isSaved(ordinal)) return;
    this.set(ordinal, Saved.Existing, 0, bytes);
  }

  set(ordinal: number, state: Saved, attempts: number, bytes = 0, failure?: Failure): void {
    const record = this.records.read(ordinal);
    const wasSaved = isSavedState(record[STATE_AT] as Saved);
    record[STATE_AT] = state;
    record.writeUInt32LE(attempts >>> 0, ATTEMPTS_AT);
    record.writeDoubleLE(bytes, BYTES_AT);
    this.records.write(ordinal, record);
    this.savedCount += Number(isSavedState(state)) - Number(wasSaved);
    if (state === Saved.Failed && failure) this.failures.set(ordinal, failure);
    else this.failures.delete(ordinal);
  }

  /** Whether some image the walk before `walk` listed, `walk` did not. */
  vanishedSince(walk: number): boolean {
    for (const record of this.records.scan(this.count)) if (record[WALK_AT] === walk - 1) return true;
    return false;
  }

  /** How many images are in each state. */
  tally(): Record<Saved, number> {
    const counts = [0, 0, 0, 0, 0, 0] as Record<Saved, number>;
    for (const record of this.records.scan(this.count)) counts[record[STATE_AT] as Saved]++;
    return counts;
  }

  /** Closes and removes the ledger's files. */
  remove(): void {
    this.ids.remove();
    this.records.remove();
  }
}

function isSavedState(state: Saved): boolean {
  return state === Saved.Downloaded || state === Saved.Existing;
}
