// The account of a batch run on many machines: the manifests of its shards
// (artifacts downloaded from N runners) laid over the rows of its file.
//
// A record names its row by a key that hashes the row's wire request and its
// output file as written relative to that shard's manifest (manifest.ts). The
// manifests may have been written anywhere and downloaded anywhere else, so a
// record is matched to a row by what it says of itself: its file must be the
// row's output path (the same path below some directory) and its key must be
// that request with that file. Rows the plan knows under the same key are the
// quick case; a record's row number and its file's name find the rest.
//
// Within one manifest the last record of a key wins, as when a batch resumes.
// Across manifests a row is done when any of them says so, done more than once
// when two or more do, failed when none is done and one says failed, and
// missing otherwise (no record, or only "started": in flight when its shard
// stopped). The 429 answers are summed over every record that ended a row.
import { ExitCode } from '../lifecycle/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import { rowKey, type ManifestRecord } from './manifest.js';
import { exitCodeOf } from '../bulk/summary.js';

/** What a manifest line says about a row, as status keeps it. */
export interface StatusRecord {
  row: number;
  key: string;
  status: ManifestRecord['status'];
  /** The output file, relative to the directory of the manifest that recorded it. */
  file: string;
  error?: string;
  /** The exit code class of a failure, when the batch recorded it. */
  exitCode?: number;
  /** 429 answers the row met before it ended. */
  rateLimited?: number;
  time?: string;
}

/** One manifest as read: its name for messages, and its records in file order. */
export interface ManifestSummary {
  /** How the manifest is shown (a path). */
  path: string;
  /** Records read (a torn line, or a file that is no manifest, has none). */
  records: number;
  /** Rows whose last record here is "done" / "failed" / "started". */
  done: number;
  failed: number;
  inFlight: number;
  rateLimited: number;
}

/** Everything the manifests say about one key, across manifests: a few fields, since there is one per row. */
interface KeyEntry {
  key: string;
  row: number;
  file: string;
  /** The first manifest whose last record of this key is "done", and any others (rows done more than once). */
  doneIn?: number;
  alsoDoneIn?: number[];
  failed?: { error: string; exitCode?: number; manifest: number; time?: string };
  /** Manifests whose last record of this key is "started". */
  startedIn: number;
  matched: boolean;
  /** The manifest whose record was met last, and what it said: a later record there replaces it. */
  lastManifest: number;
  lastStatus?: ManifestRecord['status'];
}

/** A table from a number or a name to the entries that have it, without an array for the usual one. */
type Index<K> = Map<K, KeyEntry | KeyEntry[]>;

function addTo<K>(index: Index<K>, key: K, entry: KeyEntry): void {
  const found = index.get(key);
  if (found === undefined) index.set(key, entry);
  else if (Array.isArray(found)) found.push(entry);
  else index.set(key, [found, entry]);
}

function entriesOf<K>(index: Index<K>, key: K): readonly KeyEntry[] {
  const found = index.get(key);
  return found === undefined ? [] : Array.isArray(found) ? found : [found];
}

/** Beyond this many records of one file name (a template like out/{row}/image.jpg), rows are looked up by number only. */
const NAME_CANDIDATES = 8;

/** A planned row as status needs it: its number and, when valid, its request, output path and key. */
export interface StatusRow {
  row: number;
  request?: GenerationRequest;
  /** Absolute output path. */
  target?: string;
  /** The key the plan computes (its file relative to the default manifest place). */
  key?: string;
  /** Why the row is invalid (it can never be done). */
  error?: string;
}

export type RowState =
  | { state: 'done'; manifests: number[]; record: { file: string; manifest: number } }
  | { state: 'failed'; error: string; exitCode: number; manifest?: number }
  | { state: 'missing'; inFlight: boolean };

/** What is said of a failure whose code the record does not carry (written by an older aerial). */
const UNKNOWN_FAILURE_CODE = ExitCode.Server;
/** The exit code of a batch whose only fault is rows that no shard finished. */
export const MISSING_ROWS_CODE = ExitCode.Server;

/** True when `recordFile` (relative to some directory, '/'-separated) names `target`: the same path below that directory. */
export function namesTarget(recordFile: string, target: string): boolean {
  const segments = recordFile.split('/').filter((segment) => segment !== '' && segment !== '.');
  while (segments[0] === '..') segments.shift();
  if (segments.length === 0 || segments.includes('..')) return false;
  const targetSegments = target.split(/[\\/]/).filter(Boolean);
  if (segments.length > targetSegments.length) return false;
  const offset = targetSegments.length - segments.length;
  return segments.every((segment, index) => segment === targetSegments[offset + index]);
}

function lastSegment(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1]!;
}

