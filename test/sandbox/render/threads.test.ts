// The sandbox renders on worker threads and keeps serving meanwhile: in-process
// with a worker script bundled from the sources (vitest cannot start a
// TypeScript worker), and through the built CLI, whose bundle carries its own
// dist/render-worker.js (run `npm run build` first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { renderAerialJpeg } from '../../../src/sandbox/render/aerial-image.js';
import { startSandbox } from '../../../src/sandbox/server.js';
import { BIN, cliEnv, registerSecret, runCli, spawnCli } from '../../helpers/cli.js';
import { API_PATH, generationRequest, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';
import { useRenderWorkerPerFile, writeStandInWorker } from '../worker-scripts.js';

const EXPECTED_THREADS = Math.min(2, availableParallelism());
let work: string;
let renderWorker: URL;

useRenderWorkerPerFile('aerial-render-threads-', (dir, worker) => {
  work = dir;
  renderWorker = worker;
});

let unique = 0;
/** A scene nothing else asks for: really rendered, never answered from the render cache. */
function freshScene(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return generationRequest({ tags: [`render-threads-${process.pid}-${Date.now()}-${++unique}`], ...overrides });
}

function postGeneration(url: string, key: string, request: GenerationRequest): Promise<Response> {
  return fetch(`${url}${API_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(request),
  });
}

interface Responsiveness {
  /** Health checks, sent one after another, that were answered while the generation waited for its answer. */
  answeredMeanwhile: number;
  jpeg: Buffer;
}

/**
 * Sends a generation and, one after another until it is answered, health
 * checks: counts, not durations, so a busy machine cannot blur them. A server
 * that renders on its main thread answers only those around the painting.
 */
async function healthChecksDuring(url: string, key: string, request: GenerationRequest): Promise<Responsiveness> {
  let done = false;
  const generation = postGeneration(url, key, request).then(async (res) => {
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    done = true;
    return body;
  });
  let answeredMeanwhile = 0;
  while (!done) {
    const health = await fetch(`${url}/__sandbox/health`);
    await health.arrayBuffer();
    if (!done) answeredMeanwhile++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { answeredMeanwhile, jpeg: await generation };
}

/** Fewer than this while an FHD frame renders on a thread (about 220 ms of CPU; here about 125 are answered) is a stalled server. */
const RESPONSIVE = 20;

describe('rendering on worker threads (in-process)', () => {
  let withThreads: TestSandbox;
  beforeAll(async () => {
    withThreads = await startTestSandbox({ renderWorker });
  });
  afterAll(() => withThreads.close());

  it('reports its render threads', async () => {
    expect(withThreads.renderThreads).toBe(EXPECTED_THREADS);
    expect(await (await fetch(`${withThreads.url}/__sandbox/health`)).json()).toEqual({ status: 'ok', renderThreads: EXPECTED_THREADS });
  });

  it('keeps answering while it renders, where a main-thread sandbox stalls until the render ends', async () => {
    const request = freshScene({ resolution: 'FHD' });
    const threaded = await healthChecksDuring(withThreads.url, withThreads.key, request);
    expect(threaded.jpeg.equals(await renderAerialJpeg(request))).toBe(true);
    expect(threaded.answeredMeanwhile).toBeGreaterThanOrEqual(RESPONSIVE);

    const mainThread = await startTestSandbox({ renderThreads: 0 });
    try {
      expect(await (await fetch(`${mainThread.url}/__sandbox/health`)).json()).toEqual({ status: 'ok', renderThreads: 0 });
      const stalled = await healthChecksDuring(mainThread.url, mainThread.key, freshScene({ resolution: 'FHD' }));
      // Here about 125 against 5 to 9 (those around the painting: the body read, the encoding); a busy machine slows both alike.
      expect(threaded.answeredMeanwhile).toBeGreaterThanOrEqual(4 * stalled.answeredMeanwhile);
    } finally {
      await mainThread.close();
    }
  });

  it('closes at once with a render in flight, without charging for it', async () => {
    const dataDir = join(work, 'closed-mid-render');
    // A stand-in render thread that never answers a scene tagged "silent": a close that waited for it would never end.
    const sb = await startTestSandbox({ renderWorker: writeStandInWorker(work), dataDir });
    const generation = postGeneration(sb.url, sb.key, freshScene({ tags: ['silent'] })).then(
      (res) => `HTTP ${res.status}`,
      () => 'cut off',
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await sb.close();
    expect(await generation).toBe('cut off');
    const state = JSON.parse(readFileSync(join(dataDir, 'state.json'), 'utf8')) as { accounts: Array<{ credits: number }>; images: unknown[] };
    expect(state.accounts.map((account) => account.credits)).toEqual([1000]);
    expect(state.images).toEqual([]);
  });

  it('warns and renders on the main thread when the worker script is missing', async () => {
    const warnings: string[] = [];
    const missing = pathToFileURL(join(work, 'no-such-worker.mjs'));
    const sb = await startTestSandbox({ renderWorker: missing, onWarning: (message) => warnings.push(message) });
    try {
      expect(sb.renderThreads).toBe(0);
      expect(warnings).toEqual([expect.stringContaining(`render worker script (${join(work, 'no-such-worker.mjs')}) is missing; rendering on the main thread`)]);
      const request = freshScene();
      const res = await postGeneration(sb.url, sb.key, request);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(await renderAerialJpeg(request))).toBe(true);
    } finally {
      await sb.close();
    }
  });

  it('answers 500 ErrorGeneratingImage, free of charge, when the worker cannot start, and goes on serving', async () => {
    const broken = join(work, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('this worker cannot start');\n");
    const sb = await startTestSandbox({ renderWorker: pathToFileURL(broken) });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await postGeneration(sb.url, sb.key, freshScene());
        expect(res.status).toBe(500);
        expect(await res.json()).toMatchObject({ error: 'ErrorGeneratingImage', message: 'the sandbox renderer failed: this worker cannot start' });
      }
      expect(await sb.credits(sb.key)).toBe(1000);
      expect((await fetch(`${sb.url}/__sandbox/health`)).status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});

describe('rendering on worker threads (built CLI)', () => {
  beforeAll(() => {
    if (!existsSync(join(BIN, '..', '..', 'dist', 'render-worker.js'))) throw new Error('dist/render-worker.js is missing: run `npm run build` first');
  });

  function startSandboxCommand(dataDir: string): Promise<{ child: ChildProcess; url: string; key: string }> {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--json', '--quiet', '--data-dir', dataDir], {
      env: cliEnv(join(work, 'config')),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('{'));
        if (line && stdout.includes('\n')) {
          const { url, key } = JSON.parse(line) as { url: string; key: string };
          resolve({ child, url, key });
        }
      });
      child.once('exit', (code) => reject(new Error(`aerial sandbox exited early (${code}): ${stderr}`)));
    });
  }

  it('`aerial sandbox` renders on its threads with dist/render-worker.js, keeps answering meanwhile, and stops at once on Ctrl-C', async () => {
    const dataDir = join(work, 'sandbox-command');
    const { child, url, key } = await startSandboxCommand(dataDir);
    try {
      expect(await (await fetch(`${url}/__sandbox/health`)).json()).toEqual({ status: 'ok', renderThreads: EXPECTED_THREADS });
      const request = freshScene({ resolution: 'FHD' });
      const { answeredMeanwhile, jpeg: bytes } = await healthChecksDuring(url, key, request);
      expect(bytes.equals(await renderAerialJpeg(request))).toBe(true);
      expect(answeredMeanwhile).toBeGreaterThanOrEqual(RESPONSIVE);
      expect(jpeg.decode(bytes, { useTArray: true })).toMatchObject({ width: 1920, height: 1080 });

      // Ctrl-C while UHD frames render and more wait their turn: the command stops without waiting for them.
      // 80 frames of about 0.8 s of CPU each on two threads: a command that waited would outlast this test's timeout.
      const pending = Array.from({ length: 80 }, () => postGeneration(url, key, freshScene({ resolution: 'UHD' })).catch(() => undefined));
      await new Promise((resolve) => setTimeout(resolve, 150));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      await Promise.all(pending);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('`generate --sandbox` makes its image on a worker thread, and Ctrl-C in mid-render exits 130 at once', async () => {
    const configDir = join(work, 'generate-config');
    // The in-process sandbox uses $XDG_DATA_HOME/aerial/sandbox (<config dir>/data/… in the tests); its key must never be printed.
    const first = await startSandbox({ port: 0, dataDir: join(configDir, 'data', 'aerial', 'sandbox') });
    registerSecret(first.defaultKey);
    await first.close();

    const out = join(configDir, 'hd.jpg');
    const made = await runCli(['generate', '--sandbox', '--lat', '10.5', '--lng', '20.25', '--resolution', 'HD', '-o', out], { configDir });
    expect(made.exitCode).toBe(0);
    // The bundled worker was found: no warning that rendering fell back to the main thread.
    expect(made.stderr).toMatch(/^✔ Saved .*hd\.jpg/);
    expect(made.stderr).not.toContain('render worker');
    expect(jpeg.decode(readFileSync(out), { useTArray: true })).toMatchObject({ width: 1280, height: 720 });

    const child = spawnCli(['generate', '--sandbox', '--verbose', '--lat', '11.5', '--lng', '21.25', '--resolution', 'UHD', '-o', join(configDir, 'uhd.jpg')], { configDir });
    // The request goes out as soon as the in-process sandbox serves; a UHD frame then takes about a second.
    await new Promise<void>((resolve) => {
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (stderr.includes('sandbox: serving in-process')) resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const interrupted = performance.now();
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(performance.now() - interrupted).toBeLessThan(500);
    expect(String(result.stderr)).not.toContain(first.defaultKey);
    expect(existsSync(join(configDir, 'uhd.jpg'))).toBe(false);
  });
});
