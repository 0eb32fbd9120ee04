// The history commands side by side with the simplest peers a user could
// write, in one run, on the Node running this script, on one stub server on
// 127.0.0.1 (history-server.mjs: pages of 1,000), runs alternated, medians:
//   - `list --all --json` over `listImages` records beside a bare `fetch` loop
//     that prints a JSON line a record (nothing checked);
//   - `export` of `exportImages` 1280×720 JPEGs (about 200 KB each), with its
//     report and with --no-report, beside a bare Node script that lists every
//     page and downloads 16 at a time into files;
//   - optionally (`paced`), the same export with every download waiting
//     `imageLatencyMs` (100 ms) before its first byte, as a storage host far
//     away makes it wait: the pace of a network rather than of loopback;
//   - optionally (`batch`), batch.mjs's batch of 2,000 rows at 128 against its
//     stub that waits 100 ms, beside its undici script (first request to exit).
// Every child runs with NODE_EXTRA_CA_CERTS unset, as users run it. The load
// average is recorded before and after: the figures are only as quiet as the
// machine was.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHistoryServer } from './history-server.mjs';

const INSTRUMENTED = fileURLToPath(new URL('./instrumented-cli.mjs', import.meta.url));
const KEY = 'bench-peers-key-0123456789';

/** The list loop a user would write: every page, a JSON line a record, each page written as stdout takes it. */
const FETCH_LOOP = `
const [base, key] = process.argv.slice(1);
const drained = () => new Promise((r) => process.stdout.once('drain', r));
for (let page = 0; ; page++) {
  const res = await fetch(base + '/api/external/v1/image-generation?page=' + page + '&size=1000&sort=createdAt,asc', { headers: { 'x-api-key': key } });
  const body = await res.json();
  let out = '';
  for (const record of body.content) out += JSON.stringify(record) + '\\n';
  if (out && !process.stdout.write(out)) await drained();
  if (body.content.length === 0 || page + 1 >= body.totalPages) break;
}
`;

/** The download script a user would write: list every page, then 16 downloads at a time, each into its file. */
const DOWNLOAD_SCRIPT = `
const { writeFile } = await import('node:fs/promises');
const { join } = await import('node:path');
const [base, key, dir] = process.argv.slice(1);
const records = [];
for (let page = 0; ; page++) {
  const res = await fetch(base + '/api/external/v1/image-generation?page=' + page + '&size=1000&sort=createdAt,asc', { headers: { 'x-api-key': key } });
  const body = await res.json();
  records.push(...body.content);
  if (body.content.length === 0 || page + 1 >= body.totalPages) break;
}
let next = 0;
const worker = async () => {
  while (next < records.length) {
    const record = records[next++];
    const res = await fetch(record.url);
    await writeFile(join(dir, record.id + '.jpg'), Buffer.from(await res.arrayBuffer()));
  }
};
await Promise.all(Array.from({ length: 16 }, worker));
await writeFile(join(dir, 'index.jsonl'), records.map((r) => JSON.stringify(r)).join('\\n') + '\\n');
`;

/**
 * The thumbnails alone, as sharp makes them with nothing else to do: every JPEG of a directory, as many at once as there
 * are cores, with the options src/report/thumbnails.ts gives (shrink-on-load, 320 × 180, quality 70), each into a file.
 * The floor under what `export` with its report can take on this machine.
 */
const THUMBNAILS_ALONE = `
const { availableParallelism } = await import('node:os');
const { mkdir, readdir } = await import('node:fs/promises');
const { join } = await import('node:path');
const [sharpUrl, dir] = process.argv.slice(1);
const { default: sharp } = await import(sharpUrl);
sharp.cache(false);
sharp.concurrency(1);
const files = (await readdir(dir)).filter((name) => name.endsWith('.jpg'));
const out = join(dir, 'thumbnails');
await mkdir(out);
let next = 0;
const worker = async () => {
  while (next < files.length) {
    const name = files[next++];
    await sharp(join(dir, name), { failOn: 'error', sequentialRead: true })
      .autoOrient()
      .resize(320, 180, { fit: 'inside', withoutEnlargement: true, fastShrinkOnLoad: true })
      .jpeg({ quality: 70, optimiseCoding: false })
      .toFile(join(out, name));
  }
};
await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, worker));
`;

