// docs/terminal-session.txt is what scripts/record-terminal-session.sh records
// (aerial generate --sandbox typed into tmux): recorded again here, it must read
// as the committed file does, but for numbers (times, the version) and the
// spinner's frame. A change to what the CLI prints there (a unit, a word, a ✔)
// fails this until the file is recorded again.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers/cli.js';
import { available, command } from '../helpers/system-tools.js';

/** The text without what changes from one recording to the next. */
function stable(text: string): string {
  return text
    .replace(/[\u2800-\u28ff]/g, '⠋')
    .replace(/… \d+s$/gm, '…')
    .replace(/\d+(\.\d+)?/g, '0');
}

describe.skipIf(!available(command('tmux', ['-V'], 'apt-get install tmux')))('docs/terminal-session.txt', () => {
  it('is what scripts/record-terminal-session.sh records now', () => {
    const dir = tempDir();
    try {
      const fresh = join(dir.path, 'session.txt');
      execFileSync('bash', [join(ROOT, 'scripts', 'record-terminal-session.sh'), fresh], { cwd: ROOT, stdio: 'ignore', timeout: 90_000 });
      const recorded = readFileSync(fresh, 'utf8');
      expect(recorded).toContain('✔ Saved ~/eiffel.jpg (');
      expect(stable(readFileSync(join(ROOT, 'docs', 'terminal-session.txt'), 'utf8')), 'run bash scripts/record-terminal-session.sh').toBe(stable(recorded));
    } finally {
      dir.remove();
    }
  }, 120_000);
});
