// What a person watching `aerial batch` sees: the screen of a real terminal
// (tmux, 80 and 60 columns, read back with capture-pane) while the progress bar
// is drawn and a notice is printed over it, on the first Ctrl-C and on
// SIGTERM. The notice must stay whole, and the bar keep being drawn under it.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { available, command } from '../helpers/system-tools.js';

let sandbox: TestSandbox;
useSandboxPerFile((started) => {
  sandbox = started;
});

const home = tempDir('aerial-batch-screen-');
afterAll(() => home.remove());

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** A tmux server of the test's own (its socket and config in a temp dir) running one batch in one pane. */
class Screen {
  private readonly socket: string;

  constructor(
    dir: string,
    columns: number,
    args: string[],
  ) {
    this.socket = join(dir, 'tmux.sock');
    const conf = join(dir, 'tmux.conf');
    // The pane stays after the batch exits, to be read, with its exit status.
    writeFileSync(conf, 'set -g status off\nset -g remain-on-exit on\n');
    const env = cliEnv(join(dir, 'config'), { ...sandbox.env(), TERM: 'xterm-256color', TMUX: undefined });
    const assignments = Object.entries(env)
      .filter((entry): entry is [string, string] => entry[1] !== undefined && /^[A-Z_][A-Z0-9_]*$/i.test(entry[0]))
      .map(([name, value]) => quote(`${name}=${value}`));
    // The shell that runs the batch says how it ended (tmux does not always know a dead pane's status).
    // Its trap only keeps it alive through a Ctrl-C meant for the batch; the batch itself, exec'd by
    // env, starts with every signal at its default, as from any shell.
    const inner = `trap : INT TERM; ${['env', '-i', ...assignments, process.execPath, BIN, ...args.map(quote)].join(' ')}; echo "[exit $?]"`;
    this.tmux(['-f', conf, 'new-session', '-d', '-x', String(columns), '-y', '24', '-c', dir, inner]);
  }

  private tmux(args: string[]): string {
    const result = spawnSync('tmux', ['-S', this.socket, ...args], { encoding: 'utf8', timeout: 10_000 });
    if (result.status !== 0) throw new Error(`tmux ${args[0]} failed: ${result.stderr}`);
    return result.stdout;
  }

  /** The screen's lines as the terminal shows them. */
  lines(): string[] {
    return this.tmux(['capture-pane', '-p']).split('\n');
  }

  async waitFor(test: (lines: string[]) => boolean, what: string, timeoutMs = 20_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.lines();
      if (test(lines)) return lines;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen shows:\n${lines.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The batch's pid: the child of the pane's shell (read from /proc: Linux, as tmux's tests here are). */
  pid(): number {
    const shell = this.tmux(['display', '-p', '#{pane_pid}']).trim();
    const children = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          // The parent's pid is the field after the state, after the command's name in parentheses.
          return readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1] === shell;
        } catch {
          return false;
        }
      });
    if (children.length !== 1) throw new Error(`the pane's shell ${shell} has ${children.length} children`);
    return Number(children[0]);
  }

  keys(keys: string): void {
    this.tmux(['send-keys', keys]);
  }

  /** The batch's exit status, once the shell has printed it. */
  exitStatus(): number | undefined {
    const line = this.lines().find((text) => /^\[exit \d+\]$/.test(text.trim()));
    return line === undefined ? undefined : Number(/\d+/.exec(line)![0]);
  }

  close(): void {
    spawnSync('tmux', ['-S', this.socket, 'kill-server']);
  }
}

/** The words of the screen, in order, however lines were broken. */
const words = (lines: string[]) => lines.join(' ').replace(/\s+/g, ' ');
const BAR = /[█░]+ \d+\/\d+ rows/;

describe.skipIf(!available(command('tmux', ['-V'], 'apt-get install tmux')))('batch on a terminal: a notice over the progress bar', () => {
  const cases = [
    { columns: 80, signal: 'Ctrl-C', notice: /interrupted: finishing \d+ requests? in flight \(at most 30s\); press Ctrl-C again to abort/ },
    { columns: 60, signal: 'Ctrl-C', notice: /interrupted: finishing \d+ requests? in flight \(at most 30s\); press Ctrl-C again to abort/ },
    { columns: 80, signal: 'SIGTERM', notice: /SIGTERM: finishing \d+ requests? in flight \(at most 30s\); send SIGTERM again to abort/ },
    { columns: 60, signal: 'SIGTERM', notice: /SIGTERM: finishing \d+ requests? in flight \(at most 30s\); send SIGTERM again to abort/ },
  ] as const;

  for (const { columns, signal, notice } of cases) {
    it(`${signal} at ${columns} columns: the notice stays whole, the bar is drawn under it, and the batch ends with 130`, async () => {
      const dir = tempDir('aerial-screen-');
      const rows = ['lat,lng', ...Array.from({ length: 24 }, (_, row) => `${10 + row * 0.5},${20 + row * 0.25}`)];
      writeFileSync(join(dir.path, 'rows.csv'), `${rows.join('\n')}\n`);
      // Each answer takes 1.5 s, so requests are on the wire when the signal comes.
      sandbox.setFaults({ latencyMs: 1500 });
      const screen = new Screen(dir.path, columns, ['batch', 'rows.csv', '--resolution', 'HD', '--concurrency', '4', '--max-retries', '0']);
      try {
        await screen.waitFor((lines) => lines.some((line) => /[█░]+ [1-9]\d*\/24 rows/.test(line)), 'the bar to count a row');
        if (signal === 'Ctrl-C') screen.keys('C-c');
        else process.kill(screen.pid(), 'SIGTERM');

        const during = await screen.waitFor((lines) => notice.test(words(lines)), 'the notice');
        // The bar is drawn again below the notice while the requests in flight finish.
        const noticeEnd = during.findIndex((line) => /again to abort$/.test(line));
        await screen.waitFor((lines) => lines.slice(noticeEnd + 1).some((line) => BAR.test(line)), 'the bar under the notice', 5_000);
        // No line of the notice is wider than the terminal, nor is any part of it drawn over.
        for (const line of during) expect(line.length).toBeLessThanOrEqual(columns);

        await screen.waitFor(() => screen.exitStatus() !== undefined, 'the batch to exit', 40_000);
        expect(screen.exitStatus()).toBe(130);
        const after = screen.lines();
        expect(words(after)).toMatch(notice);
        expect(words(after)).toMatch(/rows not started: interrupted/);
        // The summary's last line stays: nothing draws the bar over it once the batch has printed it.
        expect(words(after)).toMatch(/Manifest: aerial-batch\/aerial-batch-manifest\.jsonl/);
      } finally {
        screen.close();
        sandbox.setFaults({ latencyMs: 0 });
        dir.remove();
      }
    }, 90_000);
  }
});
