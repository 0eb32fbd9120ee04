// The batch manifest: one JSON line per row event, appended as it happens, so
// a batch killed at any moment can be re-run and pick up where it stopped.
//
// A row's key hashes its wire request and its output file, so editing a row
// (or the flags, or the template) makes it a new row, and inserting rows does
// not disturb the others. Besides "done" and "failed", a "started" line is
// written just before a row's request is sent: a row whose last line is
// "started" was in flight when the previous run died, which is the one case
// where the service may have generated (and charged) an image we never saw.
import { createHash } from 'node:crypto';
import { closeSync, fdatasync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { GenerationRequest } from '../api/schema.js';
import { readRegularFile } from './files.js';

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
  time?: string;
}

export const DEFAULT_MANIFEST_NAME = 'aerial-batch-manifest.jsonl';

export function rowKey(request: GenerationRequest | unknown, file: string): string {
  return createHash('sha256').update(JSON.stringify(request)).update('\n').update(file).digest('hex').slice(0, 32);
}

/**
 * The last record of each key. Lines that do not parse (a line torn by a
 * crash of the machine) are ignored: losing one record only means redoing
 * one row.
 */
export async function readManifest(path: string): Promise<Map<string, ManifestRecord>> {
  let text: string;
  try {
    // A directory or a device in the manifest's place is an error, not an endless read.
    text = await readRegularFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const latest = new Map<string, ManifestRecord>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let record: ManifestRecord;
    try {
      record = JSON.parse(line) as ManifestRecord;
    } catch {
      continue;
    }
    if (record && typeof record.key === 'string' && ['started', 'done', 'failed'].includes(record.status)) {
      latest.set(record.key, record);
    }
  }
  return latest;
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
  ) {}

  static async open(path: string): Promise<ManifestWriter> {
    await mkdir(dirname(path), { recursive: true });
    // Mode 0600: the manifest lists what was generated where, which is nobody else's business.
    const fd = openSync(path, 'a+', 0o600);
    const { size } = fstatSync(fd);
    let needsNewline = false;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      needsNewline = last[0] !== 0x0a;
    }
    return new ManifestWriter(path, fd, needsNewline);
  }

  /** Appends one line; with `durable`, a background datasync is scheduled to follow it. */
  append(record: ManifestRecord, durable: boolean): void {
    const line = `${this.needsNewline ? '\n' : ''}${JSON.stringify({ ...record, time: new Date().toISOString() })}\n`;
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
