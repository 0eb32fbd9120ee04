// Once per run: a file where test workers note the system tools they found
// missing (test/helpers/system-tools.ts), and, at the end, one line naming
// each of them with its install command, so a skip never passes unseen.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-test-tools-'));
  const notes = join(dir, 'missing.jsonl');
  // Set before the workers start, so each inherits it.
  process.env.AERIAL_TEST_MISSING_TOOLS = notes;
  return () => {
    let lines: string[] = [];
    try {
      lines = readFileSync(notes, 'utf8').split('\n').filter(Boolean);
    } catch {
      // No worker found a tool missing.
    }
    rmSync(dir, { recursive: true, force: true });
    const missing = new Map<string, string>();
    for (const line of lines) {
      const { name, install } = JSON.parse(line) as { name: string; install: string };
      missing.set(name, install);
    }
    for (const [name, install] of missing) {
      process.stderr.write(`Skipped: the tests that need ${name}, which is not installed (${install}).\n`);
    }
  };
}
