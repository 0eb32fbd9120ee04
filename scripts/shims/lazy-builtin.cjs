// The shape shared by the lazy stand-ins (see SHIMS in scripts/build.mjs): a
// module object whose `deferred` members answer without loading the built-in
// (functions that load it on their first call, constants fixed by a standard,
// names this Node does not have), and whose every other name is read from the
// real module, loaded then. So nothing is missing from a stand-in; it is lazy
// only for what a dependency reads while it loads.
'use strict';

/** A stand-in for the built-in `name`, lazy for the members of `deferred` (a function of the loader). */
function lazyBuiltin(name, deferred) {
  let builtin;
  const real = () => (builtin ??= require(name));
  const members = deferred(real);
  return new Proxy(members, {
    get: (target, member) => (Object.hasOwn(target, member) ? target[member] : real()[member]),
  });
}

/** A function that calls `member` of the module `real()` returns, loading it on the first call. */
const forward = (real, member) =>
  function (...args) {
    return real()[member].apply(this, args);
  };

/**
 * Whether this Node has a feature that first shipped in the given releases,
 * one per release line, as Node's documentation lists them ({ 22: 15, 23: 8 }
 * for "v23.8.0, v22.15.0"); every later line has it too.
 */
function nodeHas(firstReleases, version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  const lines = Object.keys(firstReleases).map(Number);
  return major > Math.max(...lines) || (major in firstReleases && minor >= firstReleases[major]);
}

module.exports = { lazyBuiltin, forward, nodeHas };
