// Bundled in place of node:fs/promises for undici, which takes readFile,
// writeFile and mkdir from it at load time for its mock-snapshot recorder, a
// testing aid aerial never uses. Loading node:fs/promises eagerly costs every
// command that talks to the service (see SHIMS in scripts/build.mjs); here
// those three load it on their first call.
'use strict';
const { lazyBuiltin, forward } = require('./lazy-builtin.cjs');

module.exports = lazyBuiltin('node:fs/promises', (real) => ({
  readFile: forward(real, 'readFile'),
  writeFile: forward(real, 'writeFile'),
  mkdir: forward(real, 'mkdir'),
}));
