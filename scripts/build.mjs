// Bundles the CLI into dist/ with code splitting: the entry holds only what
// `--help` and `--version` need; every heavy dependency sits in a chunk that
// is loaded the first time a command reaches for it (startup is a goal).
import { build } from 'esbuild';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = new URL('../dist', import.meta.url);
// Build beside dist/ and swap it in, so a CLI run during a rebuild never sees half a bundle.
const staging = new URL(`../dist.${process.pid}.tmp`, import.meta.url);
const retired = new URL(`../dist.${process.pid}.old`, import.meta.url);

/**
 * Node built-ins that dependencies load eagerly but aerial rarely or never
 * uses get lazy stand-ins in the bundle (see scripts/shims/): startup is a goal.
 */
const SHIMS = [
  { importer: /[\\/]commander[\\/]/, module: 'node:child_process', shim: 'commander-child-process.cjs' },
  { importer: /[\\/]undici[\\/]/, module: 'node:http2', shim: 'undici-http2.cjs' },
];
const builtinShims = {
  name: 'builtin-shims',
  setup(build) {
    build.onResolve({ filter: /^node:(child_process|http2)$/ }, (args) => {
      const shim = SHIMS.find((s) => s.module === args.path && s.importer.test(args.importer));
      return shim ? { path: fileURLToPath(new URL(`./shims/${shim.shim}`, import.meta.url)) } : undefined;
    });
  },
};

await build({
  plugins: [builtinShims],
  // The sandbox's render worker threads load their own script (see src/sandbox/render-pool.ts).
  entryPoints: { cli: 'src/cli.ts', 'render-worker': 'src/sandbox/render-worker.ts' },
  outdir: staging.pathname,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  // Less to parse at every start; identifiers stay readable in stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  define: { __AERIAL_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  // CommonJS dependencies inside an ESM bundle need a require of their own.
  banner: {
    js: "import { createRequire as __aerialCreateRequire } from 'node:module'; const require = __aerialCreateRequire(import.meta.url);",
  },
});

try {
  renameSync(dist, retired);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
// Precomputed help for bin/aerial.js (see renderHelpTexts in src/cli.ts), written
// into the staged bundle so it always matches the code beside it.
const { renderHelpTexts } = await import(new URL('cli.js', `${staging.href}/`).href);
writeFileSync(new URL('help.json', `${staging.href}/`), JSON.stringify(renderHelpTexts()));

renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
