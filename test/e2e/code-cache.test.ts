// bin/aerial.js loads the bundle with the V8 code caches the build recorded
// (bin/code-cache.js). These tests hold the build to caches V8 really takes,
// and the loader to ignoring a cache that does not match.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { execa } from 'execa';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ROOT, runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

const LOADER = join(ROOT, 'bin', 'code-cache.js');
/** Node 22.1 and later keep a compile cache of their own, which bin/aerial.js then uses instead. */
const hasCompileCache = typeof (createRequire(import.meta.url)('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';
let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** `file → used | rejected | none`, as the loader reports it under NODE_DEBUG=aerial-code-cache. */
function cacheReport(stderr: string): Map<string, string> {
  const report = new Map<string, string>();
  for (const match of stderr.matchAll(/^AERIAL-CODE-CACHE \d+: (used|rejected|none) (.+)$/gm)) report.set(match[2]!, match[1]!);
  return report;
}

/** Runs a script that uses the loader on `dir`, with the loader's report on. */
function runLoader(dir: string, body: string) {
  const script = `const { useCodeCache } = require(${JSON.stringify(LOADER)}); ${body}`;
  return execa('node', ['-e', script], { cwd: dir, env: { NODE_DEBUG: 'aerial-code-cache' }, reject: false });
}

describe('V8 code cache of the bundle', () => {
  it.runIf(hasCompileCache)('Node 22.1 and later: list --json fills Node’s compile cache, and works', async () => {
    const cacheDir = tempDir('aerial-node-compile-cache-');
    try {
      const result = await runCli(['list', '--json'], {
        configDir: home.path,
        env: { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_COMPILE_CACHE: cacheDir.path, NODE_DEBUG: 'aerial-code-cache' },
      });
      expect(result.exitCode).toBe(0);
      expect(cacheReport(result.stderr).size).toBe(0);
      expect(readdirSync(cacheDir.path, { recursive: true }).length).toBeGreaterThan(0);
    } finally {
      cacheDir.remove();
    }
  });

  it.skipIf(hasCompileCache)('Node 20: list --json loads every bundle file through a cache the build recorded and V8 accepts', async () => {
    const result = await runCli(['list', '--json'], {
      configDir: home.path,
      env: { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_DEBUG: 'aerial-code-cache' },
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout.split('\n').find((line) => line.startsWith('{'))!)).toMatchObject({ content: expect.any(Array) });
    const report = cacheReport(result.stderr);
    // The entry, commander, zod, undici and the client at least.
    expect(report.size).toBeGreaterThanOrEqual(5);
    expect([...report].filter(([, outcome]) => outcome !== 'used')).toEqual([]);
    for (const file of report.keys()) expect(file.startsWith(join(ROOT, 'dist'))).toBe(true);
  });

  it('every cache in dist/ sits beside the bundle file it was recorded for', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]));
    const caches = files(join(ROOT, 'dist')).filter((file) => file.endsWith('.js.cache'));
    expect(caches.length).toBeGreaterThan(5);
    for (const cache of caches) expect(existsSync(cache.slice(0, -'.cache'.length))).toBe(true);
  });
});

