// The listing spool: the record of every image an export lists, one JSON line
// each in the order they were first listed (line n is image number n of the
// ledger, ledger.ts), written to a file in the export directory as pages
// arrive and read back a line at a time at the end for the index and the
// summary's rows. Each line is the index line of its image (the record,
// redacted, with its file name): no secret reaches the disk here either. The
// directory is the export's, under its run lock, and the spool is removed
// when the export ends (a killed export's is replaced by the next one's).
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { GATHERED_CHARS } from '../../files/atomic-file.js';

export const SPOOL_NAME = '.aerial-export.listing';

export class ListingSpool {
  private pending: string[] = [];
  private pendingLength = 0;
  private lineCount = 0;

  private constructor(
    readonly path: string,
    private handle: FileHandle | undefined,
  ) {}

  /** A new spool at `path`, replacing whatever a killed export left there. */
  static async create(path: string): Promise<ListingSpool> {
    await unlink(path).catch(() => {});
    return new ListingSpool(path, await open(path, 'wx+', 0o600));
  }

  get lines(): number {
    return this.lineCount;
  }

  /** Adds a line (its text without the newline); written once enough has gathered, or by flush(). */
  async append(line: string): Promise<void> {
    this.pending.push(line);
    this.pendingLength += line.length + 1;
    this.lineCount++;
    if (this.pendingLength >= GATHERED_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0 || !this.handle) return;
    const text = `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.pendingLength = 0;
    await this.handle.write(text);
  }

  /** Every line written, in order, a line at a time. */
  async *read(): AsyncGenerator<string> {
    await this.flush();
    const handle = await open(this.path, 'r');
    try {
      const lines = createInterface({ input: handle.createReadStream({ encoding: 'utf8', autoClose: false }), crlfDelay: Infinity });
      let n = 0;
      for await (const line of lines) {
        if (n++ >= this.lineCount) break;
        yield line;
      }
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** Closes and removes the spool. */
  async remove(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.pending = [];
    await handle?.close().catch(() => {});
    await unlink(this.path).catch(() => {});
  }
}
