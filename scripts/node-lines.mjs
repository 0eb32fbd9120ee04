// The Node lines users run (22, 24 and 26), as real Node builds from npm
// (the node-<platform>-<arch> packages, which carry bin/node and install with
// no download of their own), for the tests and the benchmarks to run the CLI
// on. They are installed once into node_modules/.cache/aerial-node-lines and
// reused. `node scripts/node-lines.mjs [22 24 …]` installs them and prints
// each line's path.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_LINES = ['22', '24', '26'];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIR = join(ROOT, 'node_modules', '.cache', 'aerial-node-lines');
const npmCli = process.env.npm_execpath;

/** The npm package holding Node's own build for this machine. */
const packageName = () => `node-${process.platform}-${process.arch}`;
const nodePath = (line) => join(DIR, 'node_modules', `node${line}`, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

/**
 * The path of `bin/node` for each line asked for, installing those that are
 * missing (all in one npm call). Throws, naming the command, when npm cannot
 * install them.
 */
export function nodeLines(lines = NODE_LINES) {
  const missing = lines.filter((line) => !existsSync(nodePath(line)));
  if (missing.length > 0) {
    mkdirSync(DIR, { recursive: true });
    // npm removes from the directory what it was not asked for: every line there is asked for again, so none goes.
    const specs = [...new Set([...NODE_LINES, ...lines])].map((line) => `node${line}@npm:${packageName()}@${line}`);
    const args = ['install', '--prefix', DIR, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', ...specs];
    // The npm that runs this script when there is one (npm test, npm run bench), otherwise the one on PATH.
    const [file, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ['npm', args];
    try {
      execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], shell: !npmCli && process.platform === 'win32' });
    } catch (error) {
      throw new Error(`could not install Node ${missing.join(', ')} from npm (npm ${args.join(' ')}): ${String(error.stderr ?? error.message).trim()}`);
    }
  }
  return lines.map((line) => ({ line, node: nodePath(line) }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const asked = process.argv.slice(2);
  for (const { line, node } of nodeLines(asked.length > 0 ? asked : NODE_LINES)) console.log(`${line}\t${node}`);
}
