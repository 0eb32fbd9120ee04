// Decides, before anything is sent, what each planned row needs given the
// manifest of earlier runs and what is on disk:
//   done      — a "done" record and its file still there: skipped
//   adopt     — a whole JPEG is at the row's path and the manifest shows the row
//               was sent, but its last record is not "done" (a run died between
//               writing the file and recording it, or two runs overlapped and
//               one failed the row the other had finished): the file is taken
//               as the row's output and recorded, nothing is sent
//   pending   — to be generated (first time, failed before, or its file vanished)
//   conflict  — a file is in the way that this batch did not write
//   blocked   — a directory is where the image must go: even --force cannot replace it
import { lstatSync } from 'node:fs';
import { RowArray } from '../bulk/compact.js';
import { isCompleteJpegSync } from '../bulk/files.js';
import type { ManifestEntry } from './manifest.js';

export type ResumeAction = 'done' | 'adopt' | 'pending' | 'conflict' | 'blocked';

export interface ResumeEntry {
  action: ResumeAction;
  previous?: ManifestEntry;
  /** Size of the file on disk, when there is one. */
  bytes?: number;
  /** Pending because the previous run died with this row's request in flight. */
  wasInFlight?: boolean;
  /** Pending because its recorded file has disappeared. */
  fileMissing?: boolean;
}

/**
 * What one row needs. Synchronous, one or two system calls for most rows: a
 * batch resumed over a long manifest decides for every row before its first
 * request. A "done" file still the size the manifest recorded is taken as it
 * is; any other file is read to see whether it is a whole JPEG.
 */
export function resumeEntry(target: string, previous: ManifestEntry | undefined, force: boolean): ResumeEntry {
  let info;
  try {
    info = lstatSync(target, { throwIfNoEntry: false });
  } catch {
    // A path that cannot be looked at (a file where a directory must be) holds nothing: the output checks say why.
    info = undefined;
  }
  if (!info) return { action: 'pending', previous, wasInFlight: previous?.status === 'started', fileMissing: previous?.status === 'done' };
  if (info.isDirectory()) return { action: 'blocked', previous };
  if (previous?.status === 'done' && info.isFile() && previous.bytes === info.size) return { action: 'done', previous, bytes: info.size };
  const onDisk = isCompleteJpegSync(target);
  if (previous?.status === 'done' && onDisk.ok) return { action: 'done', previous, bytes: onDisk.bytes };
  // Only this batch sends the row's request for this path: a whole image there is what one of its runs paid for.
  // Taken, --force or not: writing it again would pay twice.
  if (previous?.sent && onDisk.ok) return { action: 'adopt', previous, bytes: onDisk.bytes };
  return { action: force ? 'pending' : 'conflict', previous, bytes: onDisk.bytes };
}

/**
 * What a row an earlier run finished needs, given the size now found at its
 * target (fileSize): done when its file is there at the size recorded; any
 * other case is looked at in full, as resumeEntry does.
 */
export function resumeBySize(target: string, previous: ManifestEntry, size: number, force: boolean): ResumeEntry {
  if (previous.status === 'done' && size >= 0 && previous.bytes === size) return { action: 'done', previous, bytes: size };
  return resumeEntry(target, previous, force);
}

const ACTIONS: ResumeAction[] = ['pending', 'done', 'adopt', 'conflict', 'blocked'];

/**
 * What every row of a shard needs, a few bytes per row: its action and
 * flags, and the size of a file taken as done. Rows decided again (a name
 * changed after the first pass) replace their first decision.
 */
export class ResumeTable {
  private readonly codes = new RowArray((n) => new Uint8Array(n));
  private readonly sizes = new RowArray((n) => new Uint32Array(n));
  /** Rows refused (conflict, blocked) with their targets, for the message. */
  private readonly refused = new Map<number, { action: ResumeAction; target: string }>();

  set(row: number, target: string, entry: ResumeEntry): void {
    const code = ACTIONS.indexOf(entry.action) | (entry.wasInFlight ? 8 : 0) | (entry.fileMissing ? 16 : 0) | 32;
    this.codes.set(row, code);
    this.sizes.set(row, Math.min(entry.bytes ?? 0, 0xffffffff));
    if (entry.action === 'conflict' || entry.action === 'blocked') this.refused.set(row, { action: entry.action, target });
    else this.refused.delete(row);
  }

  /** The row's decision; undefined for a row never decided (invalid, or another shard's). */
  get(row: number): ResumeEntry | undefined {
    const code = this.codes.get(row);
    if (!(code & 32)) return undefined;
    const action = ACTIONS[code & 7]!;
    const entry: ResumeEntry = { action };
    if (action === 'done' || action === 'adopt') entry.bytes = this.sizes.get(row);
    if (code & 8) entry.wasInFlight = true;
    if (code & 16) entry.fileMissing = true;
    return entry;
  }

  /** Rows refused with `action`: how many, and the first by row with its target. */
  refusals(action: 'conflict' | 'blocked'): { count: number; first?: { row: number; target: string } } {
    let count = 0;
    let first: { row: number; target: string } | undefined;
    for (const [row, entry] of this.refused) {
      if (entry.action !== action) continue;
      count++;
      if (!first || row < first.row) first = { row, target: entry.target };
    }
    return { count, first };
  }
}
