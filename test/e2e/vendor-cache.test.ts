// The bundle's vendor scripts (commander, undici, zod: dist/vendor/) run with a V8 code
// cache of their own, made as a command that ended well exits, and kept where
// Node keeps its compile cache (src/bundle/vendor-script.ts). Shown here as
// users run the CLI, on this machine's Node and on Node 24 (Node 20 has no
// compile cache of its own; the scripts keep theirs where later lines keep
// Node's): the cache is made once, taken afterwards (a taken cache is never
// written again), made again when damaged, never made by a run that failed,
// absent when Node's compile cache is off, and whole when many processes make
// it at once.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeLines } from '../../scripts/node-lines.mjs';
import { BIN, cliEnv, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** This machine's Node, and Node 24 (scripts/node-lines.mjs) where that is another. */
const NODES = [...new Set([process.execPath, nodeLines(['24'])[0]!.node])];
const work = tempDir('aerial-vendor-cache-');
afterAll(() => work.remove());

let caches = 0;
/** A compile cache directory of its own (NODE_COMPILE_CACHE), as a fresh machine has. */
const freshCacheDir = () => join(work.path, `cache-${++caches}`);

function list(node: string, cacheDir: string, extra: Record<string, string | undefined> = {}) {
  return execa(node, [BIN, 'list', '--json'], {
    env: cliEnv(home.path, { ...sandbox.env(), NODE_COMPILE_CACHE: cacheDir, NODE_DISABLE_COMPILE_CACHE: undefined, ...extra }),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
  });
}

/** The vendor scripts' caches under a compile cache directory (Node puts its own in a subdirectory per version). */
function vendorCaches(cacheDir: string): Map<string, { path: string; ino: number; mtimeMs: number; bytes: Buffer }> {
  const found = new Map<string, { path: string; ino: number; mtimeMs: number; bytes: Buffer }>();
  if (!existsSync(cacheDir)) return found;
  for (const sub of readdirSync(cacheDir)) {
    for (const name of readdirSync(join(cacheDir, sub))) {
      if (!name.startsWith('aerial-')) continue;
      const path = join(cacheDir, sub, name);
      const info = statSync(path);
      found.set(name, { path, ino: info.ino, mtimeMs: info.mtimeMs, bytes: readFileSync(path) });
    }
  }
  return found;
}

const VENDOR_SCRIPTS = readdirSync(join(BIN, '..', '..', 'dist', 'vendor')).filter((name) => name.endsWith('.cjs'));

describe.each(NODES)('the vendor scripts’ code cache, on %s', (node) => {
  it('is made by the first list --json, one per vendor script, and taken (never written again) by the next', async () => {
    expect(VENDOR_SCRIPTS.map((name) => name.replace(/-[0-9a-f]{8}\.cjs$/, '')).sort()).toEqual(['commander', 'undici', 'zod']);
    const dir = freshCacheDir();
    const first = await list(node, dir);
    expect(first.exitCode).toBe(0);
    const made = vendorCaches(dir);
    expect([...made.keys()].sort()).toEqual(VENDOR_SCRIPTS.map((name) => `aerial-${name}.v8`).sort());
    // More than the code compiled before the script runs: the request path is in it.
    for (const { bytes } of made.values()) expect(bytes.length).toBeGreaterThan(50_000);
    const second = await list(node, dir);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    for (const [name, after] of vendorCaches(dir)) {
      const before = made.get(name)!;
      expect([name, after.ino, after.mtimeMs]).toEqual([name, before.ino, before.mtimeMs]);
    }
  });

  it('is made again when damaged, and the command works all the same', async () => {
    const dir = freshCacheDir();
    expect((await list(node, dir)).exitCode).toBe(0);
    const good = vendorCaches(dir);
    for (const { path, bytes } of good.values()) writeFileSync(path, Buffer.alloc(bytes.length, 0x41));
    const damaged = await list(node, dir);
    expect(damaged.exitCode).toBe(0);
    expect(JSON.parse(damaged.stdout)).toMatchObject({ content: expect.any(Array) });
    for (const [name, after] of vendorCaches(dir)) {
      expect([name, after.bytes.equals(Buffer.alloc(after.bytes.length, 0x41))]).toEqual([name, false]);
    }
  });

  it('is not made by a run that failed, even one that loaded the scripts', async () => {
    const dir = freshCacheDir();
    // A key the sandbox does not know: refused (401) once the request has gone out through undici.
    const refused = await list(node, dir, { AERIAL_API_KEY: 'sbx_not_a_key_of_this_sandbox' });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/401|key/i);
    expect([...vendorCaches(dir).keys()]).toEqual([]);
  });

  it('is not made where Node’s compile cache is off', async () => {
    const dir = freshCacheDir();
    const off = await list(node, dir, { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(off.exitCode).toBe(0);
    expect([...vendorCaches(dir).keys()]).toEqual([]);
  });

  it('made by six processes at once is whole: each made it in a file of its own, renamed into place, and the next run takes it', async () => {
    const dir = freshCacheDir();
    const runs = await Promise.all(Array.from({ length: 6 }, () => list(node, dir)));
    expect(runs.map((run) => run.exitCode)).toEqual([0, 0, 0, 0, 0, 0]);
    const made = vendorCaches(dir);
    expect(made.size).toBe(VENDOR_SCRIPTS.length);
    // No temp file left behind.
    for (const sub of readdirSync(dir)) expect(readdirSync(join(dir, sub)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect((await list(node, dir)).exitCode).toBe(0);
    for (const [name, after] of vendorCaches(dir)) expect([name, after.mtimeMs]).toEqual([name, made.get(name)!.mtimeMs]);
  });
});
