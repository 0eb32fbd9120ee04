#!/usr/bin/env node
// Kept tiny on purpose: startup time is a product goal. `--version` and the
// plain `--help` pages are answered without loading the CLI bundle at all;
// everything else imports the bundle (ES modules, dist/cli.js) with Node's
// compile cache on (from Node 22.1), so it is compiled once, not at every run.
// CommonJS itself, so that the answers above never start the ES module loader.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const args = process.argv.slice(2);
const isHelpFlag = (arg) => arg === '--help' || arg === '-h';

/** `aerial --help` and `aerial <command> --help` at full width, as the build rendered them from the program. */
function precomputedHelp() {
  const name = args.length === 1 && isHelpFlag(args[0]) ? '' : args.length === 2 && isHelpFlag(args[1]) ? args[0] : undefined;
  if (name === undefined || (process.stdout.isTTY && process.stdout.columns < 80)) return undefined;
  try {
    return JSON.parse(readFileSync(join(__dirname, '..', 'dist', 'help.json'), 'utf8'))[name];
  } catch {
    return undefined;
  }
}

/**
 * Writes text the shim answers by itself. A reader that went away (`| head`)
 * ends it quietly with 141, as it does every command (ExitCode.BrokenPipe).
 */
function answer(text) {
  process.stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(141);
  });
  process.stdout.write(text);
}

/**
 * <temp>/aerial-node-compile-cache-<uid>, made 0700 if it is not there; undefined (no cache at all)
 * when what is there is not a directory of this user's that no one else may write, such as a link
 * or a directory another user made first. Where there are no user ids (Windows), the temp
 * directory is the user's own and Node's default is kept.
 */
function privateCompileCacheDirectory() {
  const { lstatSync, mkdirSync } = require('node:fs');
  const { tmpdir } = require('node:os');
  if (typeof process.getuid !== 'function') return join(tmpdir(), 'node-compile-cache');
  const uid = process.getuid();
  const directory = join(tmpdir(), `aerial-node-compile-cache-${uid}`);
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if (error.code !== 'EEXIST') return undefined;
  }
  try {
    const found = lstatSync(directory);
    return found.isDirectory() && found.uid === uid && (found.mode & 0o077) === 0 ? directory : undefined;
  } catch {
    return undefined;
  }
}

const help = precomputedHelp();
const isVersionFlag = (arg) => arg === '--version' || arg === '-V';
// `--version`, and `--version --json` in either order (`aerial version` is a command of the bundle).
if (args.some(isVersionFlag) && args.length <= 2 && args.every((arg) => isVersionFlag(arg) || arg === '--json')) {
  const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
  answer(args.includes('--json') ? `${JSON.stringify({ aerial: version, node: process.version })}\n` : `aerial ${version} (node ${process.version})\n`);
} else if (typeof help === 'string') {
  answer(help);
} else {
  // Node's compile cache, kept where only this user can write. Left to itself Node keeps it in
  // <temp>/node-compile-cache, which every user of a shared machine (an HPC login node) can
  // write to first, and V8 checks cached code for consistency, not for who wrote it. Node's own
  // NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still decide when set.
  const { enableCompileCache } = require('node:module');
  if (enableCompileCache) {
    if (process.env.NODE_COMPILE_CACHE || process.env.NODE_DISABLE_COMPILE_CACHE) enableCompileCache();
    else {
      const directory = privateCompileCacheDirectory();
      if (directory) enableCompileCache(directory);
    }
  }
  // Node ends a process whose event loop has emptied with exit 0, even while a command still
  // awaits something that can no longer happen (an event that fired before it was listened
  // for): such a command did not finish, and must never pass for one that succeeded.
  let ended = false;
  process.once('beforeExit', () => {
    if (ended) return;
    const message = 'unexpected: the command stopped before it finished (a bug in aerial; please report it)';
    process.stderr.write(args.includes('--json') ? `${JSON.stringify({ status: null, error: 'Unexpected', message, exitCode: 1 })}\n` : `error: ${message}\n`);
    process.exit(1);
  });
  // Relative to this file's own URL: no path-to-URL conversion needed.
  import('../dist/cli.js').then(({ main, endProcess }) =>
    // main resolves once the command has ended and stdout and stderr have handed their data to
    // the reader; exiting now skips only the wait for V8's background compile threads.
    main(process.argv).then((exitCode) => {
      ended = true;
      endProcess(exitCode);
    }),
  );
}