/** A record as status keeps it, or undefined when it lacks what matching needs (a row number, a file). */
export function statusRecord(record: ManifestRecord): StatusRecord | undefined {
  if (typeof record.key !== 'string' || typeof record.file !== 'string') return undefined;
  if (!Number.isSafeInteger(record.row) || record.row < 1) return undefined;
  if (record.status !== 'started' && record.status !== 'done' && record.status !== 'failed') return undefined;
  const count = (field: unknown) => (Number.isSafeInteger(field) && (field as number) >= 0 ? (field as number) : undefined);
  return {
    row: record.row,
    key: record.key,
    status: record.status,
    file: record.file,
    error: typeof record.error === 'string' ? record.error : undefined,
    exitCode: count(record.exitCode),
    rateLimited: count(record.rateLimited),
    time: typeof record.time === 'string' ? record.time : undefined,
  };
}

/**
 * The manifests of a batch, added one at a time (each read once, line by
 * line), then asked about each row of the plan in turn.
 */
export class ManifestSet {
  readonly manifests: ManifestSummary[] = [];
  private readonly byKey = new Map<string, KeyEntry>();
  private readonly byRow: Index<number> = new Map();
  private readonly byName: Index<string> = new Map();

  /** Adds one manifest: its records in file order (manifestRecords; one without a row or a file is skipped). */
  async add(path: string, records: Iterable<ManifestRecord> | AsyncIterable<ManifestRecord>): Promise<ManifestSummary> {
    const manifest = this.manifests.length;
    const summary: ManifestSummary = { path, records: 0, done: 0, failed: 0, inFlight: 0, rateLimited: 0 };
    this.manifests.push(summary);
    for await (const read of records) {
      const record = statusRecord(read);
      if (!record) continue;
      summary.records++;
      if (record.status !== 'started') summary.rateLimited += record.rateLimited ?? 0;
      this.note(record, manifest, summary);
    }
    return summary;
  }

  private note(record: StatusRecord, manifest: number, summary: ManifestSummary): void {
    let entry = this.byKey.get(record.key);
    if (!entry) {
      entry = { key: record.key, row: record.row, file: record.file, startedIn: 0, matched: false, lastManifest: manifest };
      this.byKey.set(record.key, entry);
      addTo(this.byRow, record.row, entry);
      addTo(this.byName, lastSegment(record.file), entry);
    } else if (entry.lastManifest === manifest) {
      // A later record of the key in the same manifest replaces the earlier: the run that resumed knows best.
      this.forget(entry, manifest, summary);
    }
    entry.lastManifest = manifest;
    entry.lastStatus = record.status;
    if (record.status === 'done') {
      summary.done++;
      if (entry.doneIn === undefined) entry.doneIn = manifest;
      else (entry.alsoDoneIn ??= []).push(manifest);
    } else if (record.status === 'failed') {
      summary.failed++;
      const error = record.error ?? 'failed (no reason recorded)';
      // The most recent failure is the one worth showing.
      if (!entry.failed || (record.time ?? '') >= (entry.failed.time ?? '')) entry.failed = { error, exitCode: record.exitCode, manifest, time: record.time };
    } else {
      summary.inFlight++;
      entry.startedIn++;
    }
  }

  /** Takes back what the key's last record in `manifest` (the one being read) said. */
  private forget(entry: KeyEntry, manifest: number, summary: ManifestSummary): void {
    if (entry.lastStatus === 'done') {
      summary.done--;
      // This manifest is the last to have said done.
      if (entry.alsoDoneIn?.length) entry.alsoDoneIn.pop();
      else entry.doneIn = undefined;
    } else if (entry.lastStatus === 'failed') {
      summary.failed--;
      if (entry.failed?.manifest === manifest) entry.failed = undefined;
    } else if (entry.lastStatus === 'started') {
      summary.inFlight--;
      entry.startedIn--;
    }
  }

  /** The records that belong to `row`: its own key, or a record written relative to another manifest place. */
  private entriesFor(row: StatusRow): KeyEntry[] {
    const found: KeyEntry[] = [];
    const own = row.key === undefined ? undefined : this.byKey.get(row.key);
    if (own && !own.matched && namesTarget(own.file, row.target!)) {
      own.matched = true;
      found.push(own);
    }
    const sameName = entriesOf(this.byName, lastSegment(row.target!));
    const candidates = [...entriesOf(this.byRow, row.row), ...(sameName.length <= NAME_CANDIDATES ? sameName : [])];
    for (const entry of candidates) {
      if (entry.matched || !namesTarget(entry.file, row.target!)) continue;
      if (rowKey(row.request, entry.file) !== entry.key) continue;
      entry.matched = true;
      found.push(entry);
    }
    return found;
  }

