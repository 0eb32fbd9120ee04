// A module of src/ run in a Node process of its own: for what a test worker's
// own heap would blur (the young generation's size, measured in a process that
// runs nothing else, as a command's process does).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

/**
 * Runs `script` (an ES module's text, where `modulePath` is imported as `subject`)
 * in a fresh `node`, and returns what it wrote to stdout, parsed as JSON.
 */
export function inOwnNode<T>(modulePath: string, script: string): T {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-own-node-'));
  try {
    const bundled = join(dir, 'subject.mjs');
    buildSync({ entryPoints: [modulePath], bundle: true, platform: 'node', format: 'esm', outfile: bundled, logLevel: 'silent' });
    const program = `import * as subject from ${JSON.stringify(pathToFileURL(bundled).href)};\n${script}`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
    return JSON.parse(out) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
