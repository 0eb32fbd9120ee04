// Every help page laid out for the terminal it is shown on, in-process on a
// test terminal of 60 and 80 columns: no line wider, options with their
// description underneath when the columns would be too narrow, notes
// reflowed, examples continued with a backslash and still the same commands;
// and `aerial help <command> <subcommand>` shows that subcommand's help. On a
// real pseudo-terminal: test/e2e/help-narrow.test.ts.
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import { plain } from '../../helpers/pty.js';
import { runCommand } from '../../helpers/terminal.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-help-');
});
afterAll(() => home.remove());

const PAGES = ['', 'generate', 'generate-async', 'batch', 'batch status', 'list', 'export', 'delete', 'init', 'config', 'config set', 'sandbox', 'mcp', 'completion'];

async function helpOnTerminal(args: string[], columns: number): Promise<string> {
  const { exitCode, stdout } = await runCommand(args, { configDir: home.path, tty: { stdin: true, stdout: true, stderr: true }, columns });
  expect(exitCode).toBe(0);
  return plain(stdout);
}

/** The example commands of a help page, each as one line: continuations joined, comments and padding dropped. */
function examples(help: string): string[] {
  const section = help.split(/^Examples:\n/m)[1] ?? '';
  return section
    .replace(/ \\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('$ '))
    .map((line) => line.trim().replace(/\s+#\s.*$/, '').replace(/\s+/g, ' '));
}

describe('help on narrow terminals', () => {
  it.each(PAGES)('aerial %s --help fits 60 and 80 columns, with the same examples', async (page) => {
    const args = [...page.split(' ').filter(Boolean), '--help'];
    const wide = await helpOnTerminal(args, 80);
    const narrow = await helpOnTerminal(args, 60);
    for (const [help, columns] of [[wide, 80], [narrow, 60]] as const) {
      for (const line of help.split('\n')) expect(stringWidth(line), `${columns} columns: ${line}`).toBeLessThanOrEqual(columns);
    }
    expect(examples(narrow).length).toBeGreaterThanOrEqual(2);
    expect(examples(narrow)).toEqual(examples(wide));
    expect(narrow).toMatch(/^Usage: aerial/);
  });
});

describe('aerial help <command> <subcommand>', () => {
  it('shows the help of config set, as config set --help does', async () => {
    const viaHelp = await runCommand(['help', 'config', 'set'], { configDir: home.path });
    const viaFlag = await runCommand(['config', 'set', '--help'], { configDir: home.path });
    expect(viaHelp.exitCode).toBe(0);
    expect(viaHelp.stdout).toMatch(/^Usage: aerial config set \[options\] <key> \[value\]\n/);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    // And on a narrow terminal, laid out for it.
    expect(await helpOnTerminal(['help', 'config', 'set'], 60)).toBe(await helpOnTerminal(['config', 'set', '--help'], 60));
  });

  it('follows aliases, and shows the whole program without a name', async () => {
    expect((await runCommand(['help', 'ls'], { configDir: home.path })).stdout).toMatch(/^Usage: aerial list\|ls \[options\]\n/);
    expect((await runCommand(['help'], { configDir: home.path })).stdout).toBe((await runCommand(['--help'], { configDir: home.path })).stdout);
  });

  it('refuses an unknown name with exit 2 and the nearest one', async () => {
    const top = await runCommand(['help', 'cofig'], { configDir: home.path });
    expect(top.exitCode).toBe(2);
    expect(top.stdout).toBe('');
    expect(top.stderr).toMatch(/^error: unknown command 'cofig' \(did you mean config\?\); commands: generate, generate-async, batch, list, get, export, view, delete, init, whoami, config, sandbox, mcp, completion, version, help\n$/);
    const sub = await runCommand(['help', 'config', 'sett'], { configDir: home.path });
    expect(sub.exitCode).toBe(2);
    expect(sub.stderr).toBe("error: unknown command 'config sett' (did you mean set?); commands: set, get, unset, list, path\n");
  });
});
