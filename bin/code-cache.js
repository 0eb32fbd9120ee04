// Loads the CommonJS bundle in dist/ with V8 code caches beside its files.
//
// Compiling the bundle's JavaScript is a good part of every command's start-up
// (startup is a product goal). From Node 22.1 Node keeps a compile cache of its
// own (module.enableCompileCache): enableCodeCache() turns it on and that is
// all. Node 20 has none, so there the build runs a few commands
// once with `record` on and saves, next to each bundle file, the bytecode V8
// compiled for it (`<file>.cache`); later runs hand that to V8 instead of
// compiling again. V8 checks each cache against its own version, flags and the
// source, and silently compiles from source when it does not match: a stale or
// missing cache only costs the time it would have saved.
'use strict';
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { dirname, join, sep } = require('node:path');
const { debuglog } = require('node:util');
const { setFlagsFromString } = require('node:v8');
const vm = require('node:vm');

/**
 * Node's CommonJS module class. Before Node 22, whose compile-cache functions
 * only node:module carries, it is taken as this file's own module's class:
 * the same object, without what require('node:module') loads on top of it
 * (the ES module loader and source-map support, for nothing a command uses).
 */
const Module = hasCompileCache() ? require('node:module') : module.constructor;

function hasCompileCache() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
}

/** NODE_DEBUG=aerial-code-cache tells, file by file, whether V8 took the cache. */
const debug = debuglog('aerial-code-cache');

const CACHE_SUFFIX = '.cache';

/**
 * undici parses HTTP in WebAssembly, compiled at a command's first connection.
 * V8's optimising tier for that module costs more than a whole `list --json`
 * (about 90 ms of CPU here, measured with and without the flag), while its
 * baseline compiler, Liftoff, is plenty fast for the responses a CLI reads.
 * aerial runs no other WebAssembly. The flag is part of what a code cache
 * (V8's, or Node's own) is checked against, so it is set before anything is
 * compiled, for recording and loading alike, on every Node.
 */
function setEngineFlags() {
  setFlagsFromString('--liftoff-only');
}

/**
 * Compiles every module required from `bundleDir` through V8's code cache.
 * With `record`, keeps the compiled scripts so saveCodeCache() can write their
 * caches once the commands of interest have run (V8 includes every function
 * compiled by then, not only the top level).
 */
function useCodeCache(bundleDir, { record = false, nodeModule = Module } = {}) {
  setEngineFlags();
  const prefix = bundleDir.endsWith(sep) ? bundleDir : bundleDir + sep;
  const recorded = [];
  // The bundle's files require each other by exact relative names ('./chunks/chunk-….js'): those are
  // put together here rather than searched for (a third of a millisecond each, two dozen per command).
  const resolve = nodeModule._resolveFilename;
  nodeModule._resolveFilename = function resolveInBundle(request, parent, ...rest) {
    const from = parent?.filename;
    if (typeof from === 'string' && from.startsWith(prefix) && request.endsWith('.js') && (request.startsWith('./') || request.startsWith('../'))) {
      return join(dirname(from), request);
    }
    return resolve.call(this, request, parent, ...rest);
  };
  const compile = nodeModule.prototype._compile;
  nodeModule.prototype._compile = function compileWithCache(content, filename) {
    if (!filename.startsWith(prefix)) return compile.call(this, content, filename);
    const cacheFile = filename + CACHE_SUFFIX;
    let cachedData;
    if (!record) {
      try {
        cachedData = readFileSync(cacheFile);
      } catch {
        // No cache (a build without one, or a read-only copy): compile from source.
      }
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData });
    if (record) recorded.push({ script, cacheFile });
    else debug('%s %s', cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used', filename);
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(this.exports, this.exports, requireFor(this, nodeModule), this, filename, dirname(filename));
  };
  return {
    /** Writes each recorded script's cache (temp file, then rename: a concurrent reader never sees half of one). */
    saveCodeCache() {
      for (const [index, { script, cacheFile }] of recorded.entries()) {
        const temp = join(dirname(cacheFile), `.${process.pid}.${index}.tmp`);
        writeFileSync(temp, script.createCachedData());
        renameSync(temp, cacheFile);
      }
      return recorded.length;
    },
  };
}

/**
 * The `require` a module's code is given, as Node makes it for the modules it
 * compiles itself: bound to the module (its paths are already worked out),
 * rather than a new one made from the file name, as Module.createRequire does.
 */
function requireFor(mod, nodeModule) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => nodeModule._resolveFilename(request, mod, false, options);
  require.cache = nodeModule._cache;
  require.main = process.mainModule;
  return require;
}

/**
 * Turns on the code cache this Node offers for the bundle in `bundleDir`, and
 * says which: Node's own compile cache where it has one (kept in the OS temp
 * directory or NODE_COMPILE_CACHE, checked against each file's content, and
 * off under NODE_DISABLE_COMPILE_CACHE), else the caches the build recorded
 * beside the bundle files. `nodeModule` is node:module; tests pass another.
 */
function enableCodeCache(bundleDir, nodeModule = Module) {
  setEngineFlags();
  if (typeof nodeModule.enableCompileCache === 'function') {
    const { status } = nodeModule.enableCompileCache();
    // A cache directory it cannot create or write: the recorded caches are still there.
    if (status !== nodeModule.constants.compileCacheStatus.FAILED) return 'node';
  }
  useCodeCache(bundleDir, { nodeModule });
  return 'recorded';
}

module.exports = { enableCodeCache, useCodeCache, CACHE_SUFFIX };
