// Rendering off the main thread: the worker pool (threads, queue, failures,
// close, an idle pool letting the process exit) and the SceneRenderer in front
// of it (cache, shared renders, cancellation, the main-thread fallback).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { SceneRenderer } from '../../../src/sandbox/server/generation.js';
import { HttpError } from '../../../src/sandbox/server/http-io.js';
import { bundledRenderWorker, RenderPool, RUNNING_FROM_SOURCES, WARM_UP_REQUEST, WARM_UP_SIZE } from '../../../src/sandbox/render/pool.js';
import { renderAerialJpeg } from '../../../src/sandbox/render/aerial-image.js';
import { generationRequest, jpegInfo } from '../../helpers/sandbox.js';
import { bundleForNode, useRenderWorkerPerFile, writeRecordingWorker, writeStandInWorker } from '../worker-scripts.js';

let work: string;
let renderWorker: URL;
const pools: RenderPool[] = [];

useRenderWorkerPerFile('aerial-render-pool-', (dir, worker) => {
  work = dir;
  renderWorker = worker;
});

afterAll(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function pool(script: URL, size = 2): RenderPool {
  const created = new RenderPool(script, size);
  pools.push(created);
  return created;
}

/** A scene no other test asks for, so the shared render cache never answers it. */
let unique = 0;
function freshScene(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return generationRequest({ tags: [`render-pool-${process.pid}-${++unique}`], ...overrides });
}

/** How often a 2 ms timer ran while `work` ran: a render holding the main thread lets it run only around the render. */
async function timerTicksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

describe('the render worker pool', () => {
  it('renders in a worker thread exactly what the main thread renders', async () => {
    const request = freshScene();
    const jpeg = await pool(renderWorker).render(request);
    expect(jpeg.equals(await renderAerialJpeg(request))).toBe(true);
  });

  it('keeps the main thread free while it renders, where rendering in-thread stalls it for the whole render', async () => {
    const workers = new SceneRenderer(pool(renderWorker));
    await workers.render(freshScene()); // the worker thread is started and warm
    const offThread = await timerTicksDuring(() => workers.render(freshScene({ resolution: 'FHD' })));
    const inThread = await timerTicksDuring(() => new SceneRenderer(undefined).render(freshScene({ resolution: 'FHD' })));
    // Counts, not durations: the timer ran all through the off-thread render (about 140 times here), and in-thread
    // only while the painted frame was encoded (about 10); a busy machine slows both alike.
    expect(offThread).toBeGreaterThanOrEqual(20);
    expect(offThread).toBeGreaterThanOrEqual(3 * inThread);
  });

  it('runs at most `size` jobs at once, one per thread, and queues the rest', async () => {
    const twoThreads = pool(writeStandInWorker(work, 40), 2);
    const answers = await Promise.all(Array.from({ length: 6 }, () => twoThreads.render(freshScene())));
    const threads = new Set(answers.map((answer) => answer.toString()));
    expect(threads.size).toBe(2);
  });

  it('rejects a render that fails with its message, and goes on rendering', async () => {
    const renderer = pool(renderWorker, 1);
    await expect(renderer.render(freshScene({ aspectRatio: 'Oval' as never }))).rejects.toThrow(/./);
    const request = freshScene();
    expect((await renderer.render(request)).equals(await renderAerialJpeg(request))).toBe(true);
  });

  it('fails only the job of a worker that exits or crashes, and starts a fresh worker for the next', async () => {
    const renderer = pool(writeStandInWorker(work), 1);
    const first = (await renderer.render(freshScene())).toString();
    await expect(renderer.render(freshScene({ tags: ['exit'] }))).rejects.toThrow('the render worker stopped (exit code 3)');
    const second = (await renderer.render(freshScene())).toString();
    await expect(renderer.render(freshScene({ tags: ['throw'] }))).rejects.toThrow('stand-in worker blew up');
    const third = (await renderer.render(freshScene())).toString();
    expect(new Set([first, second, third]).size).toBe(3);
  });

  it('warmUp() starts every thread and has each render the tiny warm-up frame, once', async () => {
    const log = join(work, 'warm-up-pool.log');
    const renderer = pool(writeRecordingWorker(work, log), 2);
    await renderer.warmUp();
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const started = lines.filter((line) => line.startsWith('start ')).map((line) => line.split(' ')[1]);
    expect(new Set(started).size).toBe(2);
    const size = `${WARM_UP_SIZE.width}x${WARM_UP_SIZE.height}`;
    expect(lines.filter((line) => line.startsWith('job ')).sort()).toEqual(started.map((thread) => `job ${thread} ${size}`).sort());
    // Real work goes to the threads already running: no third one starts.
    const answers = await Promise.all([renderer.render(freshScene()), renderer.render(freshScene())]);
    expect(new Set(answers.map((answer) => answer.toString()))).toEqual(new Set(started));
    expect(readFileSync(log, 'utf8').match(/^start /gm)).toHaveLength(2);
  });

  it('warms up with the real renderer at the tiny size, and renders full frames after it', async () => {
    expect(jpegInfo(await renderAerialJpeg(WARM_UP_REQUEST, WARM_UP_SIZE))).toEqual({ baseline: true, ...WARM_UP_SIZE });
    const renderer = pool(renderWorker, 2);
    await renderer.warmUp();
    const jpeg = await renderer.render(WARM_UP_REQUEST);
    expect(jpegInfo(jpeg)).toEqual({ baseline: true, width: 1280, height: 720 });
    expect(jpeg.equals(await renderAerialJpeg(WARM_UP_REQUEST))).toBe(true);
  });

  it('close() fails running and queued renders, stops its threads and refuses new work', async () => {
    const renderer = new RenderPool(writeStandInWorker(work), 1);
    const running = renderer.render(freshScene({ tags: ['silent'] }));
    const queued = renderer.render(freshScene());
    const outcomes = Promise.allSettled([running, queued]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await renderer.close();
    expect((await outcomes).map((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).message)).toEqual([
      'the sandbox closed before the image was rendered',
      'the sandbox closed before the image was rendered',
    ]);
    await expect(renderer.render(freshScene())).rejects.toThrow('closed');
  });

  it('holds the process open while it renders, and not a moment longer', async () => {
    // A script that renders twice (the second time on a thread that has been idle)
    // and then neither closes the pool nor exits.
    const script = join(work, 'idle-pool.mjs');
    await bundleForNode({ script: `import { RenderPool } from './src/sandbox/render/pool.ts';
          const pool = new RenderPool(new URL(process.argv[2]), 2);
          const first = await pool.render({ tags: [] });
          const second = await pool.render({ tags: [] });
          process.stdout.write('rendered by threads ' + first.toString() + ' ' + second.toString() + '\\n');` }, script);
    const started = performance.now();
    const child = spawn(process.execPath, [script, writeStandInWorker(work, 300).href], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    // An idle thread that held the process open would keep it alive for good: give up after 5 s.
    const giveUp = setTimeout(() => child.kill(), 5_000);
    const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(giveUp);
    // Had the busy worker not held the loop open, the top-level await would have been left unsettled (exit code 13).
    expect({ exitCode, stdout }).toEqual({ exitCode: 0, stdout: expect.stringMatching(/^rendered by threads (\d+) \1\n$/) });
    expect(performance.now() - started).toBeGreaterThan(600);
  });

  it('finds no worker script when running from the TypeScript sources', () => {
    expect(RUNNING_FROM_SOURCES).toBe(true);
    expect(bundledRenderWorker()).toBeUndefined();
  });
});

describe('SceneRenderer', () => {
  function countingPool(render: (request: GenerationRequest) => Promise<Buffer>) {
    const stub = { size: 2, render: vi.fn(render), close: vi.fn(async () => {}) };
    return { stub, renderer: new SceneRenderer(stub as unknown as RenderPool) };
  }

  it('gives identical requests that arrive together one render, and answers a repeat from its cache', async () => {
    const { stub, renderer } = countingPool(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return Buffer.from('jpeg');
    });
    const request = freshScene();
    const images = await Promise.all(Array.from({ length: 5 }, () => renderer.render({ ...request, saveImage: false })));
    expect(images.map((image) => image.jpeg.toString())).toEqual(Array(5).fill('jpeg'));
    expect(images[0]).toMatchObject({ width: 1280, height: 720 });
    await renderer.render(request);
    expect(stub.render).toHaveBeenCalledTimes(1);
  });

  it('stops waiting for a request whose signal aborts, while the others still get the image', async () => {
    let finish: (jpeg: Buffer) => void = () => {};
    const { renderer } = countingPool(() => new Promise((resolve) => (finish = resolve)));
    const request = freshScene();
    const cancelled = new AbortController();
    const abandoned = renderer.render(request, cancelled.signal);
    const kept = renderer.render(request);
    await new Promise((resolve) => setTimeout(resolve, 10));
    cancelled.abort();
    await expect(abandoned).rejects.toMatchObject({ status: 500, code: 'ErrorGeneratingImage', message: expect.stringMatching(/cancelled/) });
    finish(Buffer.from('jpeg'));
    expect((await kept).jpeg.toString()).toBe('jpeg');
  });

  it('turns a failed render into 500 ErrorGeneratingImage, and does not remember the failure', async () => {
    const { stub, renderer } = countingPool(async () => {
      throw new Error('out of paint');
    });
    const request = freshScene();
    const failure = await renderer.render(request).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ status: 500, code: 'ErrorGeneratingImage', message: 'the sandbox renderer failed: out of paint' });
    await expect(renderer.render(request)).rejects.toThrow('out of paint');
    expect(stub.render).toHaveBeenCalledTimes(2);
  });

  it('renders on the main thread without a pool, and says so', async () => {
    const renderer = new SceneRenderer(undefined);
    expect(renderer.threads).toBe(0);
    const request = freshScene();
    expect((await renderer.render(request)).jpeg.equals(await renderAerialJpeg(request))).toBe(true);
  });
});
