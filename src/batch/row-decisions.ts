// What a run does with each of its shard's rows, decided during the first
// pass (surveyBatch) and kept in a few bytes per row: done by an earlier run,
// adopted (its file is there but was never recorded), to send, or refused
// (a file in the way, a directory where the image must go); see resume.ts.
//
// A row an earlier run finished from these very inputs is taken from the
// manifest without being planned again (what most of a long resumed batch is):
// its file's size is looked up on another thread and the row is decided when
// the size comes back. Any other row is planned in full and decided at once.
import { basename, dirname } from 'node:path';
import { RowArray } from '../bulk/compact.js';
import { FileSizes } from './file-sizes.js';
import { StaleParts } from '../bulk/files.js';
import type { ManifestIndex } from './manifest.js';
import type { OutcomeLog } from './outcomes.js';
import type { RowPlanner, Survey, SurveyOptions, ValidRow } from './plan.js';
import { resumeBySize, resumeEntry, ResumeTable, type ResumeEntry } from './resume.js';
import type { Shard } from './shard.js';

/** Rows to send kept whole from the first pass (see `early`): a few hundred objects, whatever the batch's size. */
const EARLY_ROWS = 256;

/** What the decided rows of a shard add up to. */
export interface DecidedCounts {
  /** Rows to send. */
  pending: number;
  /** Of those, rows whose request was in flight when an earlier run stopped: they may have been charged. */
  inFlightBefore: number;
  /** Rows whose whole image is at their path without a record: recorded, not sent. */
  adopted: number;
}

export class RowDecisions {
  readonly resume = new ResumeTable();
  /**
   * Temp files a killed run left beside any of this shard's outputs, finished
   * ones included: a row killed between moving its file into place and
   * removing the temp.
   */
  readonly staleParts = new StaleParts();
  /** Per output directory, the longest name a pending row will write there (its directory must take it). */
  readonly longestName = new Map<string, string>();
  /**
   * The first rows to send, kept from the first pass as they were planned, so
   * that sending starts without waiting for the second pass to reach them (a
   * resumed batch's first pending row may be its last).
   */
  readonly early = new Map<number, ValidRow>();
  /** Rows taken as done from the manifest's record of their inputs. */
  recalled = 0;
  private readonly recordedBytes = new RowArray((n) => new Float64Array(n));
  private readonly sizes: FileSizes;

  constructor(
    private readonly manifest: ManifestIndex,
    private readonly planner: RowPlanner,
    /** Where rows done before are recorded as they are decided: the send pass does not plan them again. */
    private readonly outcomes: OutcomeLog,
    private readonly force: boolean,
  ) {
    this.sizes = new FileSizes((row, target, size) => {
      const bytes = this.recordedBytes.get(row);
      const entry = resumeBySize(target, { status: 'done', bytes: bytes < 0 ? undefined : bytes }, size, this.force);
      if (entry.action === 'done') this.recalled++;
      this.settle(row, target, entry);
    });
  }

  /** How the first pass tells this table of each row. */
  surveyOptions(shard: Shard | undefined): SurveyOptions {
    return {
      shard,
      // Without a manifest there is nothing to recall, and no digest to work out in this pass.
      recall: this.manifest.size > 0 ? (row, digest, mine) => this.recall(row.row, digest, mine) : undefined,
      firstPassDone: () => this.sizes.settled(),
      onRow: (row) => {
        // Told again when its name changed after the pass: decided again.
        this.forget(row.row);
        const entry = resumeEntry(row.target, this.manifest.get(row.key), this.force);
        this.settle(row.row, row.target, entry);
        if (entry.action === 'pending' && this.early.size < EARLY_ROWS) this.early.set(row.row, row);
      },
      onDropped: (row) => this.forget(row),
    };
  }

  /** The shard's decided rows, counted (rows alike to an earlier row left out: they are invalid). */
  count(survey: Survey, shard: Shard | undefined): DecidedCounts {
    const counts: DecidedCounts = { pending: 0, inFlightBefore: 0, adopted: 0 };
    for (let row = shard?.index ?? 1; row <= survey.rows; row += shard?.count ?? 1) {
      const entry = this.resume.get(row);
      if (!entry || survey.names.duplicateOf(row)) continue;
      if (entry.action === 'pending') {
        counts.pending++;
        if (entry.wasInFlight) counts.inFlightBefore++;
      } else if (entry.action === 'adopt') counts.adopted++;
    }
    return counts;
  }

  close(): void {
    this.sizes.close();
  }

  /** The output path of a row an earlier run finished from these very inputs; its own rows are decided once their sizes come back. */
  private recall(row: number, digest: string, mine: boolean): string | undefined {
    const memory = this.manifest.recall(row, digest);
    if (!memory) return undefined;
    const target = this.planner.targetOf(memory.file);
    if (!mine) return target;
    if (memory.last?.status !== 'done') return undefined;
    this.recordedBytes.set(row, memory.last.bytes ?? -1);
    this.sizes.look(row, target);
    return target;
  }

  /** Records a decided row; a pending one's name counts towards the longest its directory must take. */
  private settle(row: number, target: string, entry: ResumeEntry): void {
    this.resume.set(row, target, entry);
    this.staleParts.add(target);
    if (entry.action === 'done') this.outcomes.record({ row, status: 'done', file: target, bytes: entry.bytes, attempts: 0, previously: true });
    if (entry.action !== 'pending') return;
    const dir = dirname(target);
    const name = basename(target);
    if (Buffer.byteLength(name) > Buffer.byteLength(this.longestName.get(dir) ?? '')) this.longestName.set(dir, name);
  }

  private forget(row: number): void {
    if (this.outcomes.has(row)) this.outcomes.forget(row);
    this.early.delete(row);
  }
}
