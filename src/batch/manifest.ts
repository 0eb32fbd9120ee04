// The batch manifest: one JSON line per row event, appended as it happens, so
// a batch killed at any moment can be re-run and pick up where it stopped.
//
// A row's key hashes its wire request and its output file, so editing a row
// (or the flags, or the template) makes it a new row, and inserting rows does
// not disturb the others. Besides "done" and "failed", a "started" line is
// written just before a row's request is sent: a row whose last line is
// "started" was in flight when the previous run died, which is the one case
// where the service may have generated (and charged) an image we never saw.
// Before a run's row lines comes its plan record (plan-record.ts), which has
// no key or status: readers of row records pass over it.
import { hash } from 'node:crypto';
import { closeSync, createReadStream, fdatasync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { GenerationRequest } from '../api/schema.js';
import { hexKey, WordTable } from '../bulk/compact.js';
import { notRegular } from '../bulk/files.js';
import { makeDirectories } from '../files/directories.js';
import { lines } from './input.js';
import { scanLine } from './manifest-lines.js';
import type { PlanRecord } from './plan-record.js';
import { redactValue, type Redact } from '../text/secrets.js';

export type RowStatus = 'started' | 'done' | 'failed';

export interface ManifestRecord {
  row: number;
  key: string;
  status: RowStatus;
  /** Output file, relative to the manifest's directory. */
  file: string;
  bytes?: number;
  attempts?: number;
  error?: string;
  /** Set when a file found on disk from an interrupted run was taken as this row's output. */
  adopted?: boolean;
  /** 429 answers the row met (absent when none). */
  rateLimited?: number;
  /** The exit code class of a failure (6 generation, 7 network, 8 rate limited, …). */
  exitCode?: number;
  /**
   * A digest of everything the row was planned from (RowPlanner.inputDigest):
   * a re-run that meets the row unchanged takes its key and file from this
   * record instead of planning it again.
   */
  input?: string;
  /** With --async: the request whose callback delivered the image, and the image's id. */
  requestId?: string;
  imageId?: string;
  time?: string;
}

export const DEFAULT_MANIFEST_NAME = 'aerial-batch-manifest.jsonl';

export function rowKey(request: GenerationRequest | unknown, file: string): string {
  // One call rather than a Hash object per row (the same bytes: JSON text never ends in half a surrogate pair).
  return hash('sha256', `${JSON.stringify(request)}\n${file}`).slice(0, 32);
}

/**
 * Every record of a manifest, in file order, streamed. Lines that do not
 * parse (a line torn by a crash of the machine) are skipped: losing one
 * record only means redoing one row. A missing manifest has none; a
 * directory or a device in its place is an error, not an endless read.
 */
export async function* manifestRecords(path: string, options: { onPlan?: (value: unknown) => void } = {}): AsyncGenerator<ManifestRecord> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notRegular(path, info.isDirectory());
    for await (const texts of lines(createReadStream('', { fd: handle.fd, autoClose: false, encoding: 'utf8', highWaterMark: 256 * 1024 }))) {
      for (const line of texts) {
        const parsed = parseLine(line);
        if (parsed?.record) yield parsed.record;
        else if (parsed && options.onPlan) options.onPlan(parsed.plan);
      }
    }
  } finally {
    await handle.close();
  }
}

