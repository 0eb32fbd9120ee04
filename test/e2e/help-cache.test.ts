// bin/aerial.js answers `--help` from dist/help.json without loading the CLI;
// these tests hold that text to what commander prints live (`aerial help <cmd>`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/main.js';
import { ROOT, runCli, tempDir } from '../helpers/cli.js';

const home = tempDir();
afterAll(() => home.remove());

const cached = JSON.parse(readFileSync(join(ROOT, 'dist', 'help.json'), 'utf8')) as Record<string, string>;
const program = buildProgram();

describe('precomputed help', () => {
  it('covers the program and every top-level command and alias', () => {
    const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
    expect(Object.keys(cached).sort()).toEqual(['', ...names].sort());
  });

  it('aerial --help prints exactly what commander prints live', async () => {
    const fast = await runCli(['--help'], { configDir: home.path });
    const live = await runCli(['help'], { configDir: home.path });
    expect(fast.exitCode).toBe(0);
    expect(fast.stdout).toBe(cached['']);
    expect(fast.stdout).toBe(live.stdout);
    expect(fast.stdout).toMatch(/^Usage: aerial \[options\] \[command\]/);
  });

  it.each(program.commands.map((c) => c.name()))('aerial %s --help prints what `aerial help %s` does', async (name) => {
    const fast = await runCli([name, '--help'], { configDir: home.path });
    const live = await runCli(['help', name], { configDir: home.path });
    expect(fast.exitCode).toBe(0);
    expect(fast.stdout).toBe(live.stdout);
    expect(fast.stdout).toContain(`Usage: aerial ${name}`);
  });
});
