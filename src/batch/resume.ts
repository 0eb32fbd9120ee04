// Decides, before anything is sent, what each planned row needs given the
// manifest of earlier runs and what is on disk:
//   done      — a "done" record and its file still there: skipped
//   adopt     — the previous run died between writing the file and recording it:
//               the file is taken as the row's output, nothing is sent
//   pending   — to be generated (first time, failed before, or its file vanished)
//   conflict  — a file is in the way that this batch did not write
//   blocked   — a directory is where the image must go: even --force cannot replace it
import { lstat, readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import pLimit from 'p-limit';
import { isCompleteJpeg } from './files.js';
import type { ManifestRecord } from './manifest.js';
import type { PlannedRow } from './plan.js';

export type ResumeAction = 'done' | 'adopt' | 'pending' | 'conflict' | 'blocked';

export interface ResumeEntry {
  action: ResumeAction;
  previous?: ManifestRecord;
  /** Size of the file on disk, when there is one. */
  bytes?: number;
  /** Pending because the previous run died with this row's request in flight. */
  wasInFlight?: boolean;
  /** Pending because its recorded file has disappeared. */
  fileMissing?: boolean;
}

export async function resumeState(
  rows: PlannedRow[],
  manifest: Map<string, ManifestRecord>,
  force: boolean,
): Promise<Map<PlannedRow, ResumeEntry>> {
  const state = new Map<PlannedRow, ResumeEntry>();
  // One directory listing instead of a probe per row: a fresh batch has nothing on disk to look at.
  const present = await namesOnDisk(rows.map((row) => row.target!));
  // A few dozen files at a time: thousands of rows must not exhaust file descriptors.
  const limit = pLimit(32);
  await Promise.all(rows.map((row) => limit(async () => {
      const previous = manifest.get(row.key!);
      const listed = present.has(row.target!);
      const onDisk = listed ? await isCompleteJpeg(row.target!) : { ok: false, bytes: 0 };
      const inTheWay = listed && !onDisk.ok ? await lstat(row.target!).catch(() => undefined) : undefined;
      const taken = onDisk.ok || inTheWay !== undefined;
      let entry: ResumeEntry;
      if (inTheWay?.isDirectory()) {
        entry = { action: 'blocked', previous };
      } else if (previous?.status === 'done' && onDisk.ok) {
        entry = { action: 'done', previous, bytes: onDisk.bytes };
      } else if (previous?.status === 'started' && onDisk.ok) {
        entry = { action: 'adopt', previous, bytes: onDisk.bytes };
      } else if (taken) {
        entry = { action: force ? 'pending' : 'conflict', previous, bytes: onDisk.bytes };
      } else {
        entry = {
          action: 'pending',
          previous,
          wasInFlight: previous?.status === 'started',
          fileMissing: previous?.status === 'done',
        };
      }
      state.set(row, entry);
  })));
  return state;
}

/** Which of `paths` exist, from one readdir per directory (a missing directory holds nothing). */
async function namesOnDisk(paths: string[]): Promise<Set<string>> {
  const byDir = new Map<string, string[]>();
  for (const path of paths) {
    const dir = dirname(path);
    const inDir = byDir.get(dir);
    if (inDir) inDir.push(path);
    else byDir.set(dir, [path]);
  }
  const present = new Set<string>();
  for (const [dir, inDir] of byDir) {
    let names: Set<string>;
    try {
      names = new Set(await readdir(dir));
    } catch {
      continue;
    }
    for (const path of inDir) if (names.has(basename(path))) present.add(path);
  }
  return present;
}
