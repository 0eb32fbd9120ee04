// Bundled in place of node:assert for undici, which checks its own invariants
// with assert(value[, message]) and nothing else of the module. Loading
// node:assert costs about a millisecond of every command that talks to the
// service; this checks the value itself and reaches for the real assert only
// when a check fails, so the error thrown is exactly node:assert's.
'use strict';
module.exports = function assert(value, message) {
  if (!value) require('node:assert')(value, message);
};
