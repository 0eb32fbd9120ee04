// The program's options (--json, -q, -v, --profile, --no-color…) before a
// command's name and after it, and a command's option values spelled like
// them: those are values, never the program's options (`--prompt -V` is the
// prompt "-V", not a request for the version).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerJpeg } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';
import { runCommand } from '../../helpers/terminal.js';

const KEY = 'sk_test_global_options_5c1d';
const ESC = '\u001b[';

describe('option values spelled like the program\'s options', () => {
  const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-global-options-' });

  it('generate --prompt -V --tag --json: one request carrying both as they were typed, human output, exit 0', async () => {
    fixture.server.respond(answerJpeg);
    const out = join(fixture.home.path, 'values.jpg');
    const result = await fixture.cli(['generate', '--lat', '1', '--lng', '2', '--prompt', '-V', '--tag', '--json', '--tag', '-q', '-o', out, '--force']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(fixture.server.requests).toHaveLength(1);
    expect(JSON.parse(fixture.server.requests[0]!.body)).toMatchObject({ prompt: '-V', tags: ['--json', '-q'] });
    // Neither --json nor -q was taken as the program's: the saved line is the human one.
    expect(result.stdout + result.stderr).not.toMatch(/^\{/m);
    expect(result.stderr).toContain('values.jpg');
  });

  it('generate --prompt --version and --prompt "-Vq ": the prompt, never the version', async () => {
    for (const prompt of ['--version', '-Vq ']) {
      fixture.server.reset();
      fixture.server.respond(answerJpeg);
      const result = await fixture.cli(['generate', '--lat', '1', '--lng', '2', '--prompt', prompt, '-o', join(fixture.home.path, 'version.jpg'), '--force']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).not.toContain('aerial ');
      expect(fixture.server.requests.map((request) => JSON.parse(request.body).prompt)).toEqual([prompt]);
    }
  });
});

describe("the program's options before the command and after it", () => {
  const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-global-places-' });
  const terminal = { tty: { stdout: true, stderr: true }, columns: 100 } as const;
  const colourEnv = () => ({ AERIAL_API_KEY: KEY, AERIAL_BASE_URL: fixture.server.url, FORCE_COLOR: '1' });

  it('--json, and --profile for a nested command, work on either side of the command name', async () => {
    for (const args of [['--json', 'config', 'get', 'defaults.zoom'], ['config', 'get', 'defaults.zoom', '--json'], ['config', '--json', 'get', 'defaults.zoom']]) {
      const result = await fixture.cli(args);
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout), args.join(' ')).toMatchObject({ value: 'Medium' });
    }
    expect((await fixture.cli(['config', 'set', '--profile', 'night', 'defaults.daytime', 'Night'])).exitCode).toBe(0);
    expect((await fixture.cli(['--profile', 'night', 'config', 'get', 'defaults.daytime'])).stdout.trim()).toBe('Night');
    expect((await fixture.cli(['config', 'get', 'defaults.daytime', '--profile', 'night'])).stdout.trim()).toBe('Night');
    expect((await fixture.cli(['config', 'get', 'defaults.daytime'])).stdout.trim()).toBe('Day');
  });

  it('--no-color before the command is not undone by the command\'s own default, nor after it', async () => {
    const home = fixture.home.path;
    const coloured = await runCommand(['config', 'set', 'defaults.zoom', 'High'], { ...terminal, configDir: home, env: colourEnv() });
    expect(coloured.exitCode, coloured.stderr).toBe(0);
    // The check below can fail: on this terminal the line is coloured unless told otherwise.
    expect(coloured.stdout + coloured.stderr).toContain(ESC);
    for (const args of [['--no-color', 'config', 'set', 'defaults.zoom', 'Low'], ['config', 'set', 'defaults.zoom', 'Low', '--no-color']]) {
      const plain = await runCommand(args, { ...terminal, configDir: home, env: colourEnv() });
      expect(plain.exitCode, plain.stderr).toBe(0);
      expect(plain.stdout + plain.stderr, args.join(' ')).toContain('defaults.zoom');
      expect(plain.stdout + plain.stderr, args.join(' ')).not.toContain(ESC);
    }
  });

  it('-V after a command is not the version: an unknown option of that command, exit 2, nothing sent', async () => {
    fixture.server.reset();
    const result = await fixture.cli(['generate', '--lat', '1', '--lng', '2', '-V']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: unknown option '-V'; see 'aerial generate --help'\n");
    expect(fixture.server.requests).toEqual([]);
  });
});
