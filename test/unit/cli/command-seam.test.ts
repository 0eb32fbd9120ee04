// The seam between the program and its commands, run: the program runs a
// command line in any Process, here a test terminal, with the same exit
// codes, output rules and signals as bin/aerial.js has in a real process
// (which modules may import which is imports.test.ts's).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STOP_SIGNALS } from '../../../src/lifecycle/shutdown.js';
import { VERSION } from '../../../src/build-outputs/version.js';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { runInProcess, TestTerminal } from '../../helpers/terminal.js';

describe('a command line run in a test terminal', () => {
  it('prints the version as bin/aerial.js does, through commander', async () => {
    const result = await runInProcess(['--no-color', '--version']);
    expect(result).toEqual({ exitCode: 0, stdout: `aerial ${VERSION} (node ${process.version})\n`, stderr: '' });
  });

  it('runs a command with the terminal’s environment, never this process’s', async () => {
    const config = tempDir();
    try {
      const result = await runInProcess(['config', 'path'], new TestTerminal({ env: { AERIAL_CONFIG_DIR: config.path } }));
      expect(result).toEqual({ exitCode: 0, stdout: `${join(config.path, 'config.json')}\n`, stderr: '' });
    } finally {
      config.remove();
    }
  });

  it('gives a usage error exit 2 and one line, or one JSON object with --json', async () => {
    const plain = await runInProcess(['generat', '--lat', '1']);
    expect(plain.exitCode).toBe(2);
    expect(plain.stderr).toBe("error: unknown command 'generat' (did you mean generate?); see 'aerial --help'\n");
    const json = await runInProcess(['list', '--json', '--page', 'x']);
    expect(json.exitCode).toBe(2);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({ status: null, error: 'UsageError', message: expect.stringMatching(/^--page must be a whole number/), exitCode: 2 });
  });

  it('lays help out for the terminal’s width: 80 columns, narrower only on a narrower terminal', async () => {
    const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));
    const narrow = await runInProcess(['generate', '--help'], new TestTerminal({ tty: { stdout: true }, columns: 60 }));
    const piped = await runInProcess(['generate', '--help'], new TestTerminal({ columns: 60 }));
    const wide = await runInProcess(['generate', '--help'], new TestTerminal({ tty: { stdout: true }, columns: 200 }));
    expect(narrow.exitCode).toBe(0);
    expect(widest(narrow.stdout)).toBeLessThanOrEqual(60);
    expect(widest(narrow.stdout)).toBeGreaterThan(50);
    expect(widest(piped.stdout)).toBeGreaterThan(60);
    expect(widest(piped.stdout)).toBeLessThanOrEqual(80);
    expect(wide.stdout).toBe(piped.stdout);
  });

  it('colours errors only when stderr is a terminal, and never under NO_COLOR', async () => {
    const args = ['list', '--page', 'x'];
    const tty = await runInProcess(args, new TestTerminal({ tty: { stderr: true }, columns: 80 }));
    const noColor = await runInProcess(args, new TestTerminal({ tty: { stderr: true }, columns: 80, env: { NO_COLOR: '1' } }));
    const piped = await runInProcess(args, new TestTerminal());
    expect(tty.stderr).toMatch(/^\u001b\[31merror:\u001b\[39m --page must be/);
    expect(noColor.stderr).toMatch(/^error: --page must be/);
    expect(piped.stderr).toBe(noColor.stderr);
  });

  it('warns about --api-key on a terminal only, and never prints the key', async () => {
    const key = 'sk_seam_test_key_3c1d9e';
    registerSecret(key);
    const args = ['--api-key', key, 'list', '--page', 'x'];
    const person = await runInProcess(args, new TestTerminal({ tty: { stderr: true }, columns: 80, env: { NO_COLOR: '1' } }));
    const script = await runInProcess(args, new TestTerminal());
    expect(person.stderr).toMatch(/^warning: --api-key is visible in the process list/);
    expect(script.stderr).not.toMatch(/warning/);
    expect(person.stderr + script.stderr).not.toContain(key);
  });

  it('reads standard input as given', async () => {
    const config = tempDir();
    try {
      const terminal = new TestTerminal({ env: { AERIAL_CONFIG_DIR: config.path }, input: 'sk_from_stdin_5e8a21\n' });
      const set = await runInProcess(['config', 'set', 'api-key'], terminal);
      expect(set.exitCode).toBe(0);
      const shown = await runInProcess(['config', 'get', 'api-key'], new TestTerminal({ env: { AERIAL_CONFIG_DIR: config.path } }));
      expect(shown.stdout).toBe('sk_f…21 (20 chars)\n');
      expect(JSON.parse(readFileSync(join(config.path, 'config.json'), 'utf8'))).toMatchObject({ profiles: { default: { apiKey: 'sk_from_stdin_5e8a21' } } });
    } finally {
      config.remove();
    }
  });

  it('stops on a signal sent to the terminal, and to nothing else: cleanups run, exit 130', async () => {
    const data = tempDir();
    try {
      const listening = STOP_SIGNALS.map((name) => process.listenerCount(name));
      const terminal = new TestTerminal();
      const run = runInProcess(['sandbox', '--port', '0', '--data-dir', data.path], terminal);
      const url = /^url: (\S+)$/m.exec(await terminal.stdout.waitFor(/^url: /m))![1]!;
      // The command listens to its terminal, not to this process.
      expect(STOP_SIGNALS.map((name) => process.listenerCount(name))).toEqual(listening);
      expect((await fetch(`${url}/__sandbox/requests`)).status).toBe(200);
      terminal.kill('SIGHUP');
      const result = await run;
      expect(result.exitCode).toBe(130);
      await expect(fetch(url)).rejects.toThrow();
      expect(terminal.exits).toEqual([]);
    } finally {
      data.remove();
    }
  });

  it('ends quietly with 141 when the reader of stdout goes away', async () => {
    const terminal = new TestTerminal();
    terminal.stdout.closeReader();
    const result = await runInProcess(['completion', 'bash'], terminal);
    expect(result).toEqual({ exitCode: 141, stdout: '', stderr: '' });
  });

  it('leaves this process’s exit code alone: the exit code is the result', async () => {
    const before = process.exitCode;
    const result = await runInProcess(['list', '--page', 'x']);
    expect(result.exitCode).toBe(2);
    expect(process.exitCode).toBe(before);
  });
});
