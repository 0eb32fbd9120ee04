// Batch throughput and client CPU: `aerial batch` with 200 rows at
// concurrency 16 against a sandbox (its own process) answering every request
// after 100 ms. Ideal is 200 × 0.1 s / 16 = 1.25 s. Two times are measured, as
// medians of several runs, each against a fresh sandbox:
//   - the batch's run: from the first request reaching the server (its
//     request log) to the CLI process's exit, i.e. everything the ideal
//     models plus the last files, the manifest and exit. Process start-up is
//     not in it: the start-up figures measure that.
//   - the CLI process's whole life, start-up and file parsing included.
//
// All rows ask for the same scene (each still a separate request, image and
// file), so the sandbox renders it once and then answers from its cache: the
// figure is the client's, not the sandbox renderer's. CPU time is the CLI
// process's own user + system time, as recorded by instrumented-cli.mjs.
//
// The sandbox has a capacity of its own (it persists every generation), so
// the same 200 requests are also sent by a bare undici loop at the same
// concurrency against a fresh sandbox: `baselineSeconds`. The CLI's own cost
// is `seconds / baselineSeconds`, whatever the sandbox and machine manage.
// And the CLI is run once more against a stub server that does nothing but
// wait 100 ms and send a fixed JPEG (`stubSeconds`): the client's ratio to the
// ideal when the server is not the bottleneck.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SCENE } from './scene.mjs';
import { startSandboxProcess } from './startup.mjs';

const INSTRUMENTED = fileURLToPath(new URL('./instrumented-cli.mjs', import.meta.url));
const UNDICI = pathToFileURL(fileURLToPath(new URL('../node_modules/undici/index.js', import.meta.url))).href;

/** The least any client could do: the same requests through one undici pool, each image written to its file as it came. */
const BARE_CLIENT = `
import { Agent, request } from ${JSON.stringify(UNDICI)};
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
const [url, key, rows, concurrency, dir] = [process.env.URL, process.env.KEY, Number(process.env.ROWS), Number(process.env.CONCURRENCY), process.env.DIR];
const agent = new Agent({ connections: concurrency });
const body = process.env.BODY;
let next = 0;
async function worker() {
  while (next < rows) {
    const row = ++next;
    const res = await request(url + '/api/external/v1/image-generation', { method: 'POST', body, dispatcher: agent, headers: { 'content-type': 'application/json', 'x-api-key': key } });
    const image = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new Error('HTTP ' + res.statusCode);
    await writeFile(join(dir, 'r' + row + '.jpg'), image);
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
await agent.close();
`;

function runBare(sandbox, rows, concurrency, dir) {
  mkdirSync(dir, { recursive: true });
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_CLIENT], {
      env: { ...process.env, URL: sandbox.url, KEY: sandbox.key, ROWS: String(rows), CONCURRENCY: String(concurrency), BODY: JSON.stringify(SCENE), DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) =>
      code === 0
        ? resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, exitedAt: Date.now() })
        : reject(new Error(`bare client failed: ${stderr.slice(-300)}`)),
    );
  });
}

/** Answers every generation after `latencyMs` with the same JPEG: a server with no cost of its own. */
function startStubServer(jpeg, latencyMs) {
  const arrivals = [];
  const server = createServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(jpeg.length) });
        res.end(jpeg);
      }, latencyMs);
    });
  });
  server.firstArrival = () => Math.min(...arrivals.splice(0));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** When the first request of a run reached the sandbox (epoch ms), from its request log. */
async function firstArrival(sandbox) {
  const entries = await (await fetch(`${sandbox.url}/__sandbox/requests`)).json();
  const list = Array.isArray(entries) ? entries : entries.requests;
  return Math.min(...list.map((entry) => Date.parse(entry.time)));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];


/**
 * A fresh sandbox whose render cache already holds the rows' scene: one
 * generation, not saved, before the run, and the request log emptied after it.
 * What is timed is the client against a service that answers in `latencyMs`,
 * not the sandbox drawing its first picture (an HD render takes longer than
 * the latency on this machine; the render figures measure that).
 */
