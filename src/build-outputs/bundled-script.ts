// Worker threads need a JavaScript file of their own to run. The bundle has
// one per worker, each its own esbuild entry point beside dist/cli.js; the
// TypeScript sources that vitest runs have none, and their callers then do
// the work on the main thread.
import { existsSync } from 'node:fs';

/** True when this module runs from its TypeScript source (vitest), not from the bundle. */
export const RUNNING_FROM_SOURCES = import.meta.url.endsWith('.ts');

/**
 * The bundled script `name` (such as 'render-worker.js') beside cli.js. This
 * module sits in dist/chunks/ or, should that change, in dist/ itself: both
 * places are looked at. Undefined when running from the sources, or when the
 * file is missing.
 */
export function bundledScript(name: string): URL | undefined {
  if (RUNNING_FROM_SOURCES) return undefined;
  return [`./${name}`, `../${name}`].map((path) => new URL(path, import.meta.url)).find((url) => existsSync(url));
}
