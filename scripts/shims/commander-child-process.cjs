// Bundled in place of node:child_process for commander, which requires it at
// load time only to run executable subcommands (aerial has none). Loading it
// eagerly costs several milliseconds of every start; this defers it to first use.
'use strict';
let childProcess;
module.exports = new Proxy(
  {},
  {
    get(_target, name) {
      childProcess ??= require('node:child_process');
      return childProcess[name];
    },
  },
);
