// A terminal for running commands in this process, as gh's iostreams.Test()
// gives its command tests: standard output and error are captured, standard
// input is given, each stream says whether it is a terminal and how wide it is,
// the environment is the test's own (never this process's), and signals reach
// the command alone. runInProcess() runs a command line through the real
// program (main() in src/main.ts) in such a terminal and gives back the exit
// code and what was written. End-to-end tests spawn bin/aerial.js instead
// (helpers/cli.ts); this is for tests of the program and its commands.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll } from 'vitest';
import { main } from '../../src/main.js';
import { openContext, type Context, type GlobalOptions, type Process } from '../../src/cli/context.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { assertNoSecrets, type CliResult } from './cli.js';

/** Standard output or error: what was written, and what it claims to be. */
export class CapturedOutput extends Writable {
  isTTY: boolean;
  columns?: number;
  private readonly chunks: Buffer[] = [];
  private readerGone = false;
  private readonly waiters: Array<() => void> = [];

  constructor(options: { isTTY?: boolean; columns?: number } = {}) {
    super();
    this.isTTY = options.isTTY ?? false;
    this.columns = options.columns;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // As a pipe reports it: once the write has been tried, not while it is being made.
    if (this.readerGone) return void setImmediate(() => callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' })));
    this.chunks.push(Buffer.from(chunk));
    for (const wake of this.waiters.splice(0)) wake();
    callback();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** From now on every write fails as one to a pipe whose reader went away (`| head`) does. */
  closeReader(): void {
    this.readerGone = true;
  }

  /** Resolves with the text written so far once it matches `pattern`. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.text())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in: ${this.text().slice(-300)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.text();
  }
}

export interface TestTerminalOptions {
  /** The whole environment the command sees; AERIAL_CONFIG_DIR defaults to a private temp dir, XDG_DATA_HOME to its data/. */
  env?: Record<string, string | undefined>;
  /** Which streams are terminals; none by default, as in a script. */
  tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  /** Width of stdout and stderr, when they are terminals. */
  columns?: number;
  /** What standard input holds; empty by default. Ended unless `openStdin`. */
  input?: string | Buffer;
  /** Leaves standard input open, for a test that types into it as it goes. */
  openStdin?: boolean;
}

/** One config dir per test file for terminals given none: never the user's own. */
let fallbackConfigDir: string | undefined;
function privateConfigDir(): string {
  if (!fallbackConfigDir) {
    fallbackConfigDir = join(mkdtempSync(join(tmpdir(), 'aerial-terminal-')), 'config');
  }
  return fallbackConfigDir;
}
// Test files run in worker threads, which end without an 'exit' event: each file removes its own.
afterAll(() => {
  if (fallbackConfigDir) rmSync(dirname(fallbackConfigDir), { recursive: true, force: true });
  fallbackConfigDir = undefined;
});

export class TestTerminal implements Process {
  readonly env: Record<string, string | undefined>;
  readonly stdout: CapturedOutput;
  readonly stderr: CapturedOutput;
  readonly stdin: PassThrough & { isTTY: boolean };
  /** Codes the command asked to exit with at once (a signal while it was already stopping). */
  readonly exits: number[] = [];
  private readonly signals = new EventEmitter();

  constructor(options: TestTerminalOptions = {}) {
    const configDir = options.env?.AERIAL_CONFIG_DIR ?? privateConfigDir();
    // The sandbox's data (under XDG_DATA_HOME) beside the config, never in the user's home.
    this.env = { AERIAL_CONFIG_DIR: configDir, XDG_DATA_HOME: join(configDir, 'data'), ...options.env };
    this.stdout = new CapturedOutput({ isTTY: options.tty?.stdout, columns: options.tty?.stdout ? options.columns : undefined });
    this.stderr = new CapturedOutput({ isTTY: options.tty?.stderr, columns: options.tty?.stderr ? options.columns : undefined });
    this.stdin = Object.assign(new PassThrough(), { isTTY: options.tty?.stdin ?? false });
    if (options.input !== undefined) this.stdin.write(options.input);
    if (!options.openStdin) this.stdin.end();
  }

  on(signal: NodeJS.Signals, listener: () => void): this {
    this.signals.on(signal, listener);
    return this;
  }

  off(signal: NodeJS.Signals, listener: () => void): this {
    this.signals.off(signal, listener);
    return this;
  }

  exit(code: number): void {
    this.exits.push(code);
  }

  /** Sends a stop signal to the command running in this terminal, and to nothing else. */
  kill(signal: NodeJS.Signals = 'SIGINT'): void {
    this.signals.emit(signal);
  }

  /** A Context as a command run here with `globals` gets one, for tests of what commands call. */
  context(globals: GlobalOptions = {}): Promise<Context> {
    return openContext(this, globals, new Shutdown({ exit: (code) => this.exit(code) }));
  }
}

/**
 * Runs `aerial <args>` in this process, in `terminal`: the exit code and
 * what was written. Like every run of the CLI in the tests, it fails when an
 * API key the tests know of appears in the output.
 */
export async function runInProcess(args: string[], terminal = new TestTerminal()): Promise<CliResult> {
  const exitCode = await main([process.execPath, 'aerial', ...args], terminal);
  const result = { exitCode, stdout: terminal.stdout.text(), stderr: terminal.stderr.text() };
  assertNoSecrets(result.stdout, `stdout of aerial ${args.join(' ')} (in-process)`);
  assertNoSecrets(result.stderr, `stderr of aerial ${args.join(' ')} (in-process)`);
  return result;
}

export interface InProcessRunOptions extends Omit<TestTerminalOptions, 'env'> {
  /** The config directory (AERIAL_CONFIG_DIR), as runCli's `configDir`; the sandbox's data goes in its data/. */
  configDir: string;
  /** Variables besides it: the command sees these and nothing of this process's own environment. */
  env?: Record<string, string | undefined>;
}

/**
 * runCli (helpers/cli.ts) without the process: `aerial <args>` run in this
 * process in a terminal of `options`, for tests that only need to reach a
 * command. Paths the command is given should be absolute: it runs in this
 * process's working directory.
 */
export function runCommand(args: string[], options: InProcessRunOptions): Promise<CliResult> {
  const { configDir, env, ...terminal } = options;
  return runInProcess(args, new TestTerminal({ ...terminal, env: { AERIAL_CONFIG_DIR: configDir, XDG_DATA_HOME: join(configDir, 'data'), ...env } }));
}
