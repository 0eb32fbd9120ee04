// How long the HTML report takes to build for 1,000 images: the first time
// (every thumbnail made by sharp) and again (every thumbnail reused), in
// process, through src/report/ bundled in memory. The images are ten sandbox
// HD renders, each linked a hundred times under its own name, so that every
// one is a file of its own to make a thumbnail of. Then a page of 5,000
// images: its size, and, where Debian's chromium is installed, how long it
// takes to open, to filter and to scroll.
//
//   node bench/report.mjs
import { build } from 'esbuild';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Bundles TypeScript modules into one ES module beside this script (so `sharp` resolves from the project) and imports it. */
async function loadModules(entries) {
  const result = await build({
    stdin: { contents: entries.map((path, i) => `export * as m${i} from ${JSON.stringify(join(ROOT, path))};`).join('\n'), resolveDir: ROOT, loader: 'ts' },
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['sharp'],
    write: false,
    logLevel: 'warning',
  });
  const file = join(ROOT, 'bench', `.report-bench-${process.pid}.mjs`);
  writeFileSync(file, result.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(file, { force: true });
  }
}

const TAGS = ['coast', 'city', 'harbour', 'field', 'bridge', 'river', 'airport', 'forest'];
const RESOLUTIONS = ['HD', 'FHD', 'UHD'];

function images(files, count) {
  return Array.from({ length: count }, (_, i) => ({
    row: i + 1,
    lat: ((i * 37) % 170) - 85 + (i % 7) * 0.1,
    lng: ((i * 53) % 360) - 180 + (i % 11) * 0.1,
    file: files[i % files.length],
    scene: { resolution: RESOLUTIONS[i % 3], zoom: 'Medium', bearing: 'North', angle: 'High', weather: 'Sunny', daytime: 'Day', aspectRatio: 'Landscape', epoch: 'Nowadays' },
    tags: [TAGS[i % TAGS.length], TAGS[(i * 3 + 1) % TAGS.length]],
    status: i % 50 === 7 ? 'failed' : 'done',
    error: i % 50 === 7 ? 'ErrorGeneratingImage — the sandbox failed this row on purpose' : undefined,
    createdAt: new Date(Date.UTC(2030, 0, 1) + i * 60_000).toISOString(),
  }));
}

async function openInChromium(file) {
  const { existsSync } = await import('node:fs');
  if (!existsSync('/usr/bin/chromium')) return undefined;
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'aerial-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'],
    viewport: { width: 1280, height: 900 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const started = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const loadMs = performance.now() - started;
    // A filter, to the next frame painted with it (the script, the layout it causes, the paint).
    const filterMs = await page.evaluate(async () => {
      const select = document.getElementById('f-tag');
      const began = performance.now();
      select.value = 'harbour';
      select.dispatchEvent(new Event('change'));
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      return performance.now() - began;
    });
    // A scroll through the first 60 screens, a screen at a time: the median time to the next frame.
    const scrollFrameMs = await page.evaluate(async () => {
      const select = document.getElementById('f-tag');
      select.value = '';
      select.dispatchEvent(new Event('change'));
      const frames = [];
      for (let step = 1; step <= 60; step++) {
        const began = performance.now();
        window.scrollTo(0, step * innerHeight);
        await new Promise((resolve) => requestAnimationFrame(resolve));
        frames.push(performance.now() - began);
      }
      frames.sort((a, b) => a - b);
      return frames[frames.length >> 1];
    });
    return { loadMs, filterMs, scrollFrameMs };
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

export async function benchReport({ count = 1000, pageCount = 5000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-bench-report-'));
  try {
    const { m0: renderer, m1: report } = await loadModules(['src/sandbox/render/aerial-image.ts', 'src/report/report.ts']);
    const sources = join(dir, 'sources');
    const out = join(dir, 'out');
    mkdirSync(sources);
    mkdirSync(out);
    const files = [];
    for (let i = 0; i < 10; i++) {
      const source = join(sources, `render-${i}.jpg`);
      writeFileSync(source, await renderer.renderAerialJpeg({ coordinates: { lat: 10 + i, lng: 20 + i * 7 }, resolution: 'HD', zoom: 'Medium', bearing: 'North', angle: 'High', weather: i % 2 ? 'Cloudy' : 'Sunny', daytime: 'Day', aspectRatio: 'Landscape', epoch: 'Nowadays', tags: [] }));
      for (let copy = 0; copy < count / 10; copy++) {
        const file = join(out, `${String(copy * 10 + i).padStart(4, '0')}.jpg`);
        linkSync(source, file);
        files.push(file);
      }
    }
    files.sort();
    const list = images(files, count);
    const path = join(out, 'report.html');
    const options = { title: 'bench', subtitle: `${count} images` };
    let started = performance.now();
    const first = await report.writeReport(list, path, options);
    const coldMs = performance.now() - started;
    started = performance.now();
    const second = await report.writeReport(list, path, options);
    const warmMs = performance.now() - started;
    const thumbnailBytes = readdirSync(first.thumbnails.dir).reduce((sum, name) => sum + statSync(join(first.thumbnails.dir, name)).size, 0);

    const bigPath = join(out, 'big.html');
    started = performance.now();
    await report.writeReport(images(files, pageCount), bigPath, options);
    const bigMs = performance.now() - started;
    const browser = await openInChromium(bigPath);
    return {
      count,
      coldMs,
      warmMs,
      made: first.thumbnails.made,
      reused: second.thumbnails.reused,
      htmlKb: statSync(path).size / 1024,
      thumbnailKb: thumbnailBytes / 1024 / first.thumbnails.made,
      pageCount,
      pageBuildMs: bigMs,
      pageMb: statSync(bigPath).size / 1024 / 1024,
      pageLoadMs: browser?.loadMs,
      pageFilterMs: browser?.filterMs,
      pageScrollFrameMs: browser?.scrollFrameMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await benchReport(), null, 2));
}
