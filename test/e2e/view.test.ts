// `aerial view` on a real pseudo-terminal (util-linux script), for each
// protocol: the escape sequences are parsed back and must be well formed and
// of the size asked; half-block lines are measured once their colours are
// taken out; an id is looked up in the sandbox and its image downloaded
// without the key. Without a terminal: test/unit/commands/view.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ROOT, runCli, until } from '../helpers/cli.js';
import { ptyAvailable, scriptArgs, spawnInPty } from '../helpers/pty.js';
import { available, command } from '../helpers/system-tools.js';
import { API_PATH, jpegInfo, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { blockLines, parseIterm, parseKitty, parseSixel, pngSize, withoutSgr } from '../helpers/terminal-graphics.js';

function tmuxAvailable(): boolean {
  return available(command('tmux', ['-V'], 'apt-get install tmux'));
}

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** The environment of a terminal that says nothing about images; each test adds what its terminal would. */
const PLAIN_TERMINAL = {
  TERM: 'xterm-256color',
  COLORTERM: undefined,
  TERM_PROGRAM: undefined,
  LC_TERMINAL: undefined,
  KITTY_WINDOW_ID: undefined,
  TMUX: undefined,
  STY: undefined,
  WEZTERM_EXECUTABLE: undefined,
  GHOSTTY_RESOURCES_DIR: undefined,
  MLTERM: undefined,
  WT_SESSION: undefined,
};

/** A 640 × 360 JPEG (16:9) of four coloured quarters. */
let photo: string;
beforeAll(async () => {
  photo = join(home.path, 'photo.jpg');
  const quarter = (color: string) => sharp({ create: { width: 320, height: 180, channels: 3, background: color } }).png().toBuffer();
  const [a, b, c, d] = await Promise.all(['#d03020', '#20a040', '#2040d0', '#f0f0f0'].map(quarter));
  await sharp({ create: { width: 640, height: 360, channels: 3, background: '#000' } })
    .composite([
      { input: a!, left: 0, top: 0 },
      { input: b!, left: 320, top: 0 },
      { input: c!, left: 0, top: 180 },
      { input: d!, left: 320, top: 180 },
    ])
    .jpeg()
    .toFile(photo);
});

async function viewInPty(args: string[], env: Record<string, string | undefined>, columns = 80, rows = 40) {
  const session = spawnInPty(['view', ...args], { configDir: home.path, env: { ...PLAIN_TERMINAL, ...env }, columns, rows });
  const { exitCode, output } = await session.exited;
  return { exitCode, output };
}

describe.skipIf(!ptyAvailable())('aerial view on a terminal', () => {
  for (const columns of [80, 60]) {
    it(`half-blocks fill a ${columns}-column terminal exactly, in 256 colours without COLORTERM`, async () => {
      const { exitCode, output } = await viewInPty([photo], {}, columns);
      expect(exitCode).toBe(0);
      const lines = blockLines(output);
      // 16:9 at `columns` cells of 1:2: columns × 9/16 / 2 rows.
      expect(lines.length).toBe(Math.round((columns * 9) / 16 / 2));
      for (const line of lines) expect([...line].length).toBe(columns);
      expect(output).toMatch(/\x1b\[38;5;\d+;48;5;\d+m/);
      expect(output).not.toMatch(/38;2;/);
    });
  }

  it('--width sets the width exactly, and COLORTERM=truecolor paints in 24-bit colour', async () => {
    const { exitCode, output } = await viewInPty([photo, '--width', '33'], { COLORTERM: 'truecolor' });
    expect(exitCode).toBe(0);
    const lines = blockLines(output);
    expect(lines.length).toBe(9);
    for (const line of lines) expect(line).toBe('\u2580'.repeat(33));
    // The top-left quarter is red, the bottom-right white.
    expect(output).toMatch(/^\x1b\[38;2;2\d\d;\d{1,2};\d{1,2};48;2;2\d\d;\d{1,2};\d{1,2}m/m);
  });

  it('a tall image is fitted to the rows there are', async () => {
    const tall = join(home.path, 'tall.jpg');
    await sharp({ create: { width: 100, height: 1000, channels: 3, background: '#446688' } }).jpeg().toFile(tall);
    const { exitCode, output } = await viewInPty([tall], {}, 80, 24);
    expect(exitCode).toBe(0);
    const lines = blockLines(output);
    expect(lines.length).toBeLessThanOrEqual(22);
    expect(lines.length).toBeGreaterThanOrEqual(20);
    expect([...lines[0]!].length).toBe(Math.floor(22 / 5));
  });

  it('kitty (KITTY_WINDOW_ID): chunked APC sequences whose payload is a PNG of the size asked', async () => {
    const { exitCode, output } = await viewInPty([photo, '--width', '40'], { KITTY_WINDOW_ID: '1', TERM: 'xterm-kitty' });
    expect(exitCode).toBe(0);
    const images = parseKitty(output);
    expect(images).toHaveLength(1);
    const [image] = images;
    expect(image!.chunks).toBeGreaterThan(1);
    expect(Object.fromEntries(image!.control)).toMatchObject({ a: 'T', f: '100', c: '40' });
    // 40 columns of 10 pixels, 16:9.
    expect(pngSize(image!.data)).toEqual({ width: 400, height: 225 });
    const { data, info } = await sharp(image!.data).raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    expect(pixel(50, 50)[0]).toBeGreaterThan(180); // red quarter
    expect(pixel(350, 200)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    expect(Math.min(...pixel(350, 200))).toBeGreaterThan(200); // white quarter
  });

  it('iTerm2 (TERM_PROGRAM=iTerm.app): OSC 1337 File= with the size and a base64 JPEG', async () => {
    const { exitCode, output } = await viewInPty([photo, '--width', '40'], { TERM_PROGRAM: 'iTerm.app' });
    expect(exitCode).toBe(0);
    const [image, ...more] = parseIterm(output);
    expect(more).toEqual([]);
    expect(Object.fromEntries(image!.args)).toMatchObject({ width: '40', inline: '1' });
    expect(jpegInfo(image!.data)).toMatchObject({ width: 400, height: 225 });
    expect(Buffer.from(image!.args.get('name')!, 'base64').toString()).toBe(photo);
  });

  it('sixel (TERM=foot): a DCS whose raster attributes are the size asked', async () => {
    const { exitCode, output } = await viewInPty([photo, '--width', '40'], { TERM: 'foot' });
    expect(exitCode).toBe(0);
    const [image, ...more] = parseSixel(output);
    expect(more).toEqual([]);
    expect(image).toMatchObject({ width: 400, height: 225, bands: Math.ceil(225 / 6) });
    expect(image!.colors).toBeGreaterThanOrEqual(4);
  });

  it('sixel asks the terminal its cell size (CSI 16 t, then DA) and draws the columns asked in those pixels', async () => {
    const session = spawnInPty(['view', photo, '--width', '40'], { configDir: home.path, env: { ...PLAIN_TERMINAL, TERM: 'foot' } });
    await until(() => session.raw.includes('\x1b[16t\x1b[c'), 'the cell size query', 10_000);
    // What foot answers: cells of 9 × 18 pixels, then its device attributes (sixel among them).
    session.write('\x1b[6;18;9t\x1b[?62;4;22c');
    const { exitCode, output } = await session.exited;
    expect(exitCode).toBe(0);
    expect(parseSixel(output)[0]).toMatchObject({ width: 360, height: 203 });
    // The answer was read, not echoed or left for the shell.
    expect(output).not.toContain('6;18;9t');
  });

  it('--protocol forces one whatever the terminal, and several images get a caption each', async () => {
    const { exitCode, output } = await viewInPty([photo, photo, '--protocol', 'sixel', '--width', '20'], { KITTY_WINDOW_ID: '1' });
    expect(exitCode).toBe(0);
    expect(parseKitty(output)).toEqual([]);
    expect(parseSixel(output).map((image) => image.width)).toEqual([200, 200]);
    expect(withoutSgr(output).split('\n').filter((line) => line === photo)).toHaveLength(2);
  });

  it('generate --preview shows the saved image after its path; --no-preview overrides defaults.preview', async () => {
    const env = { ...sandbox.env(), KITTY_WINDOW_ID: '1' };
    const shown = spawnInPty(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', join(home.path, 'preview.jpg'), '--force', '--preview'], {
      configDir: home.path,
      env: { ...PLAIN_TERMINAL, ...env },
      columns: 60,
    });
    const { exitCode, output } = await shown.exited;
    expect(exitCode).toBe(0);
    const [image] = parseKitty(output);
    expect(Object.fromEntries(image!.control)).toMatchObject({ c: '60' });
    expect(pngSize(image!.data).width).toBe(600);
    expect(output.indexOf(join(home.path, 'preview.jpg'))).toBeLessThan(output.indexOf('\x1b_G'));

    expect((await runCli(['config', 'set', 'defaults.preview', 'true'], { configDir: home.path })).exitCode).toBe(0);
    try {
      const byDefault = spawnInPty(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', join(home.path, 'default.jpg'), '--force'], { configDir: home.path, env: { ...PLAIN_TERMINAL, ...env } });
      expect(parseKitty((await byDefault.exited).output)).toHaveLength(1);
      const off = spawnInPty(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', join(home.path, 'default.jpg'), '--force', '--no-preview'], { configDir: home.path, env: { ...PLAIN_TERMINAL, ...env } });
      const quiet = await off.exited;
      expect(quiet.exitCode).toBe(0);
      expect(parseKitty(quiet.output)).toEqual([]);
    } finally {
      await runCli(['config', 'unset', 'defaults.preview'], { configDir: home.path });
    }
  });

  it('generate-async --listen --preview shows the image it caught; --preview without --listen is refused', async () => {
    const session = spawnInPty(['generate-async', '--lat', '51.5007', '--lng', '-0.1246', '--resolution', 'HD', '--listen', '-o', join(home.path, 'async.jpg'), '--force', '--preview'], {
      configDir: home.path,
      env: { ...PLAIN_TERMINAL, ...sandbox.env(), TERM_PROGRAM: 'iTerm.app' },
      columns: 50,
    });
    const { exitCode, output } = await session.exited;
    expect(exitCode).toBe(0);
    const [image] = parseIterm(output);
    expect(image!.args.get('width')).toBe('50');
    expect(jpegInfo(image!.data).width).toBe(500);
    sandbox.clearRequests();
    const stray = await runCli(['generate-async', '--lat', '1', '--lng', '2', '--callback-url', 'https://hooks.example.com/x', '--preview'], { configDir: home.path, env: sandbox.env() });
    expect(stray.exitCode).toBe(2);
    expect(stray.stderr).toBe('error: --preview only applies with --listen (which waits for the callback and saves the image)\n');
    expect(sandbox.requests()).toEqual([]);
  });

  it('an id is found through the list endpoint and its image downloaded without the key', async () => {
    const generated = await runCli(['generate', '--lat', '35.6586', '--lng', '139.7454', '--resolution', 'HD', '-o', join(home.path, 'tokyo.jpg'), '--force'], { configDir: home.path, env: sandbox.env() });
    expect(generated.exitCode).toBe(0);
    const listed = await runCli(['list', '--json', '--size', '1', '--sort', 'createdAt,desc'], { configDir: home.path, env: sandbox.env() });
    const id = JSON.parse(listed.stdout).content[0].id as string;
    sandbox.clearRequests();
    const { exitCode, output } = await viewInPty([id, '--width', '30'], { ...sandbox.env(), TERM_PROGRAM: 'iTerm.app' });
    expect(exitCode).toBe(0);
    const [image] = parseIterm(output);
    expect(jpegInfo(image!.data)).toMatchObject({ width: 300, height: 169 });
    const requests = sandbox.requests();
    const lists = requests.filter((entry) => entry.path === API_PATH && entry.method === 'GET');
    const downloads = requests.filter((entry) => entry.path.startsWith('/__sandbox/images/'));
    expect(lists.length).toBeGreaterThanOrEqual(1);
    expect(lists.every((entry) => entry.apiKeyHeader)).toBe(true);
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatchObject({ status: 200 });
    expect(downloads[0]!.apiKeyHeader).toBeUndefined();

    // Its first 8 characters, as `aerial view 0f8c2b1e` suggests, name it too, and the caption is the whole id.
    const short = await viewInPty([id.slice(0, 8), photo, '--width', '20'], { ...sandbox.env(), TERM_PROGRAM: 'iTerm.app' });
    expect(short.exitCode).toBe(0);
    expect(parseIterm(short.output)).toHaveLength(2);
    expect(withoutSgr(short.output)).toContain(id);
  });
});

/**
 * Runs `aerial view` inside a real tmux (a server of its own, on a socket in a
 * temp dir, with a config of the test's), whose client is on a pseudo-terminal:
 * what reaches that terminal is tmux's drawing plus whatever it passes through.
 */
function viewInTmux(args: string[], passthrough: 'on' | 'off', env: Record<string, string | undefined>): string {
  const dir = mkdtempSync(join(home.path, 'tmux-'));
  const conf = join(dir, 'tmux.conf');
  writeFileSync(conf, `set -g allow-passthrough ${passthrough}\nset -g status off\n`);
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const inner = [process.execPath, join(ROOT, 'bin', 'aerial.js'), 'view', ...args].map(quote).join(' ');
  const tmux = `tmux -S ${quote(join(dir, 'socket'))} -f ${quote(conf)} new-session -x 80 -y 30 ${quote(`${inner}; sleep 1`)}`;
  try {
    const script = scriptArgs(['-q', '-e', '-E', 'never', '-c', `stty cols 80 rows 30; ${tmux}`]);
    const result = spawnSync('script', script.args, {
      env: { ...cliEnv(home.path, { ...PLAIN_TERMINAL, ...env }), TMUX: undefined } as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 30_000,
    });
    script.done();
    return result.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!ptyAvailable() || !tmuxAvailable())('aerial view inside tmux', () => {
  it('with allow-passthrough, the terminal around tmux gets its own protocol through it', async () => {
    const output = viewInTmux([photo, '--width', '20'], 'on', { KITTY_WINDOW_ID: '1' });
    const [image, ...more] = parseKitty(output);
    expect(more).toEqual([]);
    expect(Object.fromEntries(image!.control)).toMatchObject({ a: 'T', f: '100', c: '20' });
    expect(pngSize(image!.data)).toEqual({ width: 200, height: 113 });
  });

  it('without it, half-blocks, which tmux draws itself', async () => {
    const output = viewInTmux([photo, '--width', '20'], 'off', { KITTY_WINDOW_ID: '1' });
    expect(parseKitty(output)).toEqual([]);
    expect(output).toContain('\u2580');
  });
});