/** A plan record's line as written (plan-record.ts): a line that starts so and does not parse is a torn plan record. */
const PLAN_LINE = /^\s*\{\s*"plan"\s*:/;

/**
 * A line's row record, or its plan record (its parsed value; undefined for a
 * plan line torn before its end), or undefined for a blank line, one that does
 * not parse, or one that is neither.
 */
function parseLine(line: string): { record: ManifestRecord; plan?: undefined } | { record?: undefined; plan: unknown } | undefined {
  if (!line.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return PLAN_LINE.test(line) ? { plan: undefined } : undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (Object.hasOwn(value, 'plan')) return { plan: value };
  const record = value as ManifestRecord;
  return typeof record.key === 'string' && STATUS_CODES[record.status] !== undefined ? { record } : undefined;
}

/** Words per row in ManifestIndex's recalls. */
const RECALL_WORDS = 10;

/** About how many bytes of manifest a row makes: a "started" and a "done" line, 120-160 bytes each. */
const BYTES_PER_ROW = 280;

/** Bytes read at a time from a manifest: lines of a few hundred bytes. */
const READ_BYTES = 1024 * 1024;

const STATUS_CODES: Record<string, number> = { started: 1, done: 2, failed: 3 };
const STATUS_NAMES: RowStatus[] = ['started', 'started', 'done', 'failed'];
/** Beside a key's status code: some record of it said it was sent. */
const SENT = 4;

/** What the manifest says of a row: its last record's status, and the bytes of its file when done. */
export interface ManifestEntry {
  status: RowStatus;
  bytes?: number;
  /**
   * The bytes its last "done" record gave, even when later records started
   * the row again or failed it: two runs that overlapped leave a row whose one
   * run wrote the file and recorded it, while the other failed it afterwards.
   */
  doneBytes?: number;
  /** Some run sent the row (a "started" or "done" record): a whole JPEG at its path is this batch's own. */
  sent?: boolean;
}

/** A row a manifest remembers by its input digest. */
export interface RecalledRow {
  /** Its output file, relative to the manifest's directory. */
  file: string;
  /** What the last record of its key says. */
  last?: ManifestEntry;
}

/**
 * The last record of each key, in a few words per key: a 200,000-row
 * manifest costs megabytes, not the hundreds a map of records would.
 * Done records that carry an input digest are also found by it (recall).
 */
export class ManifestIndex {
  private readonly table: WordTable;
  /**
   * Per row number, its last done record with an input digest, in RECALL_WORDS
   * words: the digest, the key, and where the file's name lies in `files`
   * (its length plus one; 0 for a row with none). By row, since rows are
   * recalled in row order, as the manifest mostly lists them.
   */
  private recalls: Uint32Array;
  /** The file names of `recalls`, as UTF-8, one after another. */
  private files = Buffer.allocUnsafe(64 * 1024);
  private filesEnd = 0;

  /** `expectedRows`: room made at once for about that many rows, rather than by doubling. */
  constructor(expectedRows = 768) {
    this.table = new WordTable(4, 3, expectedRows);
    this.recalls = new Uint32Array((expectedRows + 1) * RECALL_WORDS);
    // Rows past this are planned in full: a stray row number in a short manifest cannot make the index huge.
    this.lastRecalledRow = Math.max(1 << 20, expectedRows * 4);
  }
  private readonly lastRecalledRow: number;

  /**
   * The index of a manifest (none when there is no file). Lines are read from
   * their bytes (scanLine); one the scan leaves aside is parsed as
   * manifestRecords parses it, and one that does not parse is skipped.
   */
  static async read(path: string): Promise<ManifestIndex> {
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new ManifestIndex();
      throw error;
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(path, info.isDirectory());
      const index = new ManifestIndex(Math.ceil(info.size / BYTES_PER_ROW));
      let buffer = Buffer.allocUnsafe(READ_BYTES);
      let filled = 0;
      for (;;) {
        if (filled === buffer.length) {
          // A line longer than the buffer: room for it.
          const larger = Buffer.allocUnsafe(buffer.length * 2);
          buffer.copy(larger, 0, 0, filled);
          buffer = larger;
        }
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
        const end = filled + bytesRead;
        let start = 0;
        for (let newline = buffer.indexOf(0x0a, 0); newline !== -1 && newline < end; newline = buffer.indexOf(0x0a, start)) {
          index.addLine(buffer, start, newline);
          start = newline + 1;
        }
        if (bytesRead === 0) {
          // The last line, without its line break.
          if (start < end) index.addLine(buffer, start, end);
          return index;
        }
        buffer.copy(buffer, 0, start, end);
        filled = end - start;
      }
    } finally {
      await handle.close();
    }
  }

  /** Adds the line bytes[start, end) (without its line break; a CR before it is dropped). */
  private addLine(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === 0x0d) end--;
    const facts = scanLine(bytes, start, end);
    if (facts) {
      this.set(facts.key, facts.status, facts.bytes);
      if (facts.status === STATUS_CODES.done && facts.row >= 0) {
        this.remember(facts.row, facts.input, facts.key, facts.file && bytes.subarray(facts.file.start, facts.file.end));
      }
      return;
    }
    const parsed = parseLine(bytes.toString('utf8', start, end));
    if (parsed?.record) this.add(parsed.record);
    else if (parsed) this.lastPlan = parsed.plan;
  }

  /** The value of the manifest's last plan line (plan-record.ts), unchecked; undefined when it has none, or its last is torn. */
  lastPlan: unknown;

  get size(): number {
    return this.table.size;
  }

  add(record: ManifestRecord): void {
    const key = hexKey(record.key);
    if (!key) return;
    this.set(key, STATUS_CODES[record.status]!, typeof record.bytes === 'number' && record.bytes >= 0 ? record.bytes : -1);
    const input = typeof record.input === 'string' ? hexKey(record.input) : undefined;
    const row = Number.isInteger(record.row) && record.row >= 0 ? record.row : -1;
    if (record.status === 'done' && row >= 0) this.remember(row, input, key, typeof record.file === 'string' ? Buffer.from(record.file) : undefined);
  }

  /** A row's done record: recalled by its digest from now on, or (without a digest or file) no longer recalled by an earlier one. */
  private remember(row: number, input: ArrayLike<number> | undefined, key: ArrayLike<number>, file: Uint8Array | undefined): void {
    if (row > this.lastRecalledRow) return;
    if (!input || !file) {
      if ((row + 1) * RECALL_WORDS <= this.recalls.length) this.recalls[row * RECALL_WORDS + 9] = 0;
      return;
    }
    if ((row + 1) * RECALL_WORDS > this.recalls.length) {
      const larger = new Uint32Array(Math.max(this.recalls.length * 2, (row + 1) * RECALL_WORDS));
      larger.set(this.recalls);
      this.recalls = larger;
    }
    if (this.filesEnd + file.length > this.files.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.files.length * 2, this.filesEnd + file.length));
      this.files.copy(larger, 0, 0, this.filesEnd);
      this.files = larger;
    }
    this.files.set(file, this.filesEnd);
    const at = row * RECALL_WORDS;
    for (let w = 0; w < 4; w++) {
      this.recalls[at + w] = input[w]!;
      this.recalls[at + 4 + w] = key[w]!;
    }
    this.recalls[at + 8] = this.filesEnd;
    this.recalls[at + 9] = file.length + 1;
    this.filesEnd += file.length;
  }

  /**
   * The row `row` as the last done record for it with this input digest
   * has it: its file, and what its key's last record says now (a later run
   * may have started it again, or failed it). Undefined when its last done
   * record has another digest, or none.
   */
  recall(row: number, input: string): RecalledRow | undefined {
    const at = row * RECALL_WORDS;
    if (!(row >= 0 && at < this.recalls.length) || this.recalls[at + 9] === 0) return undefined;
    const words = hexKey(input);
    if (!words) return undefined;
    for (let w = 0; w < 4; w++) if (this.recalls[at + w] !== words[w]) return undefined;
    const start = this.recalls[at + 8]!;
    const key = this.recalls.subarray(at + 4, at + 8);
    return { file: this.files.toString('utf8', start, start + this.recalls[at + 9]! - 1), last: this.entry(key) };
  }

  /**
   * A key's last status code, and its bytes (-1 for none); the status word
   * also keeps SENT once any record said the row was sent, and the third
   * column the bytes of its last done record.
   */
  private set(key: ArrayLike<number>, code: number, size: number): void {
    const { slot } = this.table.slotFor(key);
    const [status, bytes, doneBytes] = this.table.columns;
    const stored = size >= 0 ? Math.min(size, 0xffffffff) + 1 : 0;
    status![slot] = code | (status![slot]! & SENT) | (code === STATUS_CODES.started || code === STATUS_CODES.done ? SENT : 0);
    bytes![slot] = stored;
    if (code === STATUS_CODES.done) doneBytes![slot] = stored;
  }

  get(key: string | undefined): ManifestEntry | undefined {
    const words = key === undefined ? undefined : hexKey(key);
    return words ? this.entry(words) : undefined;
  }

  private entry(words: ArrayLike<number>): ManifestEntry | undefined {
    const slot = this.table.find(words);
    if (slot === -1) return undefined;
    const [status, bytes, doneBytes] = this.table.columns;
    const size = bytes![slot]!;
    const done = doneBytes![slot]!;
    const code = status![slot]!;
    const entry: ManifestEntry = { status: STATUS_NAMES[code & ~SENT]!, bytes: size === 0 ? undefined : size - 1 };
    if (done !== 0) entry.doneBytes = done - 1;
    if (code & SENT) entry.sent = true;
    return entry;
  }
}

