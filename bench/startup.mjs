// Startup and streaming-memory figures, measured side by side with a bare
// `node -e 0` in the same run (medians), so the ratios mean the same on any machine.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'aerial.js');

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timeOnce(node, args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(node, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/** Starts `aerial sandbox --port 0 --json` and resolves with its URL and key once it prints them. */
export function startSandboxProcess(extraArgs = [], env = process.env) {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--json', ...extraArgs], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`sandbox exited early (${code})`)));
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const line = buffered.split('\n').find((l) => l.trim().startsWith('{'));
      if (line) {
        const info = JSON.parse(line);
        resolve({
          url: info.url,
          key: info.key,
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGINT');
            }),
        });
      }
    });
  });
}

/** A server that answers every request with a JPEG of `bytes` length, streamed in 64 KiB chunks. */
function startBigJpegServer(bytes) {
  const chunk = Buffer.alloc(64 * 1024, 0x55);
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(bytes) });
    let left = bytes;
    const head = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
    res.write(head);
    left -= head.length + 2;
    const pump = () => {
      while (left > 0) {
        const piece = chunk.subarray(0, Math.min(chunk.length, left));
        left -= piece.length;
        if (!res.write(piece)) return res.once('drain', pump);
      }
      res.end(Buffer.from([0xff, 0xd9]));
    };
    pump();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Start-up, as users run it: without NODE_EXTRA_CA_CERTS, which makes every Node
 * start read and parse a CA bundle (about 2.6× slower here; few users set it).
 * When this machine sets it, the same cases are also measured with it, in the
 * same interleaved runs, so both figures can be told apart.
 * `against` names other builds (a directory holding bin/ and dist/, such as a
 * copy of the previous release) whose --version, --help and list --json are
 * measured in the same interleaved runs, without the variable: a change's
 * effect on start-up, told apart from the machine's noise.
 * `node` is the Node binary every case runs on, the bare `node -e 0` included
 * (a Node line from scripts/node-lines.mjs, say); the sandbox runs on this one.
 */
export async function benchStartup({ runs = 15, against = [], node = process.execPath } = {}) {
  const configDir = mkdtempSync(join(tmpdir(), 'aerial-bench-'));
  const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...withoutCa } = process.env;
  const clean = { ...withoutCa, AERIAL_CONFIG_DIR: configDir, NO_COLOR: '1' };
  const sandbox = await startSandboxProcess(['--data-dir', join(configDir, 'sandbox')], clean);
  try {
    // Something to list, so the list run parses a real page.
    for (let i = 0; i < 5; i++) {
      spawnSync(process.execPath, [BIN, 'generate', '--base-url', sandbox.url, '--lat', String(10 + i), '--lng', '20', '--resolution', 'HD', '-o', join(configDir, `seed-${i}.jpg`)], {
        env: { ...clean, AERIAL_API_KEY: sandbox.key },
      });
    }
    const variants = { clean };
    if (extraCaCerts) variants.withExtraCaCerts = { ...clean, NODE_EXTRA_CA_CERTS: extraCaCerts };
    const cases = {};
    for (const [variant, env] of Object.entries(variants)) {
      const listEnv = { ...env, AERIAL_API_KEY: sandbox.key, AERIAL_BASE_URL: sandbox.url };
      cases[`${variant}/node`] = [['-e', '0'], env];
      cases[`${variant}/version`] = [[BIN, '--version'], env];
      cases[`${variant}/help`] = [[BIN, '--help'], env];
      cases[`${variant}/listJson`] = [[BIN, 'list', '--json'], listEnv];
    }
    const listEnv = { ...clean, AERIAL_API_KEY: sandbox.key, AERIAL_BASE_URL: sandbox.url };
    for (const [index, dir] of against.entries()) {
      const bin = join(dir, 'bin', 'aerial.js');
      cases[`against${index}/version`] = [[bin, '--version'], clean];
      cases[`against${index}/help`] = [[bin, '--help'], clean];
      cases[`against${index}/listJson`] = [[bin, 'list', '--json'], listEnv];
    }
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    // Warms the file cache, and fills Node's compile cache as a user's first run does.
    for (const [args, e] of Object.values(cases)) timeOnce(node, args, e);
    // Interleaved, so machine noise falls on every case alike.
    for (let i = 0; i < runs; i++) {
      for (const [name, [args, e]] of Object.entries(cases)) samples[name].push(timeOnce(node, args, e));
    }
    const figures = (variant) => {
      const m = (name) => median(samples[`${variant}/${name}`]);
      return {
        nodeMs: m('node'),
        versionMs: m('version'),
        helpMs: m('help'),
        listJsonMs: m('listJson'),
        versionRatio: m('version') / m('node'),
        helpRatio: m('help') / m('node'),
        listJsonRatio: m('listJson') / m('node'),
      };
    };
    const nodeMs = median(samples['clean/node']);
    return {
      runs,
      node: spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim(),
      clean: figures('clean'),
      withExtraCaCerts: extraCaCerts ? { file: extraCaCerts, ...figures('withExtraCaCerts') } : null,
      against: against.map((dir, index) => {
        const m = (name) => median(samples[`against${index}/${name}`]);
        return { dir, versionRatio: m('version') / nodeMs, helpRatio: m('help') / nodeMs, listJsonRatio: m('listJson') / nodeMs, versionMs: m('version'), helpMs: m('help'), listJsonMs: m('listJson') };
      }),
    };
  } finally {
    await sandbox.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}

export async function benchStreamingMemory({ megabytes = 50 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-bench-mem-'));
  const server = await startBigJpegServer(megabytes * 1024 * 1024);
  const { port } = server.address();
  const statsFile = join(dir, 'stats.json');
  try {
    // Asynchronous: the server answering the download lives in this process.
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bench', 'instrumented-cli.mjs'), 'generate', '--lat', '1', '--lng', '2', '-o', join(dir, 'big.jpg')],
      {
        env: { ...process.env, AERIAL_CONFIG_DIR: dir, AERIAL_API_KEY: 'bench-key-0000', AERIAL_BASE_URL: `http://127.0.0.1:${port}`, AERIAL_BENCH_STATS: statsFile },
      },
    );
    const stats = JSON.parse(readFileSync(statsFile, 'utf8'));
    return { responseMb: megabytes, peakRssMb: Math.round(stats.maxRssMb * 10) / 10 };
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await benchStartup());
  console.log(await benchStreamingMemory());
}
