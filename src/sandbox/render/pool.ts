// A small pool of worker threads that render sandbox JPEGs, so the main thread
// keeps serving (and an in-process `--sandbox` run keeps its spinner and
// Ctrl-C) while a frame takes 50 ms (HD) to seconds (UHD) of CPU.
//
// Workers start on demand (or all at once, warmUp), one job at a time each,
// and hold the event loop open only while they render: an idle pool never
// keeps a process alive. close() terminates them.
//
// A worker needs a JavaScript file to run (src/build-outputs/bundled-script.ts): from the
// TypeScript sources that vitest runs, the sandbox renders on the main thread
// unless a test passes a worker script it built (see startSandbox's renderWorker).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bundledScript, RUNNING_FROM_SOURCES } from '../../build-outputs/bundled-script.js';
import type { GenerationRequest } from '../../api/schema.js';
import type { FrameSize } from './aerial-image.js';
import type { RenderJob, RenderReply } from './worker.js';

export const DEFAULT_RENDER_THREADS = Math.min(2, availableParallelism());

/**
 * The warm-up frame: an ordinary request (rainy, so the cloud and rain overlays
 * run too) drawn at a tiny size. Every stage of a full frame runs, the
 * world data, scene, overlays and JPEG encoding, so V8 has loaded and
 * compiled the renderer afterwards. Most of that is fixed costs (starting the
 * thread, reading the world data, loading libvips) that a larger frame would
 * not reduce.
 */
export const WARM_UP_REQUEST: GenerationRequest = {
  coordinates: { lat: 48.8584, lng: 2.2945 },
  resolution: 'HD',
  zoom: 'Medium',
  bearing: 'North',
  angle: 'High',
  weather: 'Rainy',
  daytime: 'Day',
  aspectRatio: 'Landscape',
  epoch: 'Nowadays',
  tags: [],
};
export const WARM_UP_SIZE: FrameSize = { width: 64, height: 36 };

export { RUNNING_FROM_SOURCES };

/** The bundled worker script, dist/render-worker.js (see bundledScript). */
export function bundledRenderWorker(): URL | undefined {
  return bundledScript('render-worker.js');
}

interface Job extends RenderJob {
  resolve: (jpeg: Buffer) => void;
  reject: (error: Error) => void;
}

interface PooledWorker {
  worker: Worker;
  job?: Job;
}

export class RenderPool {
  private readonly workers: PooledWorker[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly script: URL,
    readonly size: number,
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a render pool needs at least one thread; got ${size}`);
  }

  /** The JPEG for `request`, rendered by the next free worker. */
  render(request: GenerationRequest): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the renderer has been closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts every thread and has each idle one render the warm-up frame, so the
   * first real renders pay neither for starting a thread nor for compiling the
   * renderer. Nothing is cached or returned.
   */
  async warmUp(): Promise<void> {
    if (this.closed) return;
    while (this.workers.length < this.size) this.spawn();
    const idle = this.workers.filter((entry) => !entry.job);
    await Promise.all(
      idle.map(
        (entry) =>
          new Promise<Buffer>((resolve, reject) =>
            this.give(entry, { id: this.nextId++, request: WARM_UP_REQUEST, size: WARM_UP_SIZE, resolve, reject }),
          ),
      ),
    );
  }

  /** Terminates the workers; renders still running or waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    const stopped = new Error('the sandbox closed before the image was rendered');
    for (const job of this.queue.splice(0)) job.reject(stopped);
    const workers = this.workers.splice(0);
    for (const entry of workers) entry.job?.reject(stopped);
    await Promise.all(workers.map((entry) => entry.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let entry = this.workers.find((candidate) => !candidate.job);
      if (!entry) {
        if (this.workers.length >= this.size) return;
        entry = this.spawn();
      }
      this.give(entry, this.queue.shift()!);
    }
  }

  private give(entry: PooledWorker, job: Job): void {
    entry.job = job;
    entry.worker.ref();
    const message: RenderJob = { id: job.id, request: job.request, ...(job.size ? { size: job.size } : {}) };
    entry.worker.postMessage(message);
  }

  private spawn(): PooledWorker {
    const entry: PooledWorker = { worker: new Worker(this.script) };
    entry.worker.on('message', (reply: RenderReply) => {
      const job = entry.job;
      if (!job || job.id !== reply.id) return;
      entry.job = undefined;
      entry.worker.unref();
      if ('jpeg' in reply) job.resolve(Buffer.from(reply.jpeg));
      else job.reject(new Error(reply.error));
      this.dispatch();
    });
    entry.worker.on('error', (error) => this.retire(entry, error));
    entry.worker.on('exit', (code) => this.retire(entry, new Error(`the render worker stopped (exit code ${code})`)));
    this.workers.push(entry);
    return entry;
  }

  /** A worker that crashed or exited: its job fails, and later jobs start a fresh worker. */
  private retire(entry: PooledWorker, error: Error): void {
    const index = this.workers.indexOf(entry);
    if (index < 0) return;
    this.workers.splice(index, 1);
    entry.job?.reject(error);
    entry.job = undefined;
    void entry.worker.terminate();
    this.dispatch();
  }
}
