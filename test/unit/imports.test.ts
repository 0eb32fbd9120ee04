// Which modules may import which. Commands are reached only through the
// registry (src/commands/index.ts) and see only their Context, so none depends
// on the program that runs them; and the HTTP layer (src/api/) knows nothing
// of the terminal, the commands or exit codes. Imports are read from the
// source (static, type-only and dynamic), and followed through other modules.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SRC = join(ROOT, 'src');

/** Every TypeScript file under src/, relative to it. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** What `file` imports from src/ (statically, as a type, or with import()), as paths relative to src/. */
function importsOf(file: string, text = readFileSync(join(SRC, file), 'utf8')): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(SRC, resolve(dirname(join(SRC, file)), specifier)).replace(/\.js$/, '.ts'));
}

function importGraph(): Map<string, string[]> {
  return new Map(sources().map((file) => [file, importsOf(file)]));
}

/** The files `from` reaches through its imports, itself excluded. */
function reachable(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...(graph.get(from) ?? [])];
  while (queue.length) {
    const next = queue.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...(graph.get(next) ?? []));
  }
  return seen;
}

const isCommandFile = (file: string) => file.startsWith('commands/');

describe('imports across the seam', () => {
  const graph = importGraph();
  const commands = [...graph.keys()].filter((file) => isCommandFile(file) && file !== 'commands/index.ts');

  it('reads the imports it checks (static, type-only and dynamic)', () => {
    expect(commands.length).toBeGreaterThanOrEqual(10);
    expect(importsOf('x/y.ts', "import type { A } from '../a.js';\nimport { b } from './b.js';\nconst c = await import('../c/d.js');\nimport './e.js';")).toEqual(['a.ts', 'x/b.ts', 'c/d.ts', 'x/e.ts']);
    expect(graph.get('cli.ts')).toContain('commands/index.ts');
  });

  it('no command imports cli.ts, directly or through another module', () => {
    const offenders = commands.filter((file) => reachable(graph, file).has('cli.ts'));
    expect(offenders).toEqual([]);
  });

  it('nothing outside src/commands/ imports a command: the program reaches them through the registry alone', () => {
    const crossings = [...graph].flatMap(([file, imports]) =>
      isCommandFile(file) ? [] : imports.filter(isCommandFile).map((target) => `${file} → ${target}`),
    );
    expect(crossings).toEqual(['cli.ts → commands/index.ts']);
  });

  it('cli.ts is in no import circle', () => {
    const circles = (graph.get('cli.ts') ?? []).filter((target) => target === 'cli.ts' || reachable(graph, target).has('cli.ts'));
    expect(circles).toEqual([]);
  });
});

describe('the HTTP layer', () => {
  const graph = importGraph();
  const api = [...graph.keys()].filter((file) => file.startsWith('api/'));
  /** The terminal, the program, its commands, the CLI's errors and exit codes, and how commands are stopped. */
  const outside = (file: string) => ['io.ts', 'cli.ts', 'context.ts', 'errors.ts', 'shutdown.ts', 'config.ts'].includes(file) || isCommandFile(file);

  it('reaches nothing of the terminal, the commands or the CLI’s errors, through any import', () => {
    expect(api.length).toBeGreaterThanOrEqual(15);
    const reached = api.flatMap((file) => [...reachable(graph, file)].filter(outside).map((target) => `${file} → ${target}`));
    expect(reached).toEqual([]);
  });

  it('speaks of no exit code', () => {
    const speaking = api.filter((file) => /\b(ExitCode|exitCode)\b/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(speaking).toEqual([]);
  });
});

describe('dependencies', () => {
  const files = sources();
  /** Every package specifier `file` imports (static, type-only, dynamic or re-exported), node: built-ins left out. */
  const packagesOf = (file: string) =>
    [...readFileSync(join(SRC, file), 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'".][^'"]*)['"]/gm)]
      .map((match) => match[1]!)
      .filter((specifier) => !specifier.startsWith('node:'));
  /** A package's own name: `@scope/name` or `name`. */
  const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  /**
   * The subpaths packages publish in their "exports" (csv-parse/sync) are public; a file inside one is not.
   * A package of data alone, with neither "exports" nor "main" (world-atlas: Natural Earth as TopoJSON
   * files), offers nothing but its files: those are its entry points.
   */
  const publicSubpath = (specifier: string) => {
    const name = packageName(specifier);
    if (specifier === name) return true;
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { exports?: Record<string, unknown>; main?: string };
    if (manifest.exports === undefined && manifest.main === undefined) return true;
    return typeof manifest.exports === 'object' && manifest.exports !== null && `.${specifier.slice(name.length)}` in manifest.exports;
  };

  it('are imported through their public entry points only, never a file inside them', () => {
    const deep = files.flatMap((file) => packagesOf(file).filter((specifier) => !publicSubpath(specifier)).map((specifier) => `${file} → ${specifier}`));
    expect(deep).toEqual([]);
    expect(packagesOf('api/undici.ts')).toContain('undici');
    expect([publicSubpath('csv-parse/sync'), publicSubpath('undici/lib/dispatcher/agent.js'), publicSubpath('world-atlas/land-110m.json')]).toEqual([true, false, true]);
  });

  it('no import is let through a type error', () => {
    const silenced = files.filter((file) => /@ts-(expect-error|ignore)[^\n]*\n\s*import\b/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(silenced).toEqual([]);
  });

  it('undici’s values come through src/api/undici.ts alone (the build tree-shakes undici down to the names it exports); elsewhere only its types', () => {
    const direct = files.filter((file) => file !== 'api/undici.ts' && /^\s*import\s+(?!type\b)[^;]*from\s*['"]undici['"]|import\(\s*['"]undici['"]/m.test(readFileSync(join(SRC, file), 'utf8')));
    expect(direct).toEqual([]);
  });
});
