// The second step of the build: esbuild's bundle, split again into the files
// dist/ ships. Node pays for every ES module it loads (resolving, reading,
// linking: about half a millisecond each on Node 24), and esbuild splits more
// finely than a run needs: it treats every dynamic import() as an entry point
// of its own, so code the program has already loaded when a command's import()
// runs is split out again, into dozens of small shared files. Rollup knows a
// dynamic import runs after its importer, and keeps such code with the
// importer: `list --json` loads 25 files from esbuild's split and 6 from this
// one. Rollup only regroups here (esbuild has already tree-shaken).
//
// It also takes Node's built-ins with require(). An ES module that imports a
// built-in gets its namespace, and making that namespace reads every export:
// `import … from 'node:fs'` loads fs/promises, readline, the fs streams and
// watchers, for a command that reads one file (measured on Node 24: about 30
// built-in modules more than `require('node:fs')`). A static import of a
// built-in becomes a property read of require()'s object, whose lazy
// properties stay lazy until used; `await import('node:…')` stays Node's own,
// as code that waits for it expects a namespace.
import { existsSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import MagicString from 'magic-string';
import { rollup } from 'rollup';

/** Defines require() in every file: the bundled CommonJS packages (commander, undici, …) call it for Node's built-ins. */
const BANNER = "import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);";

const BUILTIN = '\0builtin:';

/** A static import of a built-in: one small module per importer, so that it lands in the importer's file. */
const builtinsByRequire = {
  name: 'builtins-by-require',
  resolveDynamicImport(specifier) {
    return typeof specifier === 'string' && isBuiltin(specifier) ? { id: specifier, external: true } : null;
  },
  resolveId(source, importer) {
    if (!isBuiltin(source)) return null;
    return { id: `${BUILTIN}${source}\0${importer ?? ''}`, syntheticNamedExports: '__builtin', moduleSideEffects: false };
  },
  load(id) {
    if (!id.startsWith(BUILTIN)) return null;
    const name = id.slice(BUILTIN.length, id.indexOf('\0', BUILTIN.length));
    return `export const __builtin = require(${JSON.stringify(name)});\nexport default __builtin;`;
  },
};

/** esbuild's files with their source maps, so that the maps of dist/ lead back to the sources. */
const withSourceMaps = {
  name: 'with-source-maps',
  load(id) {
    if (id.startsWith('\0') || !existsSync(`${id}.map`)) return null;
    return { code: readFileSync(id, 'utf8'), map: readFileSync(`${id}.map`, 'utf8') };
  },
};

/**
 * Rollup writes a file's exports on one line, some hundreds of names long in
 * the program's entry file: one name a line, so that every line of dist/ stays
 * short enough to read in a stack trace.
 */
const exportsOneALine = {
  name: 'exports-one-a-line',
  renderChunk(code) {
    const source = new MagicString(code);
    for (const match of code.matchAll(/^export \{ ([^}\n]{200,}) \};$/gm)) {
      const start = match.index + 'export { '.length;
      source.overwrite(match.index + 'export {'.length, start, '\n  ');
      for (const comma of match[1].matchAll(/, /g)) source.overwrite(start + comma.index, start + comma.index + 2, ',\n  ');
      source.overwrite(start + match[1].length, start + match[1].length + 1, '\n');
    }
    return source.hasChanged() ? { code: source.toString(), map: source.generateMap({ hires: true }) } : null;
  },
};

/**
 * Splits the bundle in `from` (esbuild's output: cli.js, the worker scripts
 * and their shared chunks) into `to`, which holds the same entry files. Each
 * entry is split on its own: a worker thread's script shares no file with the
 * program, so that the program's entry file is the program and no mere facade.
 */
export async function regroup(from, to, entries, { chunkDir = 'chunks', strict = false } = {}) {
  for (const name of entries) await regroupEntry(from, to, [name].flat(), chunkDir, strict);
}

/** `names` are split together: entries a program loads side by side (the library's two) share their files. */
async function regroupEntry(from, to, names, chunkDir, strict) {
  const bundle = await rollup({
    input: Object.fromEntries(names.map((name) => [name, new URL(`${name}.js`, `${from.href}/`).pathname])),
    external: ['sharp'],
    treeshake: false,
    // The entry file may export more than it did (what its commands' files import from it): one file, not a facade and the program.
    // A library's entries (`strict`) export exactly what their sources do: what they export is what is supported.
    preserveEntrySignatures: strict ? 'strict' : 'allow-extension',
    plugins: [builtinsByRequire, withSourceMaps],
    onwarn(warning) {
      // esbuild's chunks import one another both ways; Rollup orders them as esbuild did.
      if (warning.code === 'CIRCULAR_DEPENDENCY') return;
      throw new Error(`regrouping the bundle: ${warning.message}`);
    },
  });
  try {
    await bundle.write({
      dir: to.pathname,
      format: 'es',
      banner: BANNER,
      entryFileNames: '[name].js',
      // esbuild's names carry a hash of their own.
      chunkFileNames: ({ name }) => `${chunkDir}/${name.replace(/-[A-Z0-9]{8}$/, '')}-[hash].js`,
      sourcemap: 'hidden',
      generatedCode: 'es2015',
      plugins: [exportsOneALine],
    });
  } finally {
    await bundle.close();
  }
}
