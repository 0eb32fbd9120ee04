// Which modules may import which: src/ is a stack of layers, each folder
// importing only from itself and the layers below (docs/architecture.md draws
// them). Commands are reached only through the registry (src/commands/index.ts)
// and see only their Context, so none depends on the program that runs them;
// the HTTP layer (src/api/) knows nothing of the terminal, the commands or exit
// codes; reports and the batch engine do not know each other. Imports are read
// from the source (static, type-only and dynamic), and followed through other
// modules.
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

/** The folder a source file sits in ('.' for src/ itself). */
const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/**
 * The layers of src/, lowest first. A file imports from its own folder and
 * from folders of lower layers, never sideways within a layer nor up: text and
 * the scene vocabulary know nothing else; the HTTP layer knows them alone; the
 * CLI's errors and signals sit on it; files, input parsing and the config
 * above; then the terminal and webhooks, the operations every face calls,
 * previews, reports and the machinery batch and export share (bulk/), the
 * batch engine and the sandbox, the library's public
 * face over them, the seam commands run in, the commands, and the program.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['text', 'build-outputs'],
  ['scene'],
  ['api'],
  ['lifecycle'],
  ['files', 'input'],
  ['config'],
  ['terminal', 'webhook'],
  ['operations'],
  ['preview', 'report', 'bulk'],
  ['batch', 'sandbox'],
  ['library'],
  ['cli'],
  ['commands'],
  ['.'],
];
const layerOf = (file: string) => LAYERS.findIndex((layer) => layer.includes(folderOf(file)));

/** Each command's folder (commands/<name>/), and what commands share (commands/shared/). */
const commandOf = (file: string) => (file.startsWith('commands/') && file.split('/').length > 2 ? file.split('/')[1]! : undefined);

/** Every import circle among src/'s files (strongly connected components of more than one file, or a file importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do component.push((member = stack.pop()!));
      while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the plan of src/', () => {
  const graph = importGraph();
  const files = [...graph.keys()];

  it('reads the imports it checks (static, type-only and dynamic)', () => {
    expect(files.length).toBeGreaterThanOrEqual(100);
    expect(importsOf('x/y.ts', "import type { A } from '../a.js';\nimport { b } from './b.js';\nconst c = await import('../c/d.js');\nimport './e.js';")).toEqual(['a.ts', 'x/b.ts', 'c/d.ts', 'x/e.ts']);
    expect(graph.get('main.ts')).toContain('commands/index.ts');
  });

  it('holds folders, with at most three files at its root', () => {
    expect(files.filter((file) => folderOf(file) === '.').length).toBeLessThanOrEqual(3);
  });

  it('puts every folder in a layer', () => {
    const unplaced = [...new Set(files.map(folderOf))].filter((folder) => !LAYERS.some((layer) => layer.includes(folder)));
    expect(unplaced).toEqual([]);
  });

  it('has no import that runs sideways or back up a layer', () => {
    const upward = [...graph].flatMap(([file, imports]) =>
      imports.filter((target) => folderOf(target) !== folderOf(file) && layerOf(target) >= layerOf(file)).map((target) => `${file} → ${target}`),
    );
    expect(upward).toEqual([]);
    // The rule is not empty: a file of a lower layer that imported a higher one would be named.
    expect(layerOf('api/client.ts')).toBeLessThan(layerOf('commands/list/index.ts'));
  });

  it('has no import circle, across folders or within one', () => {
    expect(circles(graph)).toEqual([]);
    expect(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('has no source file longer than 900 lines', () => {
    const long = files.filter((file) => readFileSync(join(SRC, file), 'utf8').split('\n').length > 900);
    expect(long).toEqual([]);
  });
});

describe('commands', () => {
  const graph = importGraph();

  it('are reached through the registry alone: nothing outside src/commands/ imports one, but the program its registry', () => {
    const crossings = [...graph].flatMap(([file, imports]) =>
      file.startsWith('commands/') ? [] : imports.filter((target) => target.startsWith('commands/')).map((target) => `${file} → ${target}`),
    );
    expect(crossings).toEqual(['main.ts → commands/index.ts']);
  });

  it('each keeps to its own folder and what commands share: no command imports another', () => {
    const registered = [...graph.keys()].filter((file) => /^commands\/[^/]+\/index\.ts$/.test(file) && commandOf(file) !== 'shared');
    expect(registered.length).toBeGreaterThanOrEqual(11);
    const across = [...graph].flatMap(([file, imports]) => {
      const own = commandOf(file);
      return own === undefined ? [] : imports.filter((target) => ![own, 'shared', undefined].includes(commandOf(target)) || target === 'commands/index.ts').map((target) => `${file} → ${target}`);
    });
    expect(across).toEqual([]);
  });

  it('none reaches the program (main.ts), directly or through another module', () => {
    const offenders = [...graph.keys()].filter((file) => file.startsWith('commands/') && reachable(graph, file).has('main.ts'));
    expect(offenders).toEqual([]);
  });
});

describe('the batch engine and the reports', () => {
  const graph = importGraph();
  const importsInto = (from: string, into: string[]) =>
    [...graph].flatMap(([file, imports]) => (folderOf(file) === from ? imports.filter((target) => into.includes(folderOf(target))).map((target) => `${file} → ${target}`) : []));

  it('reports are made from plain records: report/ imports neither batch/ nor commands/', () => {
    expect(importsInto('report', ['batch', 'commands'])).toEqual([]);
  });

  it('the engine runs rows without knowing what they are for: batch/ imports neither report/ nor commands/ nor the seam', () => {
    expect(importsInto('batch', ['report', 'commands', 'cli'])).toEqual([]);
  });

  it('what batch and export share is their own: bulk/ imports neither batch/ nor report/ nor commands/', () => {
    expect(importsInto('bulk', ['batch', 'report', 'commands', 'cli'])).toEqual([]);
    // The rule is not empty: both sides use it.
    expect(importsInto('batch', ['bulk']).length).toBeGreaterThan(0);
    expect([...importGraph()].some(([file, imports]) => file.startsWith('commands/export/') && imports.some((target) => target.startsWith('bulk/')))).toBe(true);
  });
});

describe('the sandbox', () => {
  const graph = importGraph();
  /**
   * The interface facts it shares with the client (the spec's constants, the
   * wire schema, the enums and the scene vocabulary), undici for the webhooks it
   * sends, and plain helpers that know nothing of the CLI: text, the bundle's
   * worker scripts, atomic writes, locks and directories, durations and deadlines.
   */
  const shared = (target: string) =>
    ['api/spec.ts', 'api/schema.ts', 'api/enums.ts', 'api/undici.ts', 'files/atomic-file.ts', 'files/directories.ts', 'files/file-lock.ts', 'input/duration.ts', 'webhook/deadline.ts'].includes(target) ||
    ['scene', 'text', 'build-outputs', 'sandbox'].includes(folderOf(target));

  it('imports only the interface facts it shares with the client, and plain helpers', () => {
    const beyond = [...graph].flatMap(([file, imports]) => (file.startsWith('sandbox/') ? imports.filter((target) => !shared(target)).map((target) => `${file} → ${target}`) : []));
    expect(beyond).toEqual([]);
  });
});

