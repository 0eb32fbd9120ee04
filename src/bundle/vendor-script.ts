// Third-party code that commands run at every start (commander, and undici's
// dispatchers and zod for every request) ships as plain CommonJS scripts,
// dist/vendor/<name>-<hash>.cjs, that the bundle runs through node:vm with a
// V8 code cache of their own.
//
// Why not leave them to Node's compile cache, as the rest of the bundle is:
// Node makes that cache as a module is compiled, before it runs, so it holds
// only the code V8 compiles up front, and every function a command calls is
// compiled again at every start; undici's request path alone is hundreds of
// them. A cache made after the script has served a command
// (vm.Script#createCachedData) holds those too (docs/performance.md has what
// it saves). It follows Node's own settings: it lives in the directory Node's
// compile cache uses for this Node version, flags and user
// (module.getCompileCacheDir), and there is none when that is off
// (NODE_DISABLE_COMPILE_CACHE). Node 20 has no compile cache of its own: the
// scripts' caches go where its successors keep theirs.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** What became of a script's code cache as it was run. */
export type CodeCacheUse =
  /** V8 took the cache: nothing compiled that the cache had. */
  | 'accepted'
  /** A cache was there but V8 turned it down (another V8, other flags, a damaged file): it is made again. */
  | 'rejected'
  /** No cache yet: one is made. */
  | 'absent'
  /** No directory to keep one in. */
  | 'off';

export interface ScriptRun {
  exports: unknown;
  cache: CodeCacheUse;
  /**
   * Writes the cache of what V8 has compiled of the script so far (call it
   * once the script has done its work), atomically: a temp file renamed over
   * the old, so that processes writing at once leave one whole cache. False
   * when nothing was written (no directory, or it could not be written).
   */
  save(): boolean;
}

/**
 * The directory Node's compile cache uses in this process, if it is on. A
 * Node without module.getCompileCacheDir (Node 20, whose Node has no compile
 * cache at all) gets one laid out as Node lays out its own: under
 * NODE_COMPILE_CACHE or the OS temp directory, one directory per Node version,
 * architecture and user, made private to the user and used only if it is theirs.
 */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const get = (nodeModule as { getCompileCacheDir?: () => string | undefined }).getCompileCacheDir;
  if (get) return get();
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const uid = process.getuid?.() ?? 0;
  const dir = join(env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache'), `aerial-${process.version}-${process.arch}-${uid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = statSync(dir);
    return info.isDirectory() && (process.getuid === undefined || info.uid === uid) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the CommonJS script `file` as Node would require it (exports, require,
 * module, __filename, __dirname), with the code cache kept in `cacheDir`
 * under the script's file name. The build names each vendor script by its
 * content (undici-<hash>.cjs), so a changed script never meets an old cache,
 * and nothing is hashed at start-up. V8 itself turns down a cache of another
 * V8 or other flags.
 */
export function runCachedScript(file: string, cacheDir: string | undefined): ScriptRun {
  const source = readFileSync(file, 'utf8');
  const cacheFile = cacheDir && join(cacheDir, `aerial-${basename(file)}.v8`);
  let cachedData: Buffer | undefined;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet, or unreadable: the script compiles as it would without one.
    }
  }
  // The wrapper on the script's first line keeps every other line where it is in stack traces.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, nodeModule.createRequire(file), module, file, dirname(file));
  const cache: CodeCacheUse = !cacheFile ? 'off' : !cachedData ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted';
  return {
    exports: module.exports,
    cache,
    save() {
      if (!cacheFile) return false;
      const temp = `${cacheFile}.${process.pid}.tmp`;
      try {
        writeFileSync(temp, script.createCachedData());
        renameSync(temp, cacheFile);
        return true;
      } catch {
        rmSync(temp, { force: true });
        return false;
      }
    },
  };
}

/**
 * The exports of dist/vendor/`name` (a file name the build gives). Without a cache V8 took, one is written
 * as the process exits, if it exits 0: a command that ended well ran the code
 * commands use (one stopped by a usage error may have run none of it).
 */
export function loadVendorScript(name: string): unknown {
  // This module sits in dist/chunks/ or, should the build place it there, in dist/ itself.
  // (Not bundled-script.ts's lookup: importing it would cost `list --json` one more module to load.)
  const file = [`../vendor/${name}`, `./vendor/${name}`].map((path) => fileURLToPath(new URL(path, import.meta.url))).find((path) => existsSync(path));
  if (!file) throw new Error(`the bundle's vendor/${name} is missing; reinstall aerial`);
  const run = runCachedScript(file, compileCacheDir());
  if (run.cache !== 'accepted' && run.cache !== 'off') {
    process.once('exit', (code) => {
      if (code === 0) run.save();
    });
  }
  return run.exports;
}
