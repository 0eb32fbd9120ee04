// Batches far larger than a demo, in constant memory: each figure is the peak
// RSS (or the time) of one `aerial batch` process, run through
// instrumented-cli.mjs, which records its own peak RSS and CPU time.
//   - a dry run over `dryRows` rows: every row checked and planned, the plan printed;
//   - a run of `runRows` rows at --concurrency 64 against a server that answers
//     at once (instant-server.mjs): peak RSS and rows per second from the
//     first request to the exit;
//   - the same command again after one row is appended: the run reads its
//     manifest of `runRows` rows (two lines each), decides every row, and
//     sends one request; timed from the process's start to that request.
// The full sizes (1,000,000 / 200,000) take a few minutes: `npm run bench --
// scale --full`. The default is a tenth of that.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInstantServer } from './instant-server.mjs';

const INSTRUMENTED = fileURLToPath(new URL('./instrumented-cli.mjs', import.meta.url));

/** A CSV of `rows` distinct places. */
function writeRows(path, rows, from = 0) {
  const lines = [];
  for (let i = from; i < from + rows; i++) lines.push(`r${i + 1},${((i % 17_000) / 100 - 85).toFixed(2)},${((Math.floor(i / 17_000) % 36_000) / 100 - 180).toFixed(2)}`);
  if (from === 0) writeFileSync(path, `id,lat,lng\n${lines.join('\n')}\n`);
  else appendFileSync(path, `${lines.join('\n')}\n`);
}

function runCli(args, env, cwd, statsFile) {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [INSTRUMENTED, ...args], { env: { ...env, AERIAL_BENCH_STATS: statsFile }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdoutBytes = 0;
    let head = '';
    let tail = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdoutBytes += chunk.length;
      if (head.length < 512) head += chunk.toString().slice(0, 512);
      tail = (tail + chunk).slice(-4096);
    });
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) => {
      const exitedAt = Date.now();
      if (code !== 0) return reject(new Error(`aerial ${args.join(' ')} exited ${code}: ${stderr.slice(-600)}`));
      resolve({ startedAt, exitedAt, stdoutBytes, head, tail, stderr, stats: JSON.parse(readFileSync(statsFile, 'utf8')) });
    });
  });
}

export async function benchBatchScale({ full = false } = {}) {
  const dryRows = full ? 1_000_000 : 100_000;
  const runRows = full ? 200_000 : 20_000;
  const concurrency = 64;
  const work = mkdtempSync(join(tmpdir(), 'aerial-bench-scale-'));
  const server = await startInstantServer();
  const env = { ...process.env, AERIAL_CONFIG_DIR: join(work, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'bench-instant-key' };
  try {
    const dryCsv = join(work, 'dry.csv');
    writeRows(dryCsv, dryRows);
    const dry = await runCli(['batch', dryCsv, '--dry-run', '--json', '--output-template', 'dry/{id}.jpg'], env, work, join(work, 'dry-stats.json'));
    if (!dry.tail.trimEnd().endsWith(']}')) throw new Error('the dry run did not print its whole plan');

    const csv = join(work, 'rows.csv');
    writeRows(csv, runRows);
    const args = ['batch', csv, '--concurrency', String(concurrency), '--output-template', 'out/{id}.jpg', '--json', '--progress-interval', '1h'];
    const run = await runCli(args, env, work, join(work, 'run-stats.json'));
    const counts = /^\{"total":(\d+),"succeeded":(\d+)/.exec(run.head);
    if (!counts || Number(counts[2]) !== runRows || !run.tail.trimEnd().endsWith(']}')) throw new Error(`the run's summary is not whole: ${run.head.slice(0, 100)}`);
    const written = readdirSync(join(work, 'out')).filter((name) => name.endsWith('.jpg')).length;
    if (server.answered() !== runRows || written !== runRows) throw new Error(`expected ${runRows} images, got ${server.answered()} answers and ${written} files`);
    const runSeconds = (run.exitedAt - server.firstArrival()) / 1000;

    writeRows(csv, 1, runRows);
    server.reset();
    const manifestLines = readFileSync(join(work, 'out', 'aerial-batch-manifest.jsonl'), 'utf8').split('\n').length - 1;
    const resume = await runCli(args, env, work, join(work, 'resume-stats.json'));
    if (server.answered() !== 1) throw new Error(`the resumed run sent ${server.answered()} requests, not 1`);
    return {
      dryRows,
      dryPeakRssMb: Math.round(dry.stats.maxRssMb),
      drySeconds: (dry.exitedAt - dry.startedAt) / 1000,
      dryOutputMb: Math.round(dry.stdoutBytes / 2 ** 20),
      runRows,
      concurrency,
      runPeakRssMb: Math.round(run.stats.maxRssMb),
      runSeconds,
      rowsPerSecond: Math.round(runRows / runSeconds),
      cpuMsPerRow: (run.stats.cpuUserMs + run.stats.cpuSystemMs) / runRows,
      manifestLines,
      manifestMb: Math.round(statSync(join(work, 'out', 'aerial-batch-manifest.jsonl')).size / 2 ** 20),
      resumeToFirstRequestSeconds: (server.firstArrival() - resume.startedAt) / 1000,
      resumePeakRssMb: Math.round(resume.stats.maxRssMb),
    };
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
}
