// Bundles the CLI into dist/ with code splitting: the entry holds only what
// `--help` and `--version` need; every heavy dependency sits in a chunk that
// is loaded the first time a command reaches for it (startup is a goal).
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
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
