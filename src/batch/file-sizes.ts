// The sizes of many files, looked up on a second thread while the main thread
// goes on. A batch resumed over a long manifest checks that each finished
// row's file is still there at the size recorded: one lstat per row, about
// 3 µs each, most of a second for 200,000 rows on the main thread, which is
// busy reading the batch file at the same time. A worker thread does them in
// step with it instead (dist/file-sizes-worker.js); from the sources, or if
// the thread cannot start, they are done here.
import { lstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { bundledScript } from '../build-outputs/bundled-script.js';

/** fileSize's answer for a path with nothing at it (or that cannot be looked at). */
export const NO_FILE = -1;
/** fileSize's answer for a directory, a device, a FIFO or a symlink. */
export const NOT_A_FILE = -2;

/** The size of the regular file at `path`, else NO_FILE or NOT_A_FILE (a symlink is not followed). */
export function fileSize(path: string): number {
  let info;
  try {
    info = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return NO_FILE;
  }
  if (!info) return NO_FILE;
  return info.isFile() ? info.size : NOT_A_FILE;
}

/** Paths handed to the thread at a time; the first batch is also the threshold: smaller jobs never start it. */
const BATCH = 2048;

export interface SizeRequest {
  id: number;
  /** The paths, each followed by a NUL (which no path can hold): one string clones far faster than thousands. */
  paths: string;
}
export interface SizeReply {
  id: number;
  sizes: Float64Array;
}

/**
 * Looks up sizes and tells `onSize` of each (tag, path, size), on the main
 * thread, in no promised order; settled() resolves once every size asked
 * for has been told.
 */
export class FileSizes {
  private paths: string[] = [];
  private tags: number[] = [];
  private worker?: Worker;
  private nextId = 0;
  /** Batches handed to the thread and not yet answered. */
  private readonly sent = new Map<number, { paths: string[]; tags: number[] }>();
  private drained?: () => void;
  private closed = false;

  constructor(
    private readonly onSize: (tag: number, path: string, size: number) => void,
    private script: URL | undefined = bundledScript('file-sizes-worker.js'),
  ) {}

  look(tag: number, path: string): void {
    // A path with a NUL names no file (the system calls refuse it), and would break the list it is sent in.
    if (path.includes('\0')) return this.onSize(tag, path, NO_FILE);
    this.paths.push(path);
    this.tags.push(tag);
    if (this.paths.length >= BATCH) this.hand();
  }

  /** Resolves once every size asked for has been told. */
  async settled(): Promise<void> {
    this.hand();
    if (this.sent.size === 0) return;
    await new Promise<void>((resolve) => (this.drained = resolve));
  }

  close(): void {
    this.closed = true;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private hand(): void {
    if (this.paths.length === 0) return;
    const batch = { paths: this.paths, tags: this.tags };
    this.paths = [];
    this.tags = [];
    const worker = this.thread();
    if (!worker) return this.answer(batch.paths.map(fileSize), batch);
    const id = this.nextId++;
    this.sent.set(id, batch);
    worker.postMessage({ id, paths: `${batch.paths.join('\0')}\0` } satisfies SizeRequest);
  }

  private thread(): Worker | undefined {
    if (this.worker || !this.script || this.closed) return this.worker;
    const worker = new Worker(this.script);
    // The thread never holds the process open: the main thread waits in settled() for what it asked.
    worker.unref();
    worker.on('message', ({ id, sizes }: SizeReply) => {
      const batch = this.sent.get(id);
      if (!batch) return;
      this.sent.delete(id);
      this.answer(sizes, batch);
      if (this.sent.size === 0) this.drained?.();
    });
    // A thread that fails (it could not start, say) leaves its batches to the main thread.
    worker.on('error', () => this.fallBack());
    worker.on('exit', () => this.fallBack());
    this.worker = worker;
    return worker;
  }

  private fallBack(): void {
    if (this.closed) return;
    this.worker = undefined;
    this.script = undefined;
    const batches = [...this.sent.values()];
    this.sent.clear();
    for (const batch of batches) this.answer(batch.paths.map(fileSize), batch);
    if (batches.length > 0) this.drained?.();
  }

  private answer(sizes: ArrayLike<number>, batch: { paths: string[]; tags: number[] }): void {
    for (let i = 0; i < batch.paths.length; i++) this.onSize(batch.tags[i]!, batch.paths[i]!, sizes[i]!);
  }
}
