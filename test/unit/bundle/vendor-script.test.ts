// The runner of the bundle's vendor scripts (src/bundle/vendor-script.ts): a
// CommonJS script run as require() would run it, with a V8 code cache kept
// beside Node's compile cache. Whether a later process takes the cache is
// shown end to end (test/e2e/vendor-cache.test.ts): one process's V8 keeps
// what it compiled, so only a new one can show a cache taken from disk.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileCacheDir, runCachedScript } from '../../../src/bundle/vendor-script.js';
import { tempDir } from '../../helpers/cli.js';

const work = tempDir('aerial-vendor-script-');
afterAll(() => work.remove());

let scripts = 0;
/** A script file of its own (V8 keeps what it compiled by source: each test gets a source never seen). */
function script(body: string): string {
  const file = join(work.path, `script-${++scripts}.cjs`);
  writeFileSync(file, `// script ${scripts}\n${body}\n`);
  return file;
}

function cacheDir(): string {
  const dir = join(work.path, `cache-${scripts}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  return dir;
}

describe('runCachedScript', () => {
  it('runs a CommonJS script as require() would: its exports, its own require, __filename and __dirname', () => {
    const file = script(`const { basename } = require('node:path');
      exports.name = basename(__filename);
      exports.dir = __dirname;
      exports.self = this === exports;
      module.exports.later = 42;`);
    const run = runCachedScript(file, undefined);
    expect(run.exports).toEqual({ name: `script-${scripts}.cjs`, dir: work.path, self: true, later: 42 });
  });

  it('takes what module.exports is set to', () => {
    const run = runCachedScript(script('module.exports = class Dispatcher {};'), undefined);
    expect(typeof run.exports).toBe('function');
    expect((run.exports as { name: string }).name).toBe('Dispatcher');
  });

  it('keeps the script’s line numbers in stack traces', () => {
    const file = script('\n\nexports.where = () => new Error("here").stack;');
    const stack = (runCachedScript(file, undefined).exports as { where: () => string }).where();
    // The header comment is line 1; the function is on line 4.
    expect(stack).toContain(`${file}:4:`);
  });

  it('without a directory keeps no cache', () => {
    const run = runCachedScript(script('exports.x = 1;'), undefined);
    expect(run.cache).toBe('off');
    expect(run.save()).toBe(false);
  });

  it('with none yet, makes one on save, named by the script, through a temp file renamed into place', () => {
    const dir = cacheDir();
    const file = script('exports.f = (a) => a + 1; exports.f(1);');
    const run = runCachedScript(file, dir);
    expect(run.cache).toBe('absent');
    expect(readdirSync(dir)).toEqual([]);
    expect(run.save()).toBe(true);
    const names = readdirSync(dir);
    expect(names).toEqual([`aerial-script-${scripts}.cjs.v8`]);
    expect(readFileSync(join(dir, names[0]!)).length).toBeGreaterThan(100);
  });

  it('turns down a damaged cache, runs the script all the same, and saves a good one over it', () => {
    const dir = cacheDir();
    const damagedFile = script('exports.ok = "still";');
    const cacheFile = join(dir, `aerial-script-${scripts}.cjs.v8`);
    writeFileSync(cacheFile, Buffer.alloc(4096, 7));
    const run = runCachedScript(damagedFile, dir);
    expect(run.cache).toBe('rejected');
    expect(run.exports).toEqual({ ok: 'still' });
    expect(run.save()).toBe(true);
    expect(readFileSync(cacheFile).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it('a cache that cannot be written (its place is taken by a directory) leaves no temp file and says so', () => {
    const dir = cacheDir();
    const file = script('exports.z = 1;');
    const run = runCachedScript(file, dir);
    // Make the cache's own name a directory: the rename over it fails.
    run.save();
    const [name] = readdirSync(dir);
    const taken = join(dir, name!);
    rmSync(taken);
    mkdirSync(taken);
    writeFileSync(join(taken, 'inside'), 'x');
    expect(run.save()).toBe(false);
    expect(readdirSync(dir)).toEqual([name]);
    expect(existsSync(join(taken, 'inside'))).toBe(true);
  });
});

/** Node 22.8 and later say where their compile cache is; Node 20 has none. */
const nodeKnowsItsCache = typeof (nodeModule as { getCompileCacheDir?: unknown }).getCompileCacheDir === 'function';

describe('compileCacheDir', () => {
  it.runIf(nodeKnowsItsCache)('is where Node keeps its compile cache, on a Node that has one', () => {
    expect(compileCacheDir({ NODE_COMPILE_CACHE: join(work.path, 'ignored') })).toBe((nodeModule as unknown as { getCompileCacheDir(): string | undefined }).getCompileCacheDir());
  });

  it.runIf(!nodeKnowsItsCache)('on a Node without one, is laid out as Node lays out its own: per version, architecture and user, private to the user', () => {
    const base = join(work.path, 'node-cache');
    const dir = compileCacheDir({ NODE_COMPILE_CACHE: base });
    expect(dir).toBe(join(base, `aerial-${process.version}-${process.arch}-${process.getuid?.() ?? 0}`));
    expect(statSync(dir!).mode & 0o777).toBe(0o700);
    expect(compileCacheDir({ NODE_COMPILE_CACHE: base, NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined();
  });

  it.runIf(!nodeKnowsItsCache)('on a Node without one, keeps none where the place is taken by a file', () => {
    const base = join(work.path, 'taken');
    writeFileSync(base, 'not a directory');
    expect(compileCacheDir({ NODE_COMPILE_CACHE: base })).toBeUndefined();
  });
});
