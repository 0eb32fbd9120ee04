// The esbuild plugins the bundle is built with (scripts/build.mjs), apart so
// that test/unit/build/tree-shaken-undici.test.ts bundles undici exactly as
// the build does and holds the result to the real package.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { treeShakenEntry } from './tree-shake.mjs';

/**
 * Node built-ins that dependencies load eagerly but aerial rarely or never
 * uses get lazy stand-ins in the bundle (see scripts/shims/): startup is a goal.
 * Each pays (measured against a build without them, interleaved, CPU time:
 * about 7 ms of `list --json` for undici's http2 and assert, 2.5 ms for its
 * http, 3 ms of every command for commander's), and
 * test/unit/build/bundle-shims.test.ts holds each to the real module.
 * (undici's fs/promises and zlib needed stand-ins too while all of undici was
 * bundled; what remains of it loads neither: see below.)
 */
export const SHIMS = [
  { importer: /[\\/]commander[\\/]/, module: 'node:child_process', shim: 'commander-child-process.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:http2', shim: 'undici-http2.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:http', shim: 'undici-http.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:assert', shim: 'undici-assert.cjs' },
];
export const builtinShims = {
  name: 'builtin-shims',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => {
      const shim = SHIMS.find((s) => s.module === args.path && s.importer.test(args.importer));
      return shim ? { path: fileURLToPath(new URL(`./shims/${shim.shim}`, import.meta.url)) } : undefined;
    });
  },
};

/**
 * undici's entry point requires, and so runs at load, all of undici: fetch,
 * WebSocket, EventSource, mocks, cache stores, interceptors, cookies, and the
 * Node built-ins they take (dns, worker_threads, perf_hooks, console, web
 * streams, crypto). aerial uses its dispatchers alone, and every command that
 * sends a request would pay for the rest at start-up. So 'undici' is bundled
 * as its entry point tree-shaken down to the names src/api/undici.ts exports
 * (scripts/tree-shake.mjs): an ES module holding what those names need, plus
 * what the entry point does as it loads that they rely on (it gives every
 * dispatcher its request, stream and pipeline methods).
 *
 * Which of undici's files may be left out whole when nothing they export is
 * used: every file under lib/. Each defines classes, functions and constants,
 * and the only things they do at load beyond that are (a) to their own
 * classes and objects, which go with them, (b) the debug log NODE_DEBUG=undici
 * turns on, in lib/core/diagnostics.js, which the dispatchers use and so is
 * kept, and (c) lib/global.js's default global dispatcher, for undici's own
 * top-level request() and fetch(), which aerial never calls (every request
 * names its dispatcher). The entry point (index.js) is not among them: each of
 * its statements with an effect stays.
 *
 * `new CacheStorage(...)`, the entry point's `caches` export, is named pure: it
 * checks its argument and marks the new object as not cloneable, nothing more.
 * test/unit/build/tree-shaken-undici.test.ts holds the result to the real undici.
 */
export const UNDICI_VALUES = /export\s*{([^}]*)}\s*from\s*'undici'/.exec(readFileSync(new URL('../src/api/undici.ts', import.meta.url), 'utf8'))[1]
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name && !name.startsWith('type '));
export async function treeShakenUndici() {
  const undici = await treeShakenEntry({
    specifier: 'undici',
    names: UNDICI_VALUES,
    sideEffectFree: (id) => /[\\/]undici[\\/]lib[\\/]/.test(id),
    pure: ['CacheStorage'],
  });
  return {
    name: 'tree-shaken-undici',
    setup(build) {
      // A file in undici's directory: the stand-ins above apply to its requires.
      build.onResolve({ filter: /^undici$/ }, () => ({ path: undici.file }));
      build.onLoad({ filter: /[\\/]tree-shaken\.aerial\.mjs$/ }, (args) => (args.path === undici.file ? { contents: undici.code, loader: 'js', resolveDir: dirname(undici.file) } : undefined));
    },
  };
}

