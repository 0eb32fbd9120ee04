// Render workers to compare side by side in one bench run: today's, as the
// build bundles it (dist/render-worker.js), and the reference, the renderer
// as it was at REFERENCE_COMMIT (procedural places, jpeg-js encoding), taken
// from git and bundled here. Both run behind the same sandbox server (this
// checkout's src/sandbox/server.ts), started by a small harness, so the only
// difference between two runs is the renderer.
import { build } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** CommonJS dependencies inside an ES module bundle need a require of their own. */
const REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * A scratch folder inside the checkout (node_modules/.cache), so that what is
 * bundled into it finds sharp in node_modules and the world data in dist/.
 */
export function projectScratchDir(prefix) {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  return mkdtempSync(join(cache, prefix));
}

/** The last commit with the procedural renderer: the one distinct-scene throughput is compared with. */
export const REFERENCE_COMMIT = '8f3c23d';

/** Today's worker, from the build. */
export function currentRenderWorker() {
  return pathToFileURL(join(ROOT, 'dist', 'render-worker.js'));
}

/** Bundles the reference commit's render worker into `dir`; throws when git or the commit is not there. */
export async function referenceRenderWorker(dir) {
  const source = join(dir, 'reference');
  mkdirSync(source, { recursive: true });
  const archive = spawnSync('git', ['-C', ROOT, 'archive', REFERENCE_COMMIT, 'src'], { maxBuffer: 64 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${REFERENCE_COMMIT} failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', source], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`unpacking ${REFERENCE_COMMIT} failed: ${untar.stderr}`);
  const outfile = join(dir, 'reference-render-worker.mjs');
  await build({
    entryPoints: [join(source, 'src/sandbox/render-worker.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: REQUIRE_BANNER },
    logLevel: 'warning',
  });
  return pathToFileURL(outfile);
}

/**
 * Starts this checkout's sandbox server in a child process with `renderWorker`
 * as its render threads' script, warmed up as `aerial sandbox` does;
 * resolves with {url, key, stop}.
 */
export async function startSandboxWith(renderWorker, { dir, dataDir, latencyMs, credits }) {
  const harness = join(dir, 'sandbox-harness.mjs');
  const entry = join(dir, 'sandbox-harness-entry.ts');
  writeFileSync(
    entry,
    `import { startSandbox } from ${JSON.stringify(join(ROOT, 'src/sandbox/server.ts'))};
const [worker, dataDir, latencyMs, credits] = process.argv.slice(2);
const sandbox = await startSandbox({ port: 0, dataDir, latencyMs: Number(latencyMs), credits: Number(credits), renderWorker: new URL(worker), warmUp: true, seed: 1 });
process.stdout.write(JSON.stringify({ url: sandbox.url, key: sandbox.defaultKey }) + '\\n');
process.once('SIGINT', () => sandbox.close().then(() => process.exit(0)));
`,
  );
  await build({
    entryPoints: [entry],
    outfile: harness,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['sharp'],
    banner: { js: REQUIRE_BANNER },
    logLevel: 'warning',
  });
  const child = spawn(process.execPath, [harness, renderWorker.href, dataDir, String(latencyMs), String(credits)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`the sandbox harness exited early (${code})`)));
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const line = buffered.split('\n').find((candidate) => candidate.startsWith('{'));
      if (!line) return;
      const { url, key } = JSON.parse(line);
      resolve({ url, key, stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGINT'))) });
    });
  });
}
