// Writes the committed completion scripts in completions/ from the built CLI
// (`npm run build` first), exactly as `aerial completion <shell>` prints them.
// test/unit/commands/completion/scripts.test.ts fails when they drift from the program.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const COMPLETION_FILES = { bash: 'aerial.bash', zsh: '_aerial', fish: 'aerial.fish' };

const bin = fileURLToPath(new URL('../bin/aerial.js', import.meta.url));
const dir = new URL('../completions/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [shell, name] of Object.entries(COMPLETION_FILES)) {
  const script = execFileSync(process.execPath, [bin, 'completion', shell], { encoding: 'utf8' });
  writeFileSync(new URL(name, dir), script);
  process.stdout.write(`wrote completions/${name}\n`);
}