/**
 * Appends records with one write() each on an O_APPEND descriptor, so lines
 * from concurrent rows (or from several shards sharing one manifest) never
 * interleave. The write is synchronous: a line of a few hundred bytes costs
 * microseconds, and once append() returns the line survives the process being
 * killed. Surviving a crash of the whole machine needs a datasync; those run
 * in the background, one at a time, each covering every line before it, and
 * close() waits for the last. Rows never wait for the disk.
 */
export class ManifestWriter {
  private syncing = false;
  private syncAgain = false;
  /** Settles when no sync is running or due. */
  private busy?: { promise: Promise<void>; resolve: () => void };
  private syncError?: Error;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private needsNewline: boolean,
    private readonly redact: Redact,
  ) {}

  /** `redact`: what every record goes through first (secrets.ts); errors and ids are the service's words. */
  static async open(path: string, redact: Redact = (text) => text): Promise<ManifestWriter> {
    await makeDirectories(dirname(path));
    // Mode 0600: the manifest lists what was generated where, which is nobody else's business.
    const fd = openSync(path, 'a+', 0o600);
    const { size } = fstatSync(fd);
    let needsNewline = false;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      needsNewline = last[0] !== 0x0a;
    }
    return new ManifestWriter(path, fd, needsNewline, redact);
  }

  /** Appends one line; with `durable`, a background datasync is scheduled to follow it. */
  append(record: ManifestRecord, durable: boolean): void {
    this.appendLine(record, durable);
  }

  /** Appends the run's plan record (plan-record.ts), synced like a done row's line. */
  appendPlan(plan: PlanRecord): void {
    this.appendLine(plan, true);
  }

  private appendLine(value: ManifestRecord | PlanRecord, durable: boolean): void {
    const line = `${this.needsNewline ? '\n' : ''}${JSON.stringify(redactValue({ ...value, time: new Date().toISOString() }, this.redact))}\n`;
    this.needsNewline = false;
    writeSync(this.fd, line);
    if (durable) this.scheduleSync();
  }

  private scheduleSync(): void {
    if (this.syncing) {
      // The sync in progress may have started before this line was written: one more follows it.
      this.syncAgain = true;
      return;
    }
    if (!this.busy) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.busy = { promise, resolve };
    }
    this.syncing = true;
    fdatasync(this.fd, (error) => {
      if (error) this.syncError ??= error;
      this.syncing = false;
      if (this.syncAgain) {
        this.syncAgain = false;
        this.scheduleSync();
        return;
      }
      const busy = this.busy!;
      this.busy = undefined;
      busy.resolve();
    });
  }

  /** Waits for pending syncs, then closes (once); a failed sync is reported here. */
  async close(): Promise<void> {
    await this.busy?.promise;
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (this.syncError) throw this.syncError;
  }
}
