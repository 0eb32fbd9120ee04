// Bundled in place of node:zlib for undici, which decompresses only for fetch(),
// its decompress interceptor and WebSocket compression, none of which aerial
// uses, yet reads the module at load time: a few constructors, one constant,
// and whether this Node has zstd (undici's runtime-features). Loading node:zlib
// eagerly costs every command that talks to the service (see SHIMS in
// scripts/build.mjs); here the constructors load it on their first call, and
// the rest is answered as node:zlib would answer it.
'use strict';
const { lazyBuiltin, forward, nodeHas } = require('./lazy-builtin.cjs');

module.exports = lazyBuiltin('node:zlib', (real) => ({
  createInflate: forward(real, 'createInflate'),
  createInflateRaw: forward(real, 'createInflateRaw'),
  createGunzip: forward(real, 'createGunzip'),
  createBrotliDecompress: forward(real, 'createBrotliDecompress'),
  // Added in v23.8.0 and v22.15.0.
  createZstdDecompress: nodeHas({ 22: 15, 23: 8 }) ? forward(real, 'createZstdDecompress') : undefined,
  // zlib's own default (MAX_WBITS in zlib.h).
  Z_DEFAULT_WINDOWBITS: 15,
}));
