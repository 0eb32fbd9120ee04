// What the process itself answers (spawned bin/aerial.js): --version --json
// without loading the bundle, no key at all (exit 3, one line), and `get`'s
// default file name in the directory it runs in.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
useSandboxPerFile((started, dir) => {
  sandbox = started;
  home = dir;
});

describe('the version', () => {
  it('--version --json (either order) is {aerial, node}, as aerial version --json is', async () => {
    const configDir = join(home.path, 'config');
    const expected = { aerial: expect.stringMatching(/^\d+\.\d+\.\d+/), node: process.version };
    for (const args of [['--version', '--json'], ['--json', '-V'], ['version', '--json']]) {
      const result = await runCli(args, { configDir, cwd: home.path });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(expected);
    }
    const plain = await runCli(['version'], { configDir, cwd: home.path });
    expect(plain.stdout).toBe((await runCli(['--version'], { configDir, cwd: home.path })).stdout);
  });
});

describe('no API key anywhere', () => {
  it('is exit 3 in one line, as a refused key is, and sends nothing', async () => {
    const result = await runCli(['list'], { configDir: join(home.path, 'empty'), cwd: home.path, env: { AERIAL_BASE_URL: sandbox.url } });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe("error: no API key: set AERIAL_API_KEY, run 'aerial init' or 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox\n");
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('aerial get', () => {
  let id: string;
  beforeAll(async () => {
    const made = await runCli(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', 'g.jpg', '-q'], { configDir: home.path, env: sandbox.env() });
    expect(made.exitCode, made.stderr).toBe(0);
    id = JSON.parse((await runCli(['list', '--json'], { configDir: home.path, env: sandbox.env() })).stdout).content[0].id;
  });

  it('names the file from the place and the id when -o is not given, in the directory it runs in', async () => {
    const dir = join(home.path, 'default-name');
    mkdirSync(dir);
    const result = await runCli(['get', id.slice(0, 8)], { configDir: home.path, cwd: dir, env: sandbox.env() });
    expect(result.exitCode, result.stderr).toBe(0);
    const name = `aerial-48.8584_2.2945-${id}.jpg`;
    expect(result.stdout).toBe(`${join(dir, name)}\n`);
    expect(readdirSync(dir)).toEqual([name]);
  });
});
