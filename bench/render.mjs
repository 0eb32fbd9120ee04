// Times the sandbox's JPEG renderer at HD, FHD and UHD (median of 5), painting
// and encoding, in this thread.
//
//   node bench/render.mjs        prints a table and a JSON line {hd_ms, fhd_ms, uhd_ms}
//   import { benchRender } from './render.mjs'   for other bench scripts
//
// The renderer is TypeScript and Node 20 cannot run that directly, so it is
// bundled with esbuild into a scratch folder inside the checkout, where it
// finds sharp in node_modules and the world data in dist/.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { projectScratchDir } from './render-workers.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 5;
const RESOLUTIONS = [
  ['HD', 'hd_ms'],
  ['FHD', 'fhd_ms'],
  ['UHD', 'uhd_ms'],
];

/** A busy scene: town, fields and water, cloud layer, oblique view with sky. */
function benchRequest(resolution, run) {
  return {
    coordinates: { lat: 48.8566, lng: 2.3522 + run * 0.01 },
    resolution,
    zoom: 'Medium',
    bearing: 'NorthEast',
    angle: 'Medium',
    weather: 'Cloudy',
    daytime: 'Day',
    aspectRatio: 'Landscape',
    epoch: 'Nowadays',
    tags: ['bench'],
  };
}

async function loadRenderer() {
  const dir = projectScratchDir('aerial-bench-render-');
  const file = join(dir, 'render.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/sandbox/render/aerial-image.ts')],
    absWorkingDir: ROOT,
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['sharp'],
    logLevel: 'warning',
  });
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Renders each resolution twice to warm the JIT, then RUNS times (each a different
 * place, so no cache can help) and returns median milliseconds per resolution.
 * `details` (optional) receives per-resolution sample times, median CPU time and JPEG size.
 */
export async function benchRender(details = {}) {
  const { renderAerialJpeg } = await loadRenderer();
  const result = {};
  for (const [resolution, key] of RESOLUTIONS) {
    // Two warm-up renders let the JIT settle before timing.
    await renderAerialJpeg(benchRequest(resolution, -1));
    await renderAerialJpeg(benchRequest(resolution, -2));
    const times = [];
    const cpuTimes = [];
    let bytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      bytes = (await renderAerialJpeg(benchRequest(resolution, run))).length;
      times.push(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
    result[key] = Math.round(median(times));
    // CPU time as well (of every thread: libvips encodes on its own): on a busy machine wall time mostly measures the neighbours.
    details[resolution] = { times: times.map((t) => Math.round(t)), cpuMs: Math.round(median(cpuTimes)), bytes };
  }
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const details = {};
  const result = await benchRender(details);
  console.log('resolution  median ms  cpu ms  runs (ms)                      bytes');
  for (const [resolution, key] of RESOLUTIONS) {
    const { times, cpuMs, bytes } = details[resolution];
    const columns = [resolution.padEnd(10), String(result[key]).padStart(9), String(cpuMs).padStart(6), times.join(', ').padEnd(30)];
    console.log(`${columns.join('  ')} ${bytes}`);
  }
  console.log(JSON.stringify(result));
}
