// Runs the CLI inside a private mount namespace (`unshare --mount`, as root),
// where a test can mount a tiny, full or read-only tmpfs, or bind one file over
// another, without touching the machine's mounts: they end with the namespace.
// The test's bash script calls `aerial …` for each run of bin/aerial.js; each
// run's exit code, stdout, stderr and duration are handed back in order, and
// what the script itself prints (`ls`, `cat`) is its stdout.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { assertNoSecrets, BIN, cliEnv, tempDir, type CliResult } from './cli.js';

const isRoot = process.getuid?.() === 0;

/** Whether this machine lets the tests mount in a namespace of their own (root, unshare, tmpfs): found once. */
export const privateMountsAvailable: boolean = (() => {
  if (!isRoot) return false;
  const probe = tempDir('aerial-unshare-');
  try {
    const probed = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs -o size=16k tmpfs "$1"', 'sh', probe.path], { stdio: 'ignore' });
    return probed.status === 0;
  } finally {
    probe.remove();
  }
})();

export interface MountedRun extends CliResult {
  /** How long the run took, in milliseconds. */
  ms: number;
}

export interface MountedScript {
  /** The script's own exit code (it runs with `set -e`: a setup step that failed shows here). */
  exitCode: number;
  /** What the script printed itself (not the runs' output). */
  stdout: string;
  stderr: string;
  /** Each `aerial …` the script ran, in order. */
  runs: MountedRun[];
}

/**
 * The prelude of every script: `aerial ARGS…` runs bin/aerial.js with stdin
 * from $STDIN (default: nothing), killed after 20 s so a hang fails the test
 * rather than the run; it never fails the script itself.
 */
const PRELUDE = `set -eu
node=$1 bin=$2 results=$3
shift 3
runs=0
aerial() {
  runs=$((runs + 1))
  local started code
  started=$(date +%s%N)
  code=0
  timeout -s KILL 20 "$node" "$bin" "$@" >"$results/$runs.out" 2>"$results/$runs.err" <"\${STDIN:-/dev/null}" || code=$?
  echo "$code" >"$results/$runs.code"
  echo $((($(date +%s%N) - started) / 1000000)) >"$results/$runs.ms"
}
`;

/** Runs `script` (bash) in a private mount namespace with the CLI's clean environment for `configDir` plus `env`. */
export async function inPrivateMounts(script: string, options: { configDir: string; env?: Record<string, string | undefined>; cwd?: string }): Promise<MountedScript> {
  const results = tempDir('aerial-mounted-runs-');
  try {
    const shell = await execa('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', `${PRELUDE}${script}`, 'bash', process.execPath, BIN, results.path], {
      env: cliEnv(options.configDir, options.env),
      extendEnv: false,
      cwd: options.cwd ?? results.path,
      reject: false,
      timeout: 120_000,
      stripFinalNewline: false,
    });
    const runs: MountedRun[] = [];
    for (let n = 1; ; n++) {
      let exitCode: string;
      try {
        exitCode = readFileSync(join(results.path, `${n}.code`), 'utf8');
      } catch {
        break;
      }
      const read = (ext: string) => readFileSync(join(results.path, `${n}.${ext}`), 'utf8');
      const run = { exitCode: Number(exitCode), stdout: read('out'), stderr: read('err'), ms: Number(read('ms')) };
      assertNoSecrets(run.stdout, `stdout of run ${n} in private mounts`);
      assertNoSecrets(run.stderr, `stderr of run ${n} in private mounts`);
      runs.push(run);
    }
    return { exitCode: shell.exitCode ?? -1, stdout: String(shell.stdout), stderr: String(shell.stderr), runs };
  } finally {
    results.remove();
  }
}
