// Interactive flows on a real pseudo-terminal (see test/helpers/pty.ts):
// generate's prompts, init's setup, Ctrl-C at a prompt and mid-generation,
// and the refusals where nobody can answer (no TTY, --json).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import jpeg from 'jpeg-js';
import { describe, expect, it } from 'vitest';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { startHostileServer } from '../helpers/hostile-server.js';
import { KEYS, ptyAvailable, spawnInPty } from '../helpers/pty.js';

let sandbox: TestSandbox;

useSandboxPerFile((started) => {
  sandbox = started;
});

/** A fresh config dir and working dir per test, with the sandbox as the service. */
function workspace() {
  const dir = tempDir('aerial-tty-');
  return { dir, configDir: join(dir.path, 'config'), cwd: dir.path, env: sandbox.env() as Record<string, string | undefined> };
}

function generations() {
  return sandbox.requests().filter((r) => r.method === 'POST' && r.path.startsWith('/api/'));
}

function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.part') || name.endsWith('.jpg'));
}

describe.skipIf(!ptyAvailable())('on a terminal', () => {
  it('generate without --lat/--lng asks for the location, each scene choice and the file name', async () => {
    const ws = workspace();
    // A configured default must be the preselected choice.
    expect((await runCli(['config', 'set', 'defaults.zoom', 'High'], { configDir: ws.configDir, cwd: ws.cwd })).exitCode).toBe(0);
    const term = spawnInPty(['generate'], ws);

    // A swapped pair is caught inline, with the hint, and asked again.
    await term.answer('Location (latitude,longitude, a geo: URI, or a place such as "Paris, FR")', `151.2153,-33.8568${KEYS.enter}`);
    await term.waitFor('latitude must be between -90 and 90; got 151.2153 (did you swap latitude and longitude?)');
    await new Promise((resolve) => setTimeout(resolve, 60));
    term.write(`${KEYS.backspace.repeat(20)}-33.8568, 151.2153${KEYS.enter}`);

    const resolution = await term.choose('Resolution', `${KEYS.up}${KEYS.enter}`); // FHD (default) → HD
    expect(resolution).toMatch(/❯ FHD \(default\)/);
    const zoom = await term.choose('Zoom', KEYS.enter);
    // The profile's default is both preselected and the one marked "(default)".
    expect(zoom.slice(zoom.lastIndexOf('? Zoom'))).toMatch(/\n❯ High \(default\)\n/);
    expect(zoom).not.toContain('Medium (default)');
    await term.choose('Camera faces', `${KEYS.down}${KEYS.enter}`); // North → NorthEast
    for (const prompt of ['Camera angle', 'Weather', 'Time of day', 'Aspect ratio', 'Epoch']) await term.choose(prompt, KEYS.enter);
    const saveAs = await term.answer(/Save as \(.*\)/, `${KEYS.backspace.repeat(80)}opera.jpg${KEYS.enter}`);
    expect(saveAs).toMatch(/Save as \(aerial--33\.8568_151\.2153-\d{8}T\d{6}\.jpg\)/);

    await term.waitFor('Same without questions: aerial generate --at "-33.8568, 151.2153" --resolution HD --bearing NorthEast -o opera.jpg');
    await term.waitFor(/Saved .*opera\.jpg/);
    const { exitCode } = await term.exited;
    expect(exitCode).toBe(0);

    const sent = generations();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({
      coordinates: { lat: -33.8568, lng: 151.2153 },
      resolution: 'HD',
      zoom: 'High',
      bearing: 'NorthEast',
      angle: 'High',
      weather: 'Sunny',
    });
    const gps = await exifr.gps(readFileSync(join(ws.cwd, 'opera.jpg')));
    expect(gps.latitude).toBeCloseTo(-33.8568, 6);
    expect(gps.longitude).toBeCloseTo(151.2153, 6);
    ws.dir.remove();
  });

  it('--interactive preselects the values given as flags, and Enter keeps them', async () => {
    const ws = workspace();
    const term = spawnInPty(['generate', '--interactive', '--lat', '-33.8568', '--lng', '151.2153', '--zoom', 'extrahigh', '--weather', 'snow', '-o', 'opera.jpg'], ws);
    await term.answer(/Location.*\(-33\.8568,151\.2153\)/, KEYS.enter);
    await term.choose('Resolution', `${KEYS.up}${KEYS.enter}`);
    expect(await term.choose('Zoom', KEYS.enter)).toMatch(/❯ ExtraHigh\n/);
    await term.choose('Camera faces', KEYS.enter);
    await term.choose('Camera angle', KEYS.enter);
    expect(await term.choose('Weather', KEYS.enter)).toMatch(/❯ Snow\n/);
    for (const prompt of ['Time of day', 'Aspect ratio', 'Epoch']) await term.choose(prompt, KEYS.enter);
    expect((await term.exited).exitCode).toBe(0);
    expect(term.screen).not.toContain('Save as'); // -o was given
    expect(generations()[0]!.body).toMatchObject({ coordinates: { lat: -33.8568, lng: 151.2153 }, zoom: 'ExtraHigh', weather: 'Snow', resolution: 'HD' });
    expect(existsSync(join(ws.cwd, 'opera.jpg'))).toBe(true);
    ws.dir.remove();
  });

  it('Ctrl-C at a prompt exits 130, sends nothing and writes nothing', async () => {
    const ws = workspace();
    const term = spawnInPty(['generate'], ws);
    await term.answer('Location', `48.8584,2.2945${KEYS.enter}`);
    await term.choose('Resolution', KEYS.ctrlC);
    const { exitCode } = await term.exited;
    expect(exitCode).toBe(130);
    expect(term.screen).toContain('error: interrupted');
    expect(generations()).toEqual([]);
    expect(leftovers(ws.cwd)).toEqual([]);
    ws.dir.remove();
  });

  it('Ctrl-C while the spinner runs stops the download: exit 130, no .part file, no image', async () => {
    const ws = workspace();
    sandbox.setFaults({ latencyMs: 5_000 });
    const started = Date.now();
    const term = spawnInPty(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', 'slow.jpg'], ws);
    await term.waitFor('Generating HD image of 48.8584, 2.2945');
    await new Promise((resolve) => setTimeout(resolve, 300));
    term.write(KEYS.ctrlC); // the terminal driver turns this into SIGINT for the foreground process
    const { exitCode } = await term.exited;
    expect(exitCode).toBe(130);
    expect(Date.now() - started).toBeLessThan(4_500); // interrupted, not finished
    // Said once, as an interruption: the spinner is cleared, not turned into a failure.
    expect(term.screen).toContain('error: interrupted');
    expect(term.screen).not.toContain('Generation failed');
    expect(leftovers(ws.cwd)).toEqual([]);
    ws.dir.remove();
  });

  it('a terminal closed mid-download (SIGHUP from the terminal driver) removes the .part file', async () => {
    const ws = workspace();
    const server = await startHostileServer();
    const image = Buffer.from(jpeg.encode({ data: Buffer.alloc(640 * 480 * 4, 90), width: 640, height: 480 }, 90).data);
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) });
      res.write(image.subarray(0, 4096)); // then silence: the download stalls half way
    });
    try {
      const term = spawnInPty(['generate', '--lat', '1', '--lng', '2', '-o', 'out.jpg'], { ...ws, env: { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'hostile-key-000000' } });
      await term.waitFor('Downloading');
      const parts = () => readdirSync(ws.cwd).filter((name) => name.endsWith('.part'));
      expect(parts()).toHaveLength(1);
      term.kill(); // script dies, the pty's master closes, the kernel hangs up the CLI
      const deadline = Date.now() + 5_000;
      while (parts().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(leftovers(ws.cwd)).toEqual([]);
    } finally {
      await server.close();
      ws.dir.remove();
    }
  });

  it('NO_COLOR holds for the spinner and its success tick (ora colours by its own sniffing), and the size says KiB', async () => {
    const ws = workspace();
    const runs = await Promise.all(
      [{ NO_COLOR: '1' }, {}].map(async (env) => {
        const term = spawnInPty(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', `${Object.keys(env).length}.jpg`], { ...ws, env: { ...ws.env, ...env } });
        return term.exited;
      }),
    );
    const [plain, coloured] = runs;
    expect(plain!.exitCode).toBe(0);
    // The cursor may be hidden and shown (not colour); no SGR code at all, frames and tick included.
    expect(plain!.output).not.toMatch(/\x1b\[[0-9;]*m/);
    expect(plain!.output).toMatch(/✔ Saved .*1\.jpg \(\d+ KiB, [\d.]+s\)/);
    expect(coloured!.output).toMatch(/\x1b\[32m✔\x1b\[39m Saved .*0\.jpg \(\d+ KiB/); // the check can fail: colour is on by default
    ws.dir.remove();
  });

  it('--no-color prompts without colour codes (inquirer would colour on its own)', async () => {
    const ws = workspace();
    const colored = spawnInPty(['generate'], ws);
    await colored.answer('Location', `1,2${KEYS.enter}`);
    await colored.choose('Resolution', KEYS.ctrlC);
    const plain = spawnInPty(['generate', '--no-color'], ws);
    await plain.answer('Location', `1,2${KEYS.enter}`);
    await plain.choose('Resolution', KEYS.ctrlC);
    const [withColour, without] = await Promise.all([colored.exited, plain.exited]);
    const sgr = /\x1b\[[0-9;]*m/;
    expect(withColour.output).toMatch(sgr); // the check can fail: colour is there by default
    expect(without.output).not.toMatch(sgr);
    expect(plain.screen).toContain('? Resolution');
    ws.dir.remove();
  });

  it("Ctrl-C at other commands' prompts (config's hidden key, delete's confirmation) also exits 130", async () => {
    const ws = workspace();
    const key = spawnInPty(['config', 'set', 'api-key'], { ...ws, env: {} });
    await key.answer('API key', KEYS.ctrlC);
    expect((await key.exited).exitCode).toBe(130);
    expect(key.screen).toContain('error: interrupted');
    expect(existsSync(join(ws.configDir, 'config.json'))).toBe(false);

    const made = await runCli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', 'del.jpg'], ws);
    expect(made.exitCode, made.stderr).toBe(0);
    const id = (await runCli(['list', '--size', '1'], ws)).stdout.split('\t')[0]!;
    // Its first characters are looked up first: the question names the whole id.
    const del = spawnInPty(['delete', id.slice(0, 8)], ws);
    await del.answer(`Delete image ${id} permanently?`, KEYS.ctrlC);
    expect((await del.exited).exitCode).toBe(130);
    expect(sandbox.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    ws.dir.remove();
  });

  it('delete asks nothing about an id that is not in the history: exit 5', async () => {
    const ws = workspace();
    const del = spawnInPty(['delete', 'no-such-image-id'], ws);
    const { exitCode } = await del.exited;
    expect(exitCode).toBe(5);
    expect(del.screen).toContain('error: NotFound — image no-such-image-id not found in your history');
    expect(del.screen).not.toContain('permanently?');
    expect(sandbox.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    ws.dir.remove();
  });

  it('--json on a terminal never prompts: exit 2 naming the missing flag', async () => {
    const ws = workspace();
    const term = spawnInPty(['generate', '--json', '--lng', '2.2945'], ws);
    const { exitCode } = await term.exited;
    expect(exitCode).toBe(2);
    expect(term.screen).toContain('"message":"--lat is required');
    expect(term.screen).not.toContain('Location');
    expect(generations()).toEqual([]);
    ws.dir.remove();
  });

  describe('init', () => {
    it('asks the service (a URL of ours), hidden key and defaults, lists once to test them, and saves the profile', async () => {
      const ws = workspace();
      const term = spawnInPty(['init', '--profile', 'work'], { ...ws, env: {} });
      await term.choose('Service', `${KEYS.down}${KEYS.down}${KEYS.enter}`); // Another URL…
      await term.answer('Service base URL', `${sandbox.url}${KEYS.enter}`);
      await term.answer('API key (hidden)', `${sandbox.key}${KEYS.enter}`);
      // Checked at once, before the scene defaults.
      await term.waitFor(/Connected: \d+ images? in your history/);
      await term.answer('Choose default scene settings now?', `y${KEYS.enter}`);
      await term.choose('Resolution', `${KEYS.up}${KEYS.enter}`); // HD
      await term.choose('Zoom', `${KEYS.down}${KEYS.enter}`); // High
      for (const prompt of ['Camera faces', 'Camera angle', 'Weather', 'Time of day', 'Aspect ratio', 'Epoch']) await term.choose(prompt, KEYS.enter);
      await term.waitFor('Saved profile work');
      await term.waitFor('Next: aerial generate --profile work');
      expect((await term.exited).exitCode).toBe(0);
      expect(term.screen).toMatch(/API key \(hidden\) \*{10,}/); // masked while typed, never echoed
      expect(sandbox.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/api/'))).toHaveLength(1);

      const file = join(ws.configDir, 'config.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      expect(saved.profiles.work).toEqual({ baseUrl: sandbox.url, apiKey: sandbox.key, defaults: { resolution: 'HD', zoom: 'High' } });

      // The saved profile works for the next command, without any environment.
      const listed = await runCli(['list', '--json', '--profile', 'work'], { configDir: ws.configDir, cwd: ws.cwd });
      expect(listed.exitCode).toBe(0);
      ws.dir.remove();
    });

    it('checks the key as soon as it is typed and asks again while the service refuses it, before any other question', async () => {
      const ws = workspace();
      const term = spawnInPty(['init'], { ...ws, env: {} });
      await term.choose('Service', `${KEYS.down}${KEYS.down}${KEYS.enter}`);
      await term.answer('Service base URL', `${sandbox.url}${KEYS.enter}`);
      await term.answer('API key', `not-the-right-key-123${KEYS.enter}`);
      await term.waitFor('Test call failed: the service refused this API key');
      await term.waitFor('Enter the key again');
      expect(term.screen).not.toContain('Choose default scene settings');
      await term.answer('API key (hidden)', `${sandbox.key}${KEYS.enter}`);
      await term.waitFor(/Connected: \d+ images? in your history/);
      await term.answer('Choose default scene settings now?', KEYS.enter);
      await term.waitFor('Saved profile default');
      expect((await term.exited).exitCode).toBe(0);
      expect(JSON.parse(readFileSync(join(ws.configDir, 'config.json'), 'utf8')).profiles.default.apiKey).toBe(sandbox.key);
      ws.dir.remove();
    });

    it('a service it cannot reach is said at once, and unless told to go on, nothing is saved (exit 7)', async () => {
      const ws = workspace();
      const term = spawnInPty(['init'], { ...ws, env: {} });
      await term.choose('Service', `${KEYS.down}${KEYS.down}${KEYS.enter}`);
      await term.answer('Service base URL', `http://127.0.0.1:1${KEYS.enter}`);
      await term.answer('API key', `some-key-1234567${KEYS.enter}`);
      await term.waitFor('Test call failed');
      await term.answer('Go on and save these settings anyway?', KEYS.enter);
      expect((await term.exited).exitCode).toBe(7);
      expect(existsSync(join(ws.configDir, 'config.json'))).toBe(false);
      ws.dir.remove();
    });
  });
});

describe('without a terminal', () => {
  it('generate without --lat exits 2 naming the flag, and sends nothing', async () => {
    const ws = workspace();
    const result = await runCli(['generate', '--lng', '2.2945'], { configDir: ws.configDir, cwd: ws.cwd, env: ws.env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: --lat is required (or --at LAT,LNG or a place name)\n");
    expect(generations()).toEqual([]);
    ws.dir.remove();
  });

  it('--interactive exits 2 saying it needs a terminal', async () => {
    const ws = workspace();
    const result = await runCli(['generate', '--interactive'], { configDir: ws.configDir, cwd: ws.cwd, env: ws.env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--interactive needs a terminal');
    expect(generations()).toEqual([]);
    ws.dir.remove();
  });

  it('init exits 2 and points at config set', async () => {
    const ws = workspace();
    const result = await runCli(['init'], { configDir: ws.configDir, cwd: ws.cwd });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("aerial config set base-url|api-key");
    expect(existsSync(join(ws.configDir, 'config.json'))).toBe(false);
    ws.dir.remove();
  });
});
