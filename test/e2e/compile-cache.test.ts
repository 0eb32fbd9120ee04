// bin/aerial.js imports the bundle with Node's compile cache on (Node 22.1 and
// later), so a command compiles the bundle once, not at every run. That is the
// only cache: aerial writes none of its own, in the temp directory or beside
// Node's, and nothing in dist/ runs code through node:vm. Its place is one only
// the user can write, never the temp directory every user shares.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import module from 'node:module';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { globSync } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import { nodeLines } from '../../scripts/node-lines.mjs';
import { BIN, cliEnv, ROOT, runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** The files in a compile-cache directory (one folder per Node version, a file per module). */
const cacheFiles = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());

describe('Node’s compile cache', () => {
  it.runIf(hasCompileCache)('list --json fills it with the bundle’s modules, and the next run, reading them, gives the same page', async () => {
    const cacheDir = tempDir('aerial-node-compile-cache-');
    try {
      const env = { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_COMPILE_CACHE: cacheDir.path };
      const first = await runCli(['list', '--json'], { configDir: home.path, env });
      expect(first.exitCode).toBe(0);
      // The entry, commander, zod, undici and the client at least.
      const written = cacheFiles(cacheDir.path).length;
      expect(written).toBeGreaterThanOrEqual(5);
      const second = await runCli(['list', '--json'], { configDir: home.path, env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
      expect(second.exitCode).toBe(0);
      expect(second.stdout).toBe(first.stdout);
      expect(second.stderr).toMatch(/dist\/cli\.js was accepted/);
      expect(second.stderr).not.toMatch(/was rejected/);
    } finally {
      cacheDir.remove();
    }
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off, and the command still works', async () => {
    const cacheDir = tempDir('aerial-node-compile-cache-');
    try {
      const result = await runCli(['list', '--json'], {
        configDir: home.path,
        env: { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_COMPILE_CACHE: cacheDir.path, NODE_DISABLE_COMPILE_CACHE: '1' },
      });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
      expect(cacheFiles(cacheDir.path)).toEqual([]);
    } finally {
      cacheDir.remove();
    }
  });
});

/** This machine's Node (20: no compile cache of its own), and Node 24 (scripts/node-lines.mjs). */
const NODES = [
  { node: process.execPath, compileCache: hasCompileCache },
  { node: nodeLines(['24'])[0]!.node, compileCache: true },
];

describe.each(NODES)('no cache of aerial’s own, on $node', ({ node, compileCache }) => {
  it('list --json with a temp directory and a compile-cache directory of its own leaves the first empty and only Node’s files in the second', async () => {
    const [tmp, cache] = [tempDir('aerial-own-cache-tmp-'), tempDir('aerial-own-cache-cc-')];
    try {
      const result = await execa(node, [BIN, 'list', '--json'], {
        env: cliEnv(home.path, { ...sandbox.env(), TMPDIR: tmp.path, NODE_COMPILE_CACHE: cache.path, NODE_DISABLE_COMPILE_CACHE: undefined }),
        extendEnv: false,
        reject: false,
        timeout: 30_000,
      });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
      expect(readdirSync(tmp.path, { recursive: true })).toEqual([]);
      // Node's own layout: one directory per version, architecture and user, files named by a hash (none on Node 20).
      const files = cacheFiles(cache.path).map((entry) => relative(cache.path, join(entry.parentPath ?? entry.path, entry.name)));
      expect(files.filter((file) => !/^v\d+\.\d+\.\d+-[^/]+\/[0-9a-f]{8}$/.test(file))).toEqual([]);
      if (!compileCache) expect(files).toEqual([]);
      else expect(files.length).toBeGreaterThanOrEqual(5);
    } finally {
      tmp.remove();
      cache.remove();
    }
  });
});

/** Node 24 runs the CLI with no compile-cache variable set: the cache's place is aerial's choice. */
const node24 = nodeLines(['24'])[0]!.node;
const uid = process.getuid!();

describe('the compile cache’s own place, where only this user can write', () => {
  const run = (tmp: string) =>
    execa(node24, [BIN, 'list', '--json'], {
      env: cliEnv(home.path, { ...sandbox.env(), TMPDIR: tmp, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined }),
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });

  it('is <temp>/aerial-node-compile-cache-<uid>, made 0700, never the shared <temp>/node-compile-cache', async () => {
    const tmp = tempDir('aerial-cc-place-');
    try {
      const result = await run(tmp.path);
      expect(result.exitCode).toBe(0);
      expect(readdirSync(tmp.path)).toEqual([`aerial-node-compile-cache-${uid}`]);
      const place = join(tmp.path, `aerial-node-compile-cache-${uid}`);
      expect(lstatSync(place).mode & 0o777).toBe(0o700);
      expect(cacheFiles(place).length).toBeGreaterThanOrEqual(5);
    } finally {
      tmp.remove();
    }
  });

  it('is not used when another has put a link there: nothing is written through it, and the command works', async () => {
    const [tmp, elsewhere] = [tempDir('aerial-cc-link-'), tempDir('aerial-cc-target-')];
    try {
      symlinkSync(elsewhere.path, join(tmp.path, `aerial-node-compile-cache-${uid}`));
      const result = await run(tmp.path);
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
      expect(readdirSync(elsewhere.path)).toEqual([]);
      expect(lstatSync(join(tmp.path, `aerial-node-compile-cache-${uid}`)).isSymbolicLink()).toBe(true);
    } finally {
      tmp.remove();
      elsewhere.remove();
    }
  });

  it('is not used when the directory there lets others write to it', async () => {
    const tmp = tempDir('aerial-cc-open-');
    try {
      const place = join(tmp.path, `aerial-node-compile-cache-${uid}`);
      mkdirSync(place);
      chmodSync(place, 0o777);
      const result = await run(tmp.path);
      expect(result.exitCode).toBe(0);
      expect(readdirSync(place)).toEqual([]);
    } finally {
      tmp.remove();
    }
  });
});

describe('dist/', () => {
  const scripts = globSync('dist/**/*.{js,cjs,mjs}', { cwd: ROOT, absolute: true });

  it('runs nothing through node:vm and makes no code cache of its own', () => {
    expect(scripts.length).toBeGreaterThan(10);
    const found = scripts.filter((file) => /\bnode:vm\b|["']vm["']|createCachedData|cachedData/.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file));
    expect(found).toEqual([]);
  });

  it('has lines a stack trace can point into: none of dist/cli.js longer than 2,000 characters', () => {
    const lines = readFileSync(join(ROOT, 'dist', 'cli.js'), 'utf8').split('\n');
    expect(lines.length).toBeGreaterThan(1000);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(2000);
  });
});