  /** What the manifests say of `row`. Each record counts for one row only: ask about each row once. */
  stateOf(row: StatusRow): RowState {
    if (row.error !== undefined || !row.target) return { state: 'failed', error: row.error ?? `row ${row.row}: invalid`, exitCode: ExitCode.Usage };
    const entries = this.entriesFor(row);
    const done = [...new Set(entries.flatMap((entry) => (entry.doneIn === undefined ? [] : [entry.doneIn, ...(entry.alsoDoneIn ?? [])])))].sort((a, b) => a - b);
    if (done.length > 0) {
      const first = entries.find((entry) => entry.doneIn === done[0] || entry.alsoDoneIn?.includes(done[0]!))!;
      return { state: 'done', manifests: done, record: { file: first.file, manifest: done[0]! } };
    }
    const failures = entries.flatMap((entry) => (entry.failed ? [entry.failed] : []));
    if (failures.length > 0) {
      const latest = failures.reduce((a, b) => ((b.time ?? '') > (a.time ?? '') ? b : a));
      return { state: 'failed', error: latest.error, exitCode: latest.exitCode ?? UNKNOWN_FAILURE_CODE, manifest: latest.manifest };
    }
    return { state: 'missing', inFlight: entries.some((entry) => entry.startedIn > 0) };
  }

  /** Keys no row has claimed: records of rows since edited, or of a batch run with other flags or another template. */
  unmatched(): number {
    let count = 0;
    for (const entry of this.byKey.values()) if (!entry.matched) count++;
    return count;
  }

  rateLimited(): number {
    return this.manifests.reduce((sum, manifest) => sum + manifest.rateLimited, 0);
  }
}

export interface FailedRow {
  row: number;
  error: string;
  exitCode: number;
  /** The manifest that recorded the failure (absent for an invalid row). */
  manifest?: string;
}

export interface DuplicatedRow {
  row: number;
  manifests: string[];
}

/** The account of the whole batch, as `batch status --json` prints it. */
export interface BatchStatusReport {
  total: number;
  done: number;
  failed: number;
  missing: number;
  /** Rows done by more than one shard (each counted once in `done`). */
  duplicated: number;
  /** 429 answers met, summed over every manifest. */
  rateLimited: number;
  complete: boolean;
  failedRows: FailedRow[];
  missingRows: number[];
  /** Missing rows whose last record was "started": in flight when their shard stopped (the service may have charged). */
  inFlightRows: number[];
  duplicatedRows: DuplicatedRow[];
  /** Records that match no row of the file with these flags. */
  unmatchedRecords: number;
  manifests: ManifestSummary[];
}

/** Collects the state of every row, one at a time, into the report. */
export class StatusTally {
  private readonly report: BatchStatusReport;

  constructor(private readonly manifests: ManifestSet) {
    this.report = {
      total: 0,
      done: 0,
      failed: 0,
      missing: 0,
      duplicated: 0,
      rateLimited: 0,
      complete: false,
      failedRows: [],
      missingRows: [],
      inFlightRows: [],
      duplicatedRows: [],
      unmatchedRecords: 0,
      manifests: manifests.manifests,
    };
  }

  /** Adds a row and returns its state. */
  add(row: StatusRow): RowState {
    const state = this.manifests.stateOf(row);
    const report = this.report;
    report.total++;
    if (state.state === 'done') {
      report.done++;
      if (state.manifests.length > 1) {
        report.duplicated++;
        report.duplicatedRows.push({ row: row.row, manifests: state.manifests.map((index) => this.manifests.manifests[index]!.path) });
      }
    } else if (state.state === 'failed') {
      report.failed++;
      const manifest = state.manifest === undefined ? undefined : this.manifests.manifests[state.manifest]!.path;
      report.failedRows.push({ row: row.row, error: state.error, exitCode: state.exitCode, ...(manifest === undefined ? {} : { manifest }) });
    } else {
      report.missing++;
      report.missingRows.push(row.row);
      if (state.inFlight) report.inFlightRows.push(row.row);
    }
    return state;
  }

  /** The report, once every row has been added. */
  finish(): BatchStatusReport {
    this.report.rateLimited = this.manifests.rateLimited();
    this.report.unmatchedRecords = this.manifests.unmatched();
    this.report.complete = this.report.failed === 0 && this.report.missing === 0;
    return this.report;
  }
}

/**
 * 0 when every row is done (done more than once included: the images are
 * there); otherwise the code most failed rows share, as `batch` exits (ties:
 * the lower code), or, when no row failed, 6 for rows no shard finished.
 */
export function statusExitCode(report: BatchStatusReport): number {
  if (report.complete) return ExitCode.Ok;
  if (report.failedRows.length === 0) return MISSING_ROWS_CODE;
  const exitCodes = new Map<number, number>();
  for (const { exitCode } of report.failedRows) exitCodes.set(exitCode, (exitCodes.get(exitCode) ?? 0) + 1);
  return exitCodeOf(exitCodes);
}

/** Row numbers as ranges, for a human line: "3, 7–9, 12". */
export function rowRanges(rows: readonly number[], limit = 20): string {
  const parts: string[] = [];
  let index = 0;
  while (index < rows.length && parts.length < limit) {
    const start = rows[index]!;
    let end = start;
    while (index + 1 < rows.length && rows[index + 1] === end + 1) end = rows[++index]!;
    parts.push(start === end ? String(start) : `${start}–${end}`);
    index++;
  }
  return index < rows.length ? `${parts.join(', ')}, …` : parts.join(', ');
}
