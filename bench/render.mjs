// Times the sandbox's procedural JPEG renderer at HD, FHD and UHD (median of 5).
//
//   node bench/render.mjs        prints a table and a JSON line {hd_ms, fhd_ms, uhd_ms}
//   import { benchRender } from './render.mjs'   for other bench scripts
//
// The renderer is TypeScript and Node 20 cannot run that directly, so it is
// bundled in memory with esbuild and loaded from a temporary file.
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
  const result = await build({
    entryPoints: [join(ROOT, 'src/sandbox/render.ts')],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    logLevel: 'warning',
  });
  const dir = mkdtempSync(join(tmpdir(), 'aerial-bench-'));
  const file = join(dir, 'render.mjs');
  writeFileSync(file, result.outputFiles[0].text);
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
    renderAerialJpeg(benchRequest(resolution, -1));
    renderAerialJpeg(benchRequest(resolution, -2));
    const times = [];
    const cpuTimes = [];
    let bytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      bytes = renderAerialJpeg(benchRequest(resolution, run)).length;
      times.push(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
    result[key] = Math.round(median(times));
    // CPU time as well: on a busy machine wall time mostly measures the neighbours.
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
