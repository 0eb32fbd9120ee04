// What an export knows of each image it has listed, in a few bytes an image:
// the images are numbered in the order they were first listed (the line of
// their record in the listing spool, spool.ts), found again by a 64-bit hash
// of their id, and each number has its state, the last walk that listed it,
// its attempts and its size in typed arrays. Only failures keep their text.
//
// Cost: the hash table holds 8 bytes of key, 1 of use and 4 of number a slot
// at most 3/4 full (17 to 35 bytes an image as it doubles), the arrays 14
// bytes a number (up to 28 as they double): 31 to 63 bytes an image, 5.1 MB
// at 100,000 (off the JS heap). Two ids share a 64-bit hash with a probability of about
// n²/2^65 for n ids (3 in 10^10 for 100,000, 3 in 10^8 for a million); the
// later would be taken for the earlier: it would be left out of the summary's
// rows and counts, and, listed twice in one walk by the reckoning of that
// walk, not downloaded. The check compares walks by these hashes too.
import { RowArray, textKey, WordTable } from '../../batch/compact.js';

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

export class ExportLedger {
  private readonly ids = new WordTable(2, 1);
  private readonly states = new RowArray((n) => new Uint8Array(n));
  private readonly walks = new RowArray((n) => new Uint8Array(n));
  private readonly attemptCounts = new RowArray((n) => new Uint32Array(n));
  private readonly sizes = new RowArray((n) => new Float64Array(n));
  /** Failed images by number, with why: only these keep text. */
  readonly failures = new Map<number, Failure>();
  private count = 0;
  private savedCount = 0;

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
    const { slot, added } = this.ids.slotFor(textKey(id));
    const numbers = this.ids.columns[0]!;
    if (added) numbers[slot] = this.count++;
    const ordinal = numbers[slot]!;
    const again = !added && this.walks.get(ordinal) === walk;
    this.walks.set(ordinal, walk);
    return { ordinal, first: added, again };
  }

  /** Whether `id` was listed in this export (or shares a hash with one that was). */
  has(id: string): boolean {
    return this.ids.find(textKey(id)) !== -1;
  }

  state(ordinal: number): Saved {
    return this.states.get(ordinal) as Saved;
  }

  attempts(ordinal: number): number {
    return this.attemptCounts.get(ordinal);
  }

  bytes(ordinal: number): number {
    return this.sizes.get(ordinal);
  }

  isSaved(ordinal: number): boolean {
    const state = this.state(ordinal);
    return state === Saved.Downloaded || state === Saved.Existing;
  }

  /** Found whole on disk: kept as it is when this export saved it, else an image already there. */
  found(ordinal: number, bytes: number): void {
    if (this.isSaved(ordinal)) return;
    this.set(ordinal, Saved.Existing, 0, bytes);
  }

  set(ordinal: number, state: Saved, attempts: number, bytes = 0, failure?: Failure): void {
    const wasSaved = this.isSaved(ordinal);
    this.states.set(ordinal, state);
    this.attemptCounts.set(ordinal, attempts);
    this.sizes.set(ordinal, bytes);
    this.savedCount += Number(this.isSaved(ordinal)) - Number(wasSaved);
    if (state === Saved.Failed && failure) this.failures.set(ordinal, failure);
    else this.failures.delete(ordinal);
  }

  /** Whether some image the walk before `walk` listed, `walk` did not. */
  vanishedSince(walk: number): boolean {
    for (let ordinal = 0; ordinal < this.count; ordinal++) if (this.walks.get(ordinal) === walk - 1) return true;
    return false;
  }

  /** How many images are in each state. */
  tally(): Record<Saved, number> {
    const counts = [0, 0, 0, 0, 0, 0] as Record<Saved, number>;
    for (let ordinal = 0; ordinal < this.count; ordinal++) counts[this.state(ordinal)]++;
    return counts;
  }
}
