// The standalone sandbox warms its renderer up before it reports itself ready
// (startSandbox's warmUp, which `aerial sandbox` sets): the render threads are
// started and have each rendered a tiny frame by the time startSandbox
// resolves, and the warm-up leaves no trace a client could see.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WARM_UP_REQUEST, WARM_UP_SIZE } from '../../../src/sandbox/render/pool.js';
import { renderAerialJpeg } from '../../../src/sandbox/render/aerial-image.js';
import { jpegInfo, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';
import { useRenderWorkerPerFile, writeRecordingWorker } from '../worker-scripts.js';

let work: string;
let renderWorker: URL;
useRenderWorkerPerFile('aerial-warm-up-', (dir, worker) => {
  work = dir;
  renderWorker = worker;
});

let sb: TestSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('warmUp', () => {
  it('starts the render threads and renders the warm-up frame in each before startSandbox resolves', async () => {
    const log = join(work, 'warm.log');
    sb = await startTestSandbox({ warmUp: true, renderThreads: 2, renderWorker: writeRecordingWorker(work, log) });
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.filter((line) => line.startsWith('start '))).toHaveLength(2);
    expect(lines.filter((line) => line.startsWith('job ')).map((line) => line.split(' ')[2])).toEqual(
      Array(2).fill(`${WARM_UP_SIZE.width}x${WARM_UP_SIZE.height}`),
    );
  });

  it('is off by default: the threads start on the first render, as for in-process --sandbox runs', async () => {
    const log = join(work, 'cold.log');
    sb = await startTestSandbox({ renderThreads: 2, renderWorker: writeRecordingWorker(work, log) });
    expect(existsSync(log)).toBe(false);
  });

  it.each([
    ['on render threads', 2],
    ['on the main thread', 0],
  ])('leaves no trace %s: nothing stored, charged, listed or logged, and its scene still renders at full size', async (_where, renderThreads) => {
    sb = await startTestSandbox({ warmUp: true, renderThreads, ...(renderThreads ? { renderWorker } : {}) });
    expect(sb.renderThreads).toBe(renderThreads);
    expect(await sb.credits(sb.key)).toBe(1000);
    expect(sb.requests()).toEqual([]);
    expect(readdirSync(join(sb.dataDir, 'images'))).toEqual([]);
    const state = JSON.parse(readFileSync(join(sb.dataDir, 'state.json'), 'utf8')) as { images: unknown[] };
    expect(state.images).toEqual([]);
    const page = (await (await fetch(sb.api(), { headers: { 'x-api-key': sb.key } })).json()) as { totalElements: number };
    expect(page.totalElements).toBe(0);

    // Asking for the warm-up's own scene gets the full-size image, not the warm-up frame from some cache.
    const res = await fetch(sb.api(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': sb.key },
      body: JSON.stringify(WARM_UP_REQUEST),
    });
    expect(res.status).toBe(200);
    const jpeg = Buffer.from(await res.arrayBuffer());
    expect(jpegInfo(jpeg)).toEqual({ baseline: true, width: 1280, height: 720 });
    expect(jpeg.equals(await renderAerialJpeg(WARM_UP_REQUEST))).toBe(true);
    expect(await sb.credits(sb.key)).toBe(999);
    expect(sb.requests()).toHaveLength(2);
  });

  it('warns and still starts when the warm-up fails', async () => {
    const broken = join(work, 'exits-at-once.mjs');
    writeFileSync(broken, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(3));\n");
    const warnings: string[] = [];
    sb = await startTestSandbox({ warmUp: true, renderThreads: 1, renderWorker: pathToFileURL(broken), onWarning: (message) => warnings.push(message) });
    expect(warnings).toEqual([expect.stringMatching(/^warming up the renderer failed, so the first request starts it: .*exit code 3/)]);
    const res = await fetch(sb.api(), { headers: { 'x-api-key': sb.key } });
    expect(res.status).toBe(200);
  });
});
