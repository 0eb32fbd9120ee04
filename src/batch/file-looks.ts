// What is at each output path of a long batch, looked at on a second thread.
// A resumed batch must look at every row's file before its first request (a
// file deleted or truncated since is redone); one lstat each is a large part
// of that time, and none of it needs the main thread, which meanwhile plans
// the next rows. Short batches look at their files in place (lookAt).
import { lstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** What is at a path: a regular file's size, or MISSING, DIRECTORY or OTHER. */
export type FileLook = number;
export const MISSING = -1;
export const DIRECTORY = -2;
export const OTHER = -3;

/** Looks at one path. A path that cannot be looked at (a file where a directory must be) holds nothing. */
export function lookAt(path: string): FileLook {
  let info;
  try {
    info = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    info = undefined;
  }
  if (!info) return MISSING;
  if (info.isDirectory()) return DIRECTORY;
  return info.isFile() ? info.size : OTHER;
}

// The worker's code: lookAt, over a list of paths at a time.
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
parentPort.on('message', (paths) => {
  const looks = new Float64Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    let info;
    try {
      info = lstatSync(paths[i], { throwIfNoEntry: false });
    } catch {
      info = undefined;
    }
    looks[i] = !info ? ${MISSING} : info.isDirectory() ? ${DIRECTORY} : info.isFile() ? info.size : ${OTHER};
  }
  parentPort.postMessage(looks, [looks.buffer]);
});
`;

/** Paths sent to the worker at a time. */
const BATCH_PATHS = 512;

/**
 * Looks at paths on a worker thread, in batches, and hands each look to its
 * callback in the order the paths were given. An item without a path is
 * handed on in its turn with MISSING (for steps that must keep their place
 * among the looks).
 */
export class FileLooker<T> {
  private readonly worker: Worker;
  private paths: string[] = [];
  private items: T[] = [];
  /** Batches sent and not answered, in order. */
  private readonly sent: T[][] = [];
  private failure?: Error;
  private drained?: () => void;

  constructor(private readonly onLook: (item: T, look: FileLook) => void) {
    this.worker = new Worker(WORKER_CODE, { eval: true });
    // The worker never keeps the process alive; a batch stopped by a signal ends it with the process.
    this.worker.unref();
    this.worker.on('message', (looks: Float64Array) => {
      const items = this.sent.shift()!;
      try {
        for (let i = 0; i < items.length; i++) this.onLook(items[i]!, looks[i]!);
      } catch (error) {
        this.failure ??= error as Error;
      }
      if (this.sent.length === 0) this.drained?.();
    });
    this.worker.on('error', (error) => {
      this.failure ??= error;
      this.drained?.();
    });
    this.worker.on('exit', () => {
      if (this.sent.length > 0) this.failure ??= new Error('the thread looking at output files ended early');
      this.drained?.();
    });
  }

  /** Queues `item`, to be handed on with what is at `path` (an empty path: MISSING, without a look). */
  add(item: T, path: string): void {
    this.items.push(item);
    this.paths.push(path);
    if (this.items.length >= BATCH_PATHS) this.send();
  }

  private send(): void {
    if (this.items.length === 0) return;
    this.sent.push(this.items);
    this.worker.postMessage(this.paths);
    this.items = [];
    this.paths = [];
  }

  /** Ends the worker without waiting for what it was given. */
  close(): void {
    void this.worker.terminate();
  }

  /** Waits until every item has been handed on, then ends the worker; a callback's error is thrown here. */
  async finish(): Promise<void> {
    this.send();
    if (this.sent.length > 0 && !this.failure) await new Promise<void>((resolve) => (this.drained = resolve));
    await this.worker.terminate();
    if (this.failure) throw this.failure;
  }
}
