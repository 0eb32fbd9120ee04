// Sandbox throughput under concurrency: N sync HD generations at concurrency C
// against `aerial sandbox --latency 100ms` in its own process, sent through one
// undici pool from this process. Ideal is N × 0.1 s / C (1.25 s for 200 at 16):
// whatever the sandbox adds on top of its injected latency is its own cost
// (state persistence, rendering, HTTP).
//
//   node bench/sandbox-throughput.mjs            same scene, then distinct scenes
//   import { benchSandboxThroughput } from './sandbox-throughput.mjs'
//
// "same" asks for one scene every time (rendered once, then served from the
// render cache: the figure is about persistence); "distinct" gives every
// request its own scene, so every request is rendered (bounded by CPU).
//
// `fsyncDelayMs` stands in for a slow or busy disk: the sandbox process is
// started with a preload that makes every fsync it does (FileHandle.sync, as
// used for images, state.json and directories) take that much longer. On a
// fast idle SSD an fsync costs about a millisecond and persistence hardly
// shows; on a shared machine under I/O load it costs tens.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { currentRenderWorker, projectScratchDir, referenceRenderWorker, REFERENCE_COMMIT, startSandboxWith } from './render-workers.mjs';
import { SCENE, sceneAt } from './scene.mjs';
import { median, startSandboxProcess } from './startup.mjs';

const API_PATH = '/api/external/v1/image-generation';

function scene(index, distinct) {
  return distinct ? sceneAt(index * 0.001) : SCENE;
}

/** A preload for the sandbox process: every FileHandle.sync() takes `delayMs` longer. */
function slowFsyncPreload(dir, delayMs) {
  const file = join(dir, 'slow-fsync.mjs');
  writeFileSync(
    file,
    `import { open } from 'node:fs/promises';
const handle = await open(${JSON.stringify(file)}, 'r');
const FileHandle = Object.getPrototypeOf(handle);
await handle.close();
const sync = FileHandle.sync;
FileHandle.sync = async function () {
  await sync.call(this);
  await new Promise((resolve) => setTimeout(resolve, ${Number(delayMs)}));
};
`,
  );
  return file;
}

/**
 * `renderWorker` (a URL) runs the sandbox with that render worker script,
 * through render-workers.mjs' harness, instead of `aerial sandbox`.
 * @param {{ requests?: number, concurrency?: number, latencyMs?: number, distinct?: boolean, fsyncDelayMs?: number, renderWorker?: URL }} options
 * @returns {Promise<{ requests: number, concurrency: number, seconds: number, idealSeconds: number, distinct: boolean, fsyncDelayMs: number }>}
 */
export async function benchSandboxThroughput({ requests = 200, concurrency = 16, latencyMs = 100, distinct = false, fsyncDelayMs = 0, renderWorker } = {}) {
  const work = renderWorker ? projectScratchDir('aerial-sandbox-bench-') : mkdtempSync(join(tmpdir(), 'aerial-sandbox-bench-'));
  const env = { ...process.env, AERIAL_CONFIG_DIR: join(work, 'config') };
  if (fsyncDelayMs > 0) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import=${slowFsyncPreload(work, fsyncDelayMs)}`.trim();
  const sandbox = renderWorker
    ? await startSandboxWith(renderWorker, { dir: work, dataDir: join(work, 'data'), latencyMs, credits: requests * 10 })
    : await startSandboxProcess(['--latency', `${latencyMs}ms`, '--data-dir', join(work, 'data'), '--credits', String(requests * 10)], env);
  const agent = new Agent({ connections: concurrency });
  try {
    const send = async (index) => {
      const res = await request(`${sandbox.url}${API_PATH}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'x-api-key': sandbox.key },
        body: JSON.stringify(scene(index, distinct)),
      });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    };
    // One request first, so the connection pool and the sandbox's lazy parts are warm.
    await send(requests);
    let next = 0;
    const started = process.hrtime.bigint();
    const worker = async () => {
      while (next < requests) await send(next++);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { requests, concurrency, seconds, idealSeconds: (requests * latencyMs) / 1000 / concurrency, distinct, fsyncDelayMs };
  } finally {
    await agent.close();
    await sandbox.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Distinct-scene throughput of today's renderer against the reference
 * (REFERENCE_COMMIT's), in alternating runs of this process, each on a fresh
 * sandbox behind the same server: renders per second, medians, and their ratio.
 */
export async function benchRendererThroughput({ rounds = 3, requests = 200 } = {}) {
  const work = projectScratchDir('aerial-renderer-bench-');
  try {
    const workers = { reference: await referenceRenderWorker(work), current: currentRenderWorker() };
    const perSecond = { reference: [], current: [] };
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? ['current', 'reference'] : ['reference', 'current']) {
        const result = await benchSandboxThroughput({ requests, distinct: true, renderWorker: workers[name] });
        perSecond[name].push(result.requests / result.seconds);
      }
    }
    const reference = median(perSecond.reference);
    const current = median(perSecond.current);
    return { referenceCommit: REFERENCE_COMMIT, requests, rounds, perSecond, reference, current, ratio: current / reference };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === 'renderers') {
    const result = await benchRendererThroughput({ rounds: Number(process.argv[3] ?? 3) });
    process.stdout.write(
      `distinct HD scenes: ${result.current.toFixed(1)}/s today, ${result.reference.toFixed(1)}/s with ${result.referenceCommit}'s renderer: ${result.ratio.toFixed(2)}×\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  }
  const cases = [
    { distinct: false },
    { distinct: false, fsyncDelayMs: 10 },
    { distinct: true },
  ];
  for (const options of cases) {
    const result = await benchSandboxThroughput(options);
    const label = `${result.distinct ? 'distinct scenes' : 'same scene'}${result.fsyncDelayMs ? `, fsync +${result.fsyncDelayMs} ms` : ''}`;
    process.stdout.write(
      `${label.padEnd(28)}: ${result.requests} requests at concurrency ${result.concurrency} in ${result.seconds.toFixed(2)} s ` +
        `(ideal ${result.idealSeconds.toFixed(2)} s, ${(result.seconds / result.idealSeconds).toFixed(2)}×)\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
}