describe('the HTTP layer', () => {
  const graph = importGraph();
  const api = [...graph.keys()].filter((file) => file.startsWith('api/'));
  /** The terminal, the program, its commands and seam, the CLI's errors and exit codes, how commands are stopped, the config. */
  const outside = (file: string) => ['terminal', 'cli', 'commands', 'process', 'config', '.'].includes(folderOf(file));

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

describe('the operations', () => {
  const graph = importGraph();
  const operations = [...graph.keys()].filter((file) => file.startsWith('operations/'));
  /** What only the CLI has: the terminal, the seam, the commands, the program, the config file, the CLI's errors, exit codes and signals. */
  const cliOnly = (file: string) => ['terminal', 'cli', 'commands', 'config', '.'].includes(folderOf(file)) || ['lifecycle/errors.ts', 'lifecycle/shutdown.ts'].includes(file);

  it('reach nothing only the CLI has, through any import: the library and the MCP server call them as the CLI does', () => {
    expect(operations.length).toBeGreaterThanOrEqual(2);
    const reached = operations.flatMap((file) => [...reachable(graph, file)].filter(cliOnly).map((target) => `${file} → ${target}`));
    expect(reached).toEqual([]);
  });

  it('speak of no exit code and no flag', () => {
    const speaking = operations.filter((file) => /\b(ExitCode|exitCode)\b|['"`]--[a-z]/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(speaking).toEqual([]);
  });

  it('are what the faces save images and check requests through: the library, generate, generate-async and the MCP tools', () => {
    const through = (file: string, operation: string) => (graph.get(file) ?? []).includes(operation);
    expect(['library/genaerial.ts', 'commands/generate/index.ts', 'commands/generate-async/index.ts', 'commands/mcp/tools.ts'].filter((file) => !through(file, 'operations/save-image.ts'))).toEqual([]);
    expect(through('library/genaerial.ts', 'operations/request.ts')).toBe(true);
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
    if (typeof manifest.exports !== 'object' || manifest.exports === null) return false;
    const subpath = `.${specifier.slice(name.length)}`;
    // A key with a `*` is a subpath pattern, as Node matches it (the MCP SDK's "./*": server/mcp.js, types.js).
    return Object.keys(manifest.exports).some((key) => {
      const star = key.indexOf('*');
      if (star < 0) return key === subpath;
      const [before, after] = [key.slice(0, star), key.slice(star + 1)];
      return subpath.length >= before.length + after.length && subpath.startsWith(before) && subpath.endsWith(after);
    });
  };

  it('are imported through their public entry points only, never a file inside them', () => {
    const deep = files.flatMap((file) => packagesOf(file).filter((specifier) => !publicSubpath(specifier)).map((specifier) => `${file} → ${specifier}`));
    expect(deep).toEqual([]);
    expect(packagesOf('api/undici.ts')).toContain('undici');
    expect([publicSubpath('csv-parse/sync'), publicSubpath('undici/lib/dispatcher/agent.js'), publicSubpath('world-atlas/land-110m.json')]).toEqual([true, false, true]);
    expect([publicSubpath('@modelcontextprotocol/sdk/server/stdio.js'), publicSubpath('zod/v4'), publicSubpath('zod/lib/index.js')]).toEqual([true, true, false]);
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
