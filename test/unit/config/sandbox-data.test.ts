// Where the sandbox keeps its data ($XDG_DATA_HOME/aerial/sandbox), the move
// from where earlier versions kept it (the config directory), and `aerial
// sandbox reset`; run in-process against temp directories only.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { moveOldSandboxData } from '../../../src/config/config.js';
import { tempDir } from '../../helpers/cli.js';
import { runInProcess, TestTerminal } from '../../helpers/terminal.js';

const homes: Array<ReturnType<typeof tempDir>> = [];
function home() {
  const dir = tempDir();
  homes.push(dir);
  return { root: dir.path, env: { AERIAL_CONFIG_DIR: join(dir.path, 'config'), XDG_DATA_HOME: join(dir.path, 'share'), HOME: dir.path } };
}
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

describe("the sandbox's data", () => {
  it('lands under $XDG_DATA_HOME/aerial with --sandbox, and nothing under the config directory', async () => {
    const { root, env } = home();
    const result = await runInProcess(['generate', '--sandbox', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', join(root, 'a.jpg'), '-q'], new TestTerminal({ env }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readdirSync(join(root, 'share', 'aerial', 'sandbox', 'images'))).toHaveLength(1);
    expect(existsSync(join(root, 'config', 'sandbox'))).toBe(false);
  });

  it('is moved once from the config directory, where earlier versions kept it', async () => {
    const { root, env } = home();
    const old = join(root, 'config', 'sandbox');
    mkdirSync(join(old, 'images'), { recursive: true });
    writeFileSync(join(old, 'images', 'x.jpg'), 'old image');
    expect(await moveOldSandboxData(env)).toBe(old);
    expect(existsSync(old)).toBe(false);
    expect(readFileSync(join(root, 'share', 'aerial', 'sandbox', 'images', 'x.jpg'), 'utf8')).toBe('old image');
    // Once: data at both places stays where it is.
    mkdirSync(old);
    expect(await moveOldSandboxData(env)).toBeUndefined();
    expect(existsSync(old)).toBe(true);
  });

  it('is emptied by aerial sandbox reset, which says what it removed', async () => {
    const { root, env } = home();
    for (const lat of ['1', '2']) {
      const made = await runInProcess(['generate', '--sandbox', '--lat', lat, '--lng', '2', '--resolution', 'HD', '-o', join(root, `${lat}.jpg`), '-q'], new TestTerminal({ env }));
      expect(made.exitCode).toBe(0);
    }
    const reset = await runInProcess(['sandbox', 'reset'], new TestTerminal({ env }));
    expect(reset.exitCode, reset.stderr).toBe(0);
    expect(reset.stderr).toBe(`✔ Emptied ${join(root, 'share', 'aerial', 'sandbox')} (2 images, 1 account)\n`);
    const listed = await runInProcess(['list', '--sandbox', '--json'], new TestTerminal({ env }));
    expect(JSON.parse(listed.stdout).totalElements).toBe(0);
    const again = await runInProcess(['sandbox', 'reset', '--data-dir', join(root, 'nothing')], new TestTerminal({ env }));
    expect(again.stderr).toBe(`Nothing to reset: ${join(root, 'nothing')} holds no sandbox data\n`);
  });
});
