// Worker scripts for the render pool tests. vitest runs the TypeScript sources,
// and a worker thread (or a child process) cannot load TypeScript, so the real
// render worker, like any script a test runs apart, is bundled with esbuild.
// The stand-in workers exercise the pool's bookkeeping without rendering.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** CommonJS dependencies inside an ESM bundle need a require of their own, as in scripts/build.mjs. */
const REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * TypeScript from src/ bundled into one ES module at `outfile`, for a worker
 * thread or a child process to run: a source file, or a script of its own
 * (whose imports are relative to the project root).
 */
export async function bundleForNode(source: { file: string } | { script: string }, outfile: string): Promise<URL> {
  await build({
    ...('file' in source ? { entryPoints: [source.file] } : { stdin: { contents: source.script, resolveDir: ROOT, loader: 'ts' } }),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'silent',
    banner: { js: REQUIRE_BANNER },
    // A native addon: loaded from node_modules at run time, which is why bundles go inside the checkout.
    external: ['sharp'],
  });
  return pathToFileURL(outfile);
}

/**
 * A scratch folder inside the checkout (node_modules/.cache), so that the
 * scripts bundled into it find sharp in node_modules and the world data in dist/.
 */
export function projectScratchDir(prefix: string): string {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  return mkdtempSync(join(cache, prefix));
}

/** src/sandbox/render/worker.ts bundled into `dir`. */
export function buildRenderWorker(dir: string): Promise<URL> {
  return bundleForNode({ file: join(ROOT, 'src/sandbox/render/worker.ts') }, join(dir, 'render-worker.mjs'));
}

/**
 * The usual setup of a test file that renders on threads: one scratch
 * directory and the real render worker bundled into it, for the whole file.
 * `onReady` hands both to the file's own variables.
 */
export function useRenderWorkerPerFile(prefix: string, onReady: (dir: string, renderWorker: URL) => void): void {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = projectScratchDir(prefix);
    onReady(dir, await buildRenderWorker(dir));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}

/**
 * A stand-in worker that answers each job after `delayMs` with the text
 * "<threadId>" as its "JPEG". A job tagged "exit" makes it exit with code 3,
 * "throw" makes it throw outside any handler, and "silent" is never answered.
 */
export function writeStandInWorker(dir: string, delayMs = 0): URL {
  const file = join(dir, `stand-in-${delayMs}.mjs`);
  writeFileSync(
    file,
    `import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', ({ id, request }) => {
  const tags = request.tags ?? [];
  if (tags.includes('exit')) process.exit(3);
  if (tags.includes('throw')) setTimeout(() => { throw new Error('stand-in worker blew up'); });
  if (tags.includes('throw') || tags.includes('silent')) return;
  setTimeout(() => {
    const jpeg = new TextEncoder().encode(String(threadId)).buffer;
    parentPort.postMessage({ id, jpeg }, [jpeg]);
  }, ${delayMs});
});
`,
  );
  return pathToFileURL(file);
}

/**
 * A stand-in worker that writes what happens to it into `logFile`, one line per
 * event: "start <threadId>" when it starts, "job <threadId> <width>x<height>"
 * (or "full" for a request's own size) per job. It answers like
 * writeStandInWorker's, with its threadId; a job tagged "exit" makes it exit.
 */
export function writeRecordingWorker(dir: string, logFile: string): URL {
  const file = join(dir, `recording-${basename(logFile)}.mjs`);
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
import { parentPort, threadId } from 'node:worker_threads';
const log = ${JSON.stringify(logFile)};
appendFileSync(log, 'start ' + threadId + '\\n');
parentPort.on('message', ({ id, request, size }) => {
  appendFileSync(log, 'job ' + threadId + ' ' + (size ? size.width + 'x' + size.height : 'full') + '\\n');
  if ((request.tags ?? []).includes('exit')) process.exit(3);
  const jpeg = new TextEncoder().encode(String(threadId)).buffer;
  parentPort.postMessage({ id, jpeg }, [jpeg]);
});
`,
  );
  return pathToFileURL(file);
}
