// Histories of millions in constant memory: each figure is the peak RSS (and
// the time) of one CLI process, run through instrumented-cli.mjs, which
// records its own peak RSS, against history-server.mjs, which makes every
// page when asked (no history held on either side).
//   - `list --all --json` over 1,000,000 images: every record is checked, in
//     order, against the server's derivation as the output streams past;
//   - `export` over `exportImages / 10` and `exportImages` images (a tenth of
//     full size by default, 10,000 and 100,000 with --full): whether its peak
//     RSS stays flat as the history grows tenfold.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyId, startHistoryServer } from './history-server.mjs';

const INSTRUMENTED = fileURLToPath(new URL('./instrumented-cli.mjs', import.meta.url));

/** Runs the CLI; `onStdout` sees stdout as it comes (nothing of it is kept here). */
function runCli(args, env, statsFile, onStdout = () => {}, nodeFlags = []) {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [...nodeFlags, INSTRUMENTED, ...args], { env: { ...env, AERIAL_BENCH_STATS: statsFile }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onStdout);
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`aerial ${args.join(' ')} exited ${code}: ${stderr.slice(-600)}`));
      resolve({ seconds: (Date.now() - startedAt) / 1000, stats: JSON.parse(readFileSync(statsFile, 'utf8')) });
    });
  });
}

/** list --all --json over `count` images: every id checked in order; returns its time and peak RSS. */
async function listAll(count, work) {
  const server = await startHistoryServer({ count });
  try {
    const env = { ...process.env, AERIAL_CONFIG_DIR: join(work, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'bench-history-key' };
    let carried = '';
    let seen = 0;
    let wrong = 0;
    const pattern = /\{"id":"([^"]+)"/g;
    const run = await runCli(['list', '--all', '--json', '--sort', 'createdAt,asc'], env, join(work, 'list-stats.json'), (chunk) => {
      const text = carried + chunk;
      pattern.lastIndex = 0;
      let consumed = 0;
      for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
        if (match[1] !== historyId(seen)) wrong++;
        seen++;
        consumed = pattern.lastIndex;
      }
      carried = text.slice(Math.max(consumed, text.length - 256));
    });
    if (seen !== count || wrong !== 0) throw new Error(`list --all --json gave ${seen} records, ${wrong} out of order, for ${count}`);
    if (!carried.endsWith(`"size":${count}}\n`)) throw new Error('list --all --json did not end its page object');
    return { images: count, seconds: run.seconds, peakRssMb: Math.round(run.stats.maxRssMb), requests: server.listRequests() };
  } finally {
    await server.close();
  }
}

/**
 * export over `count` images into a fresh directory: its time and peak RSS;
 * with `heldHeap`, also the largest JS heap it held (a full collection once a
 * second, which makes its peak RSS that of another run).
 */
async function exportAll(count, work, heldHeap = false) {
  const server = await startHistoryServer({ count });
  try {
    const dir = join(work, `export-${count}`);
    const env = { ...process.env, AERIAL_CONFIG_DIR: join(work, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'bench-history-key' };
    const flags = heldHeap ? ['--expose-gc'] : [];
    const run = await runCli(['export', dir, '--concurrency', '16', '--progress-interval', '1h'], env, join(work, `export-${count}-stats.json`), undefined, flags);
    if (server.imageRequests() !== count) throw new Error(`export downloaded ${server.imageRequests()} of ${count} images`);
    const held = heldHeap ? { heldHeapMb: Number(run.stats.maxHeldHeapMb.toFixed(1)) } : {};
    return { images: count, seconds: run.seconds, peakRssMb: Math.round(run.stats.maxRssMb), ...held };
  } finally {
    await server.close();
    rmSync(join(work, `export-${count}`), { recursive: true, force: true });
  }
}

export async function benchHistory({ full = false, listImages = 1_000_000, exportImages = full ? 100_000 : 10_000, parts = ['list', 'export'], heldHeap = false } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'aerial-bench-history-'));
  try {
    const list = parts.includes('list') ? await listAll(listImages, work) : undefined;
    const exports = parts.includes('export') ? [await exportAll(exportImages / 10, work, heldHeap), await exportAll(exportImages, work, heldHeap)] : undefined;
    return { list, exports };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
