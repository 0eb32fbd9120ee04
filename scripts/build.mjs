// Bundles the CLI into dist/ with code splitting: the entry holds only what
// `--help` and `--version` need; every heavy dependency sits in a chunk that
// is loaded the first time a command reaches for it (startup is a goal).
import { build } from 'esbuild';
import { readFileSync, renameSync, rmSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = new URL('../dist', import.meta.url);
// Build beside dist/ and swap it in, so a CLI run during a rebuild never sees half a bundle.
const staging = new URL(`../dist.${process.pid}.tmp`, import.meta.url);
const retired = new URL(`../dist.${process.pid}.old`, import.meta.url);

await build({
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
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