/** Loaded into each peer: at its exit, its CPU time and peak RSS, as instrumented-cli.mjs records the CLI's. */
const PEER_STATS = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => { const c = process.cpuUsage(); writeFileSync(process.env.AERIAL_BENCH_STATS, JSON.stringify({ cpuUserMs: c.user / 1000, cpuSystemMs: c.system / 1000, maxRssMb: process.resourceUsage().maxRSS / 1024 })); });",
)}`;

function childEnv(extra) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Runs a child to its end; `onStdout` sees stdout as it comes. Resolves with its wall time and, when it records them, its stats. */
function run(args, env, { onStdout = () => {}, statsFile } = {}) {
  return new Promise((resolve, reject) => {
    const startedAt = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env: childEnv({ ...env, ...(statsFile ? { AERIAL_BENCH_STATS: statsFile } : {}) }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.on('data', onStdout);
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      if (code !== 0) return reject(new Error(`${args.slice(-6).join(' ')} exited ${code}: ${stderr.slice(-600)}`));
      const stats = statsFile ? JSON.parse(readFileSync(statsFile, 'utf8')) : undefined;
      resolve({ seconds, cpuSeconds: stats ? (stats.cpuUserMs + stats.cpuSystemMs) / 1000 : undefined, peakRssMb: stats ? Math.round(stats.maxRssMb) : undefined });
    });
  });
}

/** Counts records in a stream of JSON text by their ids (each record's first member). */
function recordCounter() {
  let count = 0;
  let carried = '';
  return {
    onStdout(chunk) {
      const text = carried + chunk.toString('latin1');
      let at = text.indexOf('{"id":"');
      let last = 0;
      while (at !== -1) {
        count++;
        last = at + 7;
        at = text.indexOf('{"id":"', last);
      }
      carried = text.slice(Math.max(last, text.length - 8));
    },
    count: () => count,
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A 1280×720 JPEG of about 200 KB: a gradient with some grain, as an aerial photo compresses. */
async function photoJpeg() {
  const { default: sharp } = await import('sharp');
  const width = 1280;
  const height = 720;
  const pixels = Buffer.alloc(width * height * 3);
  let seed = 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const grain = (seed >>> 24) % 28;
      const at = (y * width + x) * 3;
      pixels[at] = (x / 6 + grain) & 0xff;
      pixels[at + 1] = (y / 3 + grain) & 0xff;
      pixels[at + 2] = ((x + y) / 8 + grain) & 0xff;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
}

/**
 * `export` with its report and with --no-report beside the download script, each run against the same stub (its downloads
 * waiting `imageLatencyMs` before their first byte), each checked for every file and thumbnail.
 */
async function benchExport({ work, exportImages, runs, imageLatencyMs = 0 }) {
  const image = await photoJpeg();
  const server = await startHistoryServer({ count: exportImages, image, imageLatencyMs });
  const env = { AERIAL_CONFIG_DIR: join(work, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY };
  // Beside the loopback export, the thumbnails' floor: sharp alone over as many copies of the image. (With downloads
  // waiting on the network, the thumbnails hide behind them.)
  const times = { aerial: [], noReport: [], peer: [], ...(imageLatencyMs === 0 ? { thumbnailsAlone: [] } : {}) };
  const kinds = Object.keys(times);
  const images = join(work, 'images');
  if (times.thumbnailsAlone) {
    mkdirSync(images);
    for (let n = 0; n < exportImages; n++) writeFileSync(join(images, `${String(n).padStart(6, '0')}.jpg`), image);
  }
  try {
    for (let i = 0; i < runs; i++) {
      // Rotated, so no kind always runs first or last.
      for (let k = 0; k < kinds.length; k++) {
        const who = kinds[(i + k) % kinds.length];
        if (who === 'thumbnailsAlone') {
          times[who].push(await run(['--import', PEER_STATS, '--input-type=module', '-e', THUMBNAILS_ALONE, import.meta.resolve('sharp'), images], {}, { statsFile: join(work, 'thumbnails.json') }));
          if (readdirSync(join(images, 'thumbnails')).length !== exportImages) throw new Error('sharp alone made too few thumbnails');
          rmSync(join(images, 'thumbnails'), { recursive: true, force: true });
          continue;
        }
        const dir = join(work, `export-${who}-${i}`);
        server.reset();
        const args =
          who === 'peer'
            ? ['--import', PEER_STATS, '--input-type=module', '-e', `await (await import('node:fs/promises')).mkdir(${JSON.stringify(dir)}, { recursive: true });\n${DOWNLOAD_SCRIPT}`, server.url, KEY, dir]
            : [INSTRUMENTED, 'export', dir, '--concurrency', '16', '--progress-interval', '1h', ...(who === 'noReport' ? ['--no-report'] : [])];
        const figures = await run(args, env, { statsFile: join(work, 'export.json') });
        if (server.imageRequests() !== exportImages) throw new Error(`${who} downloaded ${server.imageRequests()} of ${exportImages}`);
        const files = readdirSync(dir);
        if (files.filter((name) => name.endsWith('.jpg')).length !== exportImages) throw new Error(`${who} left ${files.length} files`);
        if (who === 'aerial' && readdirSync(join(dir, 'index.thumbnails')).length !== exportImages) throw new Error('export made too few thumbnails');
        times[who].push(figures);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
  }
  const m = (who) => median(times[who].map((r) => r.seconds));
  return {
    ...(times.thumbnailsAlone ? { thumbnailsAloneSeconds: m('thumbnailsAlone'), thumbnailsAloneCpuSeconds: median(times.thumbnailsAlone.map((r) => r.cpuSeconds)) } : {}),
    images: exportImages,
    imageKb: Math.round(image.length / 1024),
    imageLatencyMs,
    aerialSeconds: m('aerial'),
    noReportSeconds: m('noReport'),
    peerSeconds: m('peer'),
    aerialCpuSeconds: median(times.aerial.map((r) => r.cpuSeconds)),
    noReportCpuSeconds: median(times.noReport.map((r) => r.cpuSeconds)),
    peerCpuSeconds: median(times.peer.map((r) => r.cpuSeconds)),
    aerialPeakRssMb: median(times.aerial.map((r) => r.peakRssMb)),
    ratio: m('aerial') / m('peer'),
    noReportRatio: m('noReport') / m('peer'),
    all: Object.fromEntries(kinds.map((who) => [who, times[who].map((r) => r.seconds)])),
  };
}

export async function benchPeers({ listImages = 200_000, exportImages = 1000, runs = 3, parts = ['list', 'export'], imageLatencyMs = 100 } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'aerial-bench-peers-'));
  const load = { before: loadavg().map((v) => Number(v.toFixed(2))) };
  const result = { node: process.version, runs, load };
  try {
    if (parts.includes('list')) {
      const server = await startHistoryServer({ count: listImages });
      const env = { AERIAL_CONFIG_DIR: join(work, 'config'), AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY };
      const aerial = [];
      const peer = [];
      try {
        for (let i = 0; i < runs; i++) {
          for (const who of i % 2 === 0 ? ['aerial', 'peer'] : ['peer', 'aerial']) {
            const counter = recordCounter();
            const figures =
              who === 'aerial'
                ? await run([INSTRUMENTED, 'list', '--all', '--json', '--sort', 'createdAt,asc'], env, { onStdout: counter.onStdout, statsFile: join(work, 'list.json') })
                : await run(['--import', PEER_STATS, '--input-type=module', '-e', FETCH_LOOP, server.url, KEY], env, { onStdout: counter.onStdout, statsFile: join(work, 'list.json') });
            if (counter.count() !== listImages) throw new Error(`${who} listed ${counter.count()} of ${listImages}`);
            (who === 'aerial' ? aerial : peer).push(figures);
          }
        }
      } finally {
        await server.close();
      }
      result.list = {
        images: listImages,
        aerialSeconds: median(aerial.map((r) => r.seconds)),
        aerialCpuSeconds: median(aerial.map((r) => r.cpuSeconds)),
        aerialPeakRssMb: median(aerial.map((r) => r.peakRssMb)),
        peerSeconds: median(peer.map((r) => r.seconds)),
        peerCpuSeconds: median(peer.map((r) => r.cpuSeconds)),
        all: { aerial: aerial.map((r) => r.seconds), peer: peer.map((r) => r.seconds) },
      };
      result.list.ratio = result.list.aerialSeconds / result.list.peerSeconds;
      result.list.cpuRatio = result.list.aerialCpuSeconds / result.list.peerCpuSeconds;
    }
    if (parts.includes('export')) result.export = await benchExport({ work, exportImages, runs });
    if (parts.includes('paced')) result.exportPaced = await benchExport({ work, exportImages, runs, imageLatencyMs });
    if (parts.includes('batch')) {
      const { benchBatch } = await import('./batch.mjs');
      const b = await benchBatch({ rows: 2000, concurrency: 128, runs, stubImage: await photoJpeg() });
      result.batch = { rows: b.rows, concurrency: b.concurrency, aerialRunSeconds: b.stubRunSeconds, undiciRunSeconds: b.stubBareRunSeconds, ratio: b.stubRunSeconds / b.stubBareRunSeconds };
    }
  } finally {
    load.after = loadavg().map((v) => Number(v.toFixed(2)));
    rmSync(work, { recursive: true, force: true });
  }
  return result;
}

// `node bench/peers.mjs [list] [export] [paced] [batch] [--runs N] [--list-images N] [--export-images N] [--image-latency MS]`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
  const parts = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
  const result = await benchPeers({
    runs: value('--runs', 3),
    listImages: value('--list-images', 200_000),
    exportImages: value('--export-images', 1000),
    imageLatencyMs: value('--image-latency', 100),
    parts: parts.length ? parts : ['list', 'export', 'batch'],
  });
  console.log(JSON.stringify(result, null, 2));
  if (args.includes('--write')) writeFileSync(new URL('./peers-results.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
}
