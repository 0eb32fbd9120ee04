// Edges a newcomer met (issue: everyday commands), in-process: help of a
// subcommand through `help`, one rule for ✔, what generate-async asks for,
// the config file others can read, and the plain words of --timeout.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import { runInProcess, TestTerminal } from '../../helpers/terminal.js';

const homes: Array<ReturnType<typeof tempDir>> = [];
function home(): string {
  const dir = tempDir();
  homes.push(dir);
  return dir.path;
}
afterEach(() => {
  while (homes.length) homes.pop()!.remove();
});

describe('rough edges', () => {
  it('aerial batch help status prints the help of batch status, as aerial help batch status does', async () => {
    const through = await runInProcess(['batch', 'help', 'status']);
    expect(through.exitCode).toBe(0);
    expect(through.stdout).toMatch(/^Usage: aerial batch status \[options\] \[file\]/);
    expect(through.stdout).toBe((await runInProcess(['help', 'batch', 'status'])).stdout);
    expect((await runInProcess(['config', 'help', 'set'])).stdout).toMatch(/^Usage: aerial config set/);
  });

  it('a saved image is a success line with ✔ when stderr is not a terminal too', async () => {
    const dir = home();
    const result = await runInProcess(['generate', '--sandbox', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', join(dir, 'a.jpg')], new TestTerminal({ env: { AERIAL_CONFIG_DIR: join(dir, 'config') } }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^✔ Saved .*a\.jpg \(\d+ KiB, [\d.]+s\)\n$/);
  });

  it('generate-async without --callback-url names --listen, the easy way', async () => {
    const result = await runInProcess(['generate-async', '--lat', '1', '--lng', '2'], new TestTerminal({ env: { AERIAL_API_KEY: 'some-key-12345' } }));
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('error: generate-async needs --listen (aerial waits for the result itself and saves the image) or --callback-url <url> (your own receiver gets it)\n');
  });

  it('says --timeout plainly: its most, its default, then what a bare number means', async () => {
    const help = (await runInProcess(['generate-async', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('how long --listen waits for the callback, up to 24h (default 10m): 90s, 10m, 2h; a bare number is seconds, at most 600 (a longer wait takes a unit)');
  });
});

describe('a config file holding a key', () => {
  const config = (mode: number, data: object) => {
    const dir = join(home(), 'config');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(data));
    chmodSync(join(dir, 'config.json'), mode);
    return dir;
  };
  const keyed = { profiles: { default: { apiKey: 'key-in-the-file-1234', baseUrl: 'http://127.0.0.1:9' } } };

  it('that others can read gets one warning line with the chmod fix', async () => {
    const dir = config(0o644, keyed);
    const result = await runInProcess(['config', 'get', 'base-url'], new TestTerminal({ env: { AERIAL_CONFIG_DIR: dir } }));
    expect(result.exitCode).toBe(0);
    const file = join(dir, 'config.json');
    expect(result.stderr).toBe(`warning: config file ${file} holds an API key and other users can read it (mode 0644); fix it with: chmod 600 ${file}\n`);
  });

  it('gets none at 0600, nor without a key', async () => {
    for (const [mode, data] of [[0o600, keyed], [0o644, { profiles: { default: { baseUrl: 'http://127.0.0.1:9' } } }]] as const) {
      const result = await runInProcess(['config', 'get', 'base-url'], new TestTerminal({ env: { AERIAL_CONFIG_DIR: config(mode, data) } }));
      expect(result.stderr).toBe('');
    }
  });
});
