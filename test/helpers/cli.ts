// Runs the real bin/aerial.js in a child process with an isolated config
// directory. Every run checks that no API key it knows of appears in stdout or
// stderr, so secret hygiene is asserted by every end-to-end test.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'aerial.js');

/** Keys that must never be printed; tests add the ones they use. */
const secrets = new Set<string>();
export function registerSecret(key: string): void {
  secrets.add(key);
}

/**
 * `setpriv` arguments that run a command as the unprivileged user nobody
 * (65534), to see what a user without root meets (a directory they may not
 * write). It keeps one capability, to read and search any directory: so it
 * reaches bin/aerial.js and node in a checkout under a private home (0700),
 * and still may write nowhere that nobody may not.
 */
export const AS_UNPRIVILEGED_USER = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=+dac_read_search', '--ambient-caps=+dac_read_search'];

export function tempDir(prefix = 'aerial-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** `aerial` on a PATH in `root/bin`, as CI images and cluster nodes have it: the CLI under test, run by this Node. */
export function installAerial(root: string): string {
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'aerial'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
  return bin;
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function assertNoSecrets(text: string, where: string): void {
  for (const secret of secrets) {
    if (text.includes(secret)) throw new Error(`API key leaked in ${where}: ${text.slice(0, 300)}`);
  }
}

/** Proxy variables of the machine running the tests: the sandbox is on loopback, so none is inherited. */
const PROXY_VARIABLE = /^(https?|no)_proxy$/i;

/** A clean environment: no inherited AERIAL_* settings or proxies, no colour unless asked, data beside the config. */
export function cliEnv(configDir: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AERIAL_') && key !== 'FORCE_COLOR' && key !== 'NO_COLOR' && !PROXY_VARIABLE.test(key)) env[key] = value;
  }
  // The sandbox's data (under XDG_DATA_HOME) kept beside the test's config, never in the user's home.
  return { ...env, AERIAL_CONFIG_DIR: configDir, XDG_DATA_HOME: join(configDir, 'data'), ...extra };
}

export interface RunOptions {
  configDir: string;
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  cwd?: string;
  timeout?: number;
  encoding?: Options['encoding'];
}

export async function runCli(args: string[], options: RunOptions): Promise<CliResult> {
  const result = await execa('node', [BIN, ...args], {
    env: cliEnv(options.configDir, options.env),
    extendEnv: false,
    input: options.input,
    stdin: options.input === undefined ? 'ignore' : undefined,
    cwd: options.cwd ?? options.configDir,
    reject: false,
    timeout: options.timeout ?? 30_000,
    stripFinalNewline: false,
  });
  const stdout = String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  assertNoSecrets(stdout, `stdout of aerial ${args.join(' ')}`);
  assertNoSecrets(stderr, `stderr of aerial ${args.join(' ')}`);
  return { exitCode: result.exitCode ?? -1, stdout, stderr };
}

/** Polls `condition` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The stderr of a CLI started with spawnCli, as it has arrived so far (execa hands it over only at the end). */
export function stderrSoFar(child: ResultPromise): () => string {
  let text = '';
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}

/** Starts the CLI without waiting, for tests that interrupt it or talk to it while it runs. */
export function spawnCli(args: string[], options: RunOptions): ResultPromise {
  return execa('node', [BIN, ...args], {
    env: cliEnv(options.configDir, options.env),
    extendEnv: false,
    cwd: options.cwd ?? options.configDir,
    reject: false,
    timeout: options.timeout ?? 30_000,
  });
}

export interface PipedResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export interface PipeReader {
  /** Milliseconds before the first read: the CLI has long finished its work and waits on the pipe. */
  startAfterMs?: number;
  /** Milliseconds between reads of one chunk each. */
  pauseMs?: number;
  /** Close the reading end of stdout (or stderr) at once, as `| head` does once it has had enough. */
  closeStdout?: boolean;
  closeStderr?: boolean;
}

/**
 * Runs the CLI with stdout and stderr on real pipes read as a slow reader
 * reads (or closed early), unlike execa, which reads everything at once.
 */
export async function runPiped(args: string[], options: RunOptions & PipeReader): Promise<PipedResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(options.configDir, options.env) as NodeJS.ProcessEnv,
    cwd: options.cwd ?? options.configDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout ?? 60_000);
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  let stderr = '';
  const readStderr = (async () => {
    if (options.closeStderr) return child.stderr.destroy();
    for await (const chunk of child.stderr) stderr += String(chunk);
  })();
  const stdout: Buffer[] = [];
  const readStdout = (async () => {
    if (options.closeStdout) return child.stdout.destroy();
    // A listener, not pause(): once the child exits, Node resumes every stdio
    // stream nobody listens to and drops what it holds, and output that fits
    // the socket's buffer lets the child exit before the reader starts. The
    // listener reads nothing, so the reader stays slow.
    child.stdout.on('readable', () => {});
    await new Promise((resolve) => setTimeout(resolve, options.startAfterMs ?? 0));
    for await (const chunk of child.stdout) {
      stdout.push(chunk as Buffer);
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  })();
  const [[exitCode, signal]] = await Promise.all([exited, readStdout, readStderr]);
  clearTimeout(timer);
  const out = Buffer.concat(stdout);
  assertNoSecrets(out.toString('latin1'), `stdout of aerial ${args.join(' ')}`);
  assertNoSecrets(stderr, `stderr of aerial ${args.join(' ')}`);
  return { exitCode, signal, stdout: out, stderr };
}
