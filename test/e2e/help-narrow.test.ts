// End-to-end on a real pseudo-terminal: help is laid out for the width the
// terminal reports, an option's description under it at 60 columns and beside
// it at 80. Every page at both widths, and `aerial help <command>
// <subcommand>`, are tested in-process: test/unit/cli/help-pages.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { plain, spawnInPty } from '../helpers/pty.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-help-');
});
afterAll(() => home.remove());

async function helpOnTerminal(args: string[], columns: number): Promise<string> {
  const { exitCode, output } = await spawnInPty(args, { configDir: home.path, columns }).exited;
  expect(exitCode).toBe(0);
  return plain(output);
}

describe('help on a narrow terminal (every page, and aerial help: test/unit/cli/help-pages.test.ts)', () => {
  it('puts an option\'s description under it at 60 columns, beside it at 80', async () => {
    const narrow = await helpOnTerminal(['generate-async', '--help'], 60);
    expect(narrow).toContain('  --timeout <duration>\n      how long --listen waits for the callback, up to 24h\n      (default 10m): 90s, 10m, 2h; a bare number is seconds,\n      at most 600 (a longer wait takes a unit)\n');
    const wide = await helpOnTerminal(['generate-async', '--help'], 80);
    expect(wide).toMatch(/^ {2}--timeout <duration> {7}how long --listen waits for the callback, up to 24h$/m);
  });
});
