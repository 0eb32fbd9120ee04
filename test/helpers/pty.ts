// Runs bin/aerial.js on a real pseudo-terminal, using util-linux `script`
// (part of every Debian/Ubuntu base system; no native module to build). The
// test writes keystrokes to script's stdin, which reach the CLI through the
// pty — so isTTY is true, raw mode works, and Ctrl-C (\x03) outside raw mode
// becomes a real SIGINT from the terminal driver.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { assertNoSecrets, BIN, cliEnv, tempDir } from './cli.js';
import { available, command } from './system-tools.js';

/**
 * Runs `script` with `args`, then the file it keeps its record of the session
 * in (a private temp file, removed when `done` is called; never a system path).
 */
export function scriptArgs(args: string[]): { args: string[]; done(): void } {
  const dir = tempDir('aerial-script-');
  return { args: [...args, join(dir.path, 'typescript')], done: () => dir.remove() };
}

export const KEYS = {
  enter: '\r',
  up: '\x1b[A',
  down: '\x1b[B',
  ctrlC: '\x03',
  backspace: '\x7f',
} as const;

export function ptyAvailable(): boolean {
  return available({
    ...command('script', [], 'apt-get install bsdutils'),
    present: () => {
      const probe = scriptArgs(['-q', '-e', '-c', 'true']);
      try {
        return spawnSync('script', probe.args).status === 0;
      } finally {
        probe.done();
      }
    },
  });
}

/** Terminal output as a person reads it: no colour, cursor movement or carriage returns. */
export function plain(text: string): string {
  return text
    .replace(/\x1b\][^\x07]*(\x07|\x1b\\)/g, '')
    .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[78=>]/g, '')
    .replace(/\r/g, '');
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface PtyOptions {
  configDir: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  columns?: number;
  rows?: number;
  timeoutMs?: number;
}

export interface PtyExit {
  exitCode: number | null;
  /** Everything the terminal showed (stdout and stderr share the pty), raw. */
  output: string;
}

export class PtySession {
  private output = '';
  private mark = 0;
  readonly exited: Promise<PtyExit>;
  private readonly child;

  /** `args` are aerial's; or, with `shellLine`, bash runs that line as typed at a prompt (args then only name it). */
  constructor(args: string[], options: PtyOptions, shellLine?: string) {
    const program = shellLine === undefined ? [process.execPath, BIN, ...args] : ['bash', '--norc', '--noprofile', '-o', 'pipefail', '-c', shellLine];
    const command = `stty cols ${options.columns ?? 100} rows ${options.rows ?? 40}; exec ${program.map(shellQuote).join(' ')}`;
    // -e: exit with the child's status; -E never: no echo of our keystrokes by script itself.
    const script = scriptArgs(['-q', '-e', '-E', 'never', '-c', command]);
    this.child = spawn('script', script.args, {
      env: cliEnv(options.configDir, { TERM: 'xterm-256color', ...options.env }) as NodeJS.ProcessEnv,
      cwd: options.cwd ?? options.configDir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Decoded as a stream: a character split between two reads (a 3-byte ▀) stays one character.
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => (this.output += chunk));
    this.child.stderr.on('data', (chunk: string) => (this.output += chunk));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    this.exited = new Promise((resolve, reject) => {
      this.child.on('close', (code) => {
        clearTimeout(timer);
        script.done();
        try {
          assertNoSecrets(this.output, `terminal output of aerial ${args.join(' ')}`);
          resolve({ exitCode: code, output: this.output });
        } catch (leak) {
          reject(leak);
        }
      });
    });
  }

  /** What the terminal has been sent so far, escape codes and all. */
  get raw(): string {
    return this.output;
  }

  /** What the terminal has shown so far, without escape codes. */
  get screen(): string {
    return plain(this.output);
  }

  /**
   * Waits until `pattern` appears in output not yet consumed by an earlier
   * wait, and returns that new output. Waiting before each answer matters:
   * inquirer drops keys typed while no prompt is listening.
   */
  async waitFor(pattern: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const fresh = plain(this.output).slice(this.mark);
      const index = typeof pattern === 'string' ? fresh.indexOf(pattern) : fresh.search(pattern);
      if (index >= 0) {
        const match = typeof pattern === 'string' ? pattern : fresh.match(pattern)![0];
        this.mark += index + match.length;
        return fresh.slice(0, index + match.length);
      }
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`timed out waiting for ${String(pattern)}; the terminal shows:\n${plain(this.output).slice(-2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  write(keys: string): void {
    this.child.stdin.write(keys);
  }

  /** Answers the prompt that shows `prompt` with `keys` (after it has appeared); returns what it showed. */
  async answer(prompt: string | RegExp, keys: string): Promise<string> {
    const shown = await this.waitFor(prompt);
    // Let inquirer finish drawing and start listening before the keys arrive.
    await new Promise((resolve) => setTimeout(resolve, 60));
    this.write(keys);
    return shown;
  }

  /** Answers a select once its whole list is drawn (up to its key hint); returns the prompt and its choices. */
  async choose(prompt: string, keys: string): Promise<string> {
    const label = await this.waitFor(prompt);
    return label + (await this.answer('⏎ select', keys));
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

export function spawnInPty(args: string[], options: PtyOptions): PtySession {
  return new PtySession(args, options);
}

/** Runs a shell command line (pipes, redirections, `~`) on a pseudo-terminal, as pasted at a bash prompt. */
export function spawnShellInPty(line: string, options: PtyOptions): PtySession {
  return new PtySession([line], options, line);
}