describe('bin/code-cache.js', () => {
  const work = tempDir('aerial-code-cache-');
  afterAll(() => work.remove());

  it('records a cache that the next load uses, with the same result', async () => {
    const dir = join(work.path, 'recorded');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'answer.js'), 'module.exports = { answer: () => 6 * 7, file: __filename };\n');
    const record = await runLoader(dir, `const r = useCodeCache(process.cwd(), { record: true }); console.log(require('./answer.js').answer()); r.saveCodeCache();`);
    expect(record.exitCode).toBe(0);
    expect(record.stdout).toBe('42');
    expect(existsSync(join(dir, 'answer.js.cache'))).toBe(true);

    const load = await runLoader(dir, `useCodeCache(process.cwd()); const m = require('./answer.js'); console.log(m.answer(), m.file);`);
    expect(load.exitCode).toBe(0);
    expect(load.stdout).toBe(`42 ${join(dir, 'answer.js')}`);
    expect(cacheReport(load.stderr).get(join(dir, 'answer.js'))).toBe('used');
  });

  it('compiles from source when the cache is not one V8 can use (garbage, or recorded for other code)', async () => {
    const dir = join(work.path, 'stale');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'garbage.js'), 'module.exports = "from source";\n');
    writeFileSync(join(dir, 'garbage.js.cache'), Buffer.from('not a V8 code cache at all'.repeat(40)));
    writeFileSync(join(dir, 'edited.js'), 'module.exports = "first version";\n');
    const record = await runLoader(dir, `const r = useCodeCache(process.cwd(), { record: true }); require('./edited.js'); r.saveCodeCache();`);
    expect(record.exitCode).toBe(0);
    writeFileSync(join(dir, 'edited.js'), 'module.exports = "the second, longer version";\n');

    const load = await runLoader(dir, `useCodeCache(process.cwd()); console.log(require('./garbage.js'), '|', require('./edited.js'));`);
    expect(load.exitCode).toBe(0);
    expect(load.stdout).toBe('from source | the second, longer version');
    const report = cacheReport(load.stderr);
    expect(report.get(join(dir, 'garbage.js'))).toBe('rejected');
    expect(report.get(join(dir, 'edited.js'))).toBe('rejected');
  });

  it('leaves modules outside the bundle directory to Node', async () => {
    const dir = join(work.path, 'outside');
    mkdirSync(join(dir, 'bundle'), { recursive: true });
    writeFileSync(join(dir, 'other.js'), 'module.exports = "plain";\n');
    const load = await runLoader(dir, `useCodeCache(require('node:path').join(process.cwd(), 'bundle')); console.log(require('./other.js'));`);
    expect(load.stdout).toBe('plain');
    expect(cacheReport(load.stderr).size).toBe(0);
  });
});

describe('which code cache bin/aerial.js turns on', () => {
  const { enableCodeCache } = createRequire(import.meta.url)(LOADER) as {
    enableCodeCache: (bundleDir: string, nodeModule: object) => 'node' | 'recorded';
  };
  const compileCacheStatus = { FAILED: 0, ENABLED: 1, ALREADY_ENABLED: 2, DISABLED: 3 };
  /** node:module as a given Node has it: a loader to patch, and enableCompileCache (Node 22.1 on) answering `status`. */
  function nodeModule(status?: number) {
    const compile = () => undefined;
    const enableCompileCache = status === undefined ? undefined : vi.fn(() => ({ status }));
    return { compile, enableCompileCache, module: { prototype: { _compile: compile }, enableCompileCache, constants: { compileCacheStatus } } };
  }

  it('Node 22.1 and later: Node’s own compile cache, and the loader left as Node made it', () => {
    for (const status of [compileCacheStatus.ENABLED, compileCacheStatus.ALREADY_ENABLED, compileCacheStatus.DISABLED]) {
      const node = nodeModule(status);
      expect(enableCodeCache('/nowhere', node.module)).toBe('node');
      expect(node.enableCompileCache).toHaveBeenCalledOnce();
      expect(node.module.prototype._compile).toBe(node.compile);
    }
  });

  it('Node 20, which has no compile cache: the caches the build recorded', () => {
    const node = nodeModule();
    expect(enableCodeCache('/nowhere', node.module)).toBe('recorded');
    expect(node.module.prototype._compile).not.toBe(node.compile);
  });

  it('a Node whose compile cache cannot start (its directory not writable): the recorded caches', () => {
    const node = nodeModule(compileCacheStatus.FAILED);
    expect(enableCodeCache('/nowhere', node.module)).toBe('recorded');
    expect(node.module.prototype._compile).not.toBe(node.compile);
  });

  it('this Node is what the tests run on, and picks the branch its version calls for', () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(hasCompileCache).toBe(major > 22 || (major === 22 && minor >= 1));
  });
});