async function withSandbox(work, name, latencyMs, credits, fn) {
  const sandbox = await startSandboxProcess(['--latency', `${latencyMs}ms`, '--data-dir', join(work, name), '--credits', String(credits)], {
    ...process.env,
    AERIAL_CONFIG_DIR: join(work, 'config'),
  });
  try {
    const primed = await fetch(`${sandbox.url}/api/external/v1/image-generation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': sandbox.key },
      body: JSON.stringify({ ...SCENE, saveImage: false }),
    });
    await primed.arrayBuffer();
    if (primed.status !== 200) throw new Error(`priming the sandbox failed: HTTP ${primed.status}`);
    await fetch(`${sandbox.url}/__sandbox/requests`, { method: 'DELETE' });
    return await fn(sandbox);
  } finally {
    await sandbox.stop();
  }
}

function runTimed(args, env, cwd) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [INSTRUMENTED, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) reject(new Error(`aerial ${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`));
      else resolve({ seconds, exitedAt: Date.now(), stdout, stderr });
    });
  });
}

/**
 * With `stubImage` (a JPEG), only the runs against the stub that waits: aerial batch and the bare
 * undici script, each answered with that image (the sandbox's runs render every row: minutes at 2,000).
 */
export async function benchBatch({ rows = 200, concurrency = 16, latencyMs = 100, runs = 3, stubImage } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'aerial-bench-batch-'));
  const configDir = join(work, 'config');
  try {
    const csv = join(work, 'rows.csv');
    writeFileSync(csv, `id,lat,lng\n${Array.from({ length: rows }, (_, i) => `r${i + 1},${SCENE.coordinates.lat},${SCENE.coordinates.lng}`).join('\n')}\n`);
    const cliRuns = [];
    for (let run = 0; run < (stubImage ? 0 : runs); run++) {
      const statsFile = join(work, `stats-${run}.json`);
      const out = `out-${run}`;
      const result = await withSandbox(work, `sandbox-cli-${run}`, latencyMs, rows * 10, async (sandbox) => {
        const env = { ...process.env, AERIAL_CONFIG_DIR: configDir, AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, AERIAL_BENCH_STATS: statsFile };
        const args = ['batch', csv, '--concurrency', String(concurrency), '--resolution', 'HD', '--output-template', `${out}/{id}.jpg`, '--manifest', `${out}/manifest.jsonl`, '--json'];
        const timed = await runTimed(args, env, work);
        return { ...timed, runSeconds: (timed.exitedAt - (await firstArrival(sandbox))) / 1000 };
      });
      const summary = JSON.parse(result.stdout);
      const written = readdirSync(join(work, out)).filter((name) => name.endsWith('.jpg')).length;
      if (summary.succeeded !== rows || written !== rows) throw new Error(`expected ${rows} images, got ${summary.succeeded} rows done and ${written} files`);
      const stats = JSON.parse(readFileSync(statsFile, 'utf8'));
      cliRuns.push({ seconds: result.seconds, runSeconds: result.runSeconds, cpuMs: stats.cpuUserMs + stats.cpuSystemMs, maxRssMb: stats.maxRssMb });
    }
    const seconds = median(cliRuns.map((r) => r.seconds));
    const runSeconds = median(cliRuns.map((r) => r.runSeconds));
    const cpuMs = median(cliRuns.map((r) => r.cpuMs));
    const bareRuns = await sequence(stubImage ? 0 : runs, (run) =>
      withSandbox(work, `sandbox-bare-${run}`, latencyMs, rows * 10, async (sandbox) => {
        const bare = await runBare(sandbox, rows, concurrency, join(work, `bare-out-${run}`));
        return { seconds: bare.seconds, runSeconds: (bare.exitedAt - (await firstArrival(sandbox))) / 1000 };
      }),
    );
    const baselineSeconds = median(bareRuns.map((r) => r.seconds));
    const baselineRunSeconds = median(bareRuns.map((r) => r.runSeconds));

    const stub = await startStubServer(stubImage ?? readFileSync(join(work, 'out-0', 'r1.jpg')), latencyMs);
    let stubSeconds;
    let stubRunSeconds;
    let stubBareSeconds;
    let stubBareRunSeconds;
    try {
      const env = { ...process.env, AERIAL_CONFIG_DIR: configDir, AERIAL_BASE_URL: `http://127.0.0.1:${stub.address().port}`, AERIAL_API_KEY: 'bench-stub-key', AERIAL_BENCH_STATS: '' };
      const aerialRun = async (run) => {
        const args = ['batch', csv, '--concurrency', String(concurrency), '--resolution', 'HD', '--output-template', `stub-out-${run}/{id}.jpg`, '--manifest', `stub-out-${run}/manifest.jsonl`, '--json'];
        const timed = await runTimed(args, env, work);
        const written = readdirSync(join(work, `stub-out-${run}`)).filter((name) => name.endsWith('.jpg')).length;
        if (written !== rows) throw new Error(`expected ${rows} images against the stub, got ${written} files`);
        return { seconds: timed.seconds, runSeconds: (timed.exitedAt - stub.firstArrival()) / 1000 };
      };
      // The floor on this machine: the least any client does, against the same do-nothing server.
      const bareRun = async (run) => {
        const bare = await runBare({ url: `http://127.0.0.1:${stub.address().port}`, key: 'bench-stub-key' }, rows, concurrency, join(work, `stub-bare-out-${run}`));
        const written = readdirSync(join(work, `stub-bare-out-${run}`)).length;
        if (written !== rows) throw new Error(`expected ${rows} images from the undici script, got ${written} files`);
        return { seconds: bare.seconds, runSeconds: (bare.exitedAt - stub.firstArrival()) / 1000 };
      };
      // Alternated, so neither side always follows the other's writes still being flushed to disk.
      const stubRuns = [];
      const stubBareRuns = [];
      for (let run = 0; run < runs; run++) {
        stubRuns.push(await aerialRun(run));
        stubBareRuns.push(await bareRun(run));
      }
      stubSeconds = median(stubRuns.map((r) => r.seconds));
      stubRunSeconds = median(stubRuns.map((r) => r.runSeconds));
      stubBareSeconds = median(stubBareRuns.map((r) => r.seconds));
      stubBareRunSeconds = median(stubBareRuns.map((r) => r.runSeconds));
    } finally {
      await new Promise((done) => stub.close(done));
    }
    const idealSeconds = (rows * latencyMs) / 1000 / concurrency;
    return {
      rows,
      concurrency,
      latencyMs,
      runs,
      runSeconds,
      runRatio: runSeconds / idealSeconds,
      seconds,
      idealSeconds,
      ratio: seconds / idealSeconds,
      cpuMsPerRow: cpuMs / rows,
      cpuMs,
      maxRssMb: median(cliRuns.map((r) => r.maxRssMb)),
      cliRuns,
      baselineSeconds,
      baselineRatio: baselineSeconds / idealSeconds,
      baselineRunSeconds,
      baselineRunRatio: baselineRunSeconds / idealSeconds,
      overheadRatio: seconds / baselineSeconds,
      stubSeconds,
      stubRatio: stubSeconds / idealSeconds,
      stubRunSeconds,
      stubRunRatio: stubRunSeconds / idealSeconds,
      stubBareSeconds,
      stubBareRatio: stubBareSeconds / idealSeconds,
      stubBareRunSeconds,
      stubBareRunRatio: stubBareRunSeconds / idealSeconds,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `count` runs of `fn`, one after the other (never side by side: they would share the two cores). */
async function sequence(count, fn) {
  const results = [];
  for (let run = 0; run < count; run++) results.push(await fn(run));
  return results;
}

if (process.argv[1] && process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await benchBatch());
}
