// The first-five-minutes experience, end to end where the process is the
// subject: --version on both paths (bin/aerial.js answers it without the
// bundle), the tagged JPEG on a pipe, and Ctrl-C leaving nothing behind.
// Profiles, help examples, typos, coordinates and the metadata of a saved
// file are tested in-process: test/unit/cli/first-use.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { execa } from 'execa';
import { BIN, cliEnv, ROOT, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;

useSandboxPerFile((started, dir) => {
  sandbox = started;
  home = dir;
});

function cli(args: string[], env: Record<string, string | undefined> = sandbox.env(), configDir = home.path) {
  return runCli(args, { configDir, env, cwd: home.path });
}

describe('--version', () => {
  it('--version prints the version of aerial and of Node.js, on both paths', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const expected = `aerial ${version} (node ${process.version})\n`;
    expect((await cli(['--version'])).stdout).toBe(expected); // bin/aerial.js fast path
    expect((await cli(['-V'])).stdout).toBe(expected);
    expect((await cli(['--no-color', '--version'])).stdout).toBe(expected); // through commander
  });
});

describe('metadata in saved images', () => {
  it('-o - writes the tagged JPEG to stdout too', async () => {
    const args = ['generate', '--lat', '40.6892', '--lng', '-74.0445', '--resolution', 'HD', '-o', '-'];
    const run = (extra: string[]) =>
      execa('node', [BIN, ...args, ...extra], { env: cliEnv(home.path, sandbox.env()), extendEnv: false, encoding: 'buffer', stdin: 'ignore' });
    const [tagged, raw] = await Promise.all([run([]), run(['--no-metadata'])]);
    expect([tagged.exitCode, raw.exitCode]).toEqual([0, 0]);
    expect([...tagged.stdout.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect((await exifr.gps(tagged.stdout)).latitude).toBeCloseTo(40.6892, 6);
    expect(await exifr.parse(raw.stdout, { tiff: true, xmp: true } as never)).toBeUndefined();
  });
});

describe('signals during generate', () => {
  function leftovers(dir: string): string[] {
    return readdirSync(dir).filter((name) => name.includes('.part') || name === 'out.jpg');
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} while the sandbox is generating: exit 130 at once, "interrupted", no .part file, no image, nothing charged`, async () => {
      const dir = tempDir();
      sandbox.setFaults({ latencyMs: 8_000 });
      const started = Date.now();
      const child = spawnCli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', 'out.jpg'], {
        configDir: dir.path,
        env: sandbox.env(),
      });
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // well after startup, well before the answer
      child.kill(signal);
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(String(result.stderr).trim()).toBe('error: interrupted');
      expect(leftovers(dir.path)).toEqual([]);
      // The client left before the answer: the sandbox logged no image sent, and charged nothing.
      expect(sandbox.requests().filter((e) => e.method === 'POST').map((e) => e.status)).toEqual([null]);
      dir.remove();
    });
  }

  describe('while the image is half downloaded', () => {
    let server: HostileServer;
    beforeAll(async () => {
      server = await startHostileServer();
    });
    afterAll(() => server.close());

    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      it(`${signal} removes the .part file it was writing and exits 130`, async () => {
        const dir = tempDir();
        const image = Buffer.from(jpeg.encode({ data: Buffer.alloc(640 * 480 * 4, 90), width: 640, height: 480 }, 90).data);
        server.respond((res) => {
          res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) });
          res.write(image.subarray(0, 4096)); // then silence: the download stalls half way
        });
        const child = spawnCli(['generate', '--lat', '1', '--lng', '2', '-o', 'out.jpg'], {
          configDir: dir.path,
          env: { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: 'hostile-key-000000' },
        });
        const deadline = Date.now() + 10_000;
        while (!readdirSync(dir.path).some((name) => name.endsWith('.part'))) {
          if (Date.now() > deadline) throw new Error('the CLI never started writing a .part file');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        child.kill(signal);
        const result = await child;
        expect(result.exitCode).toBe(130);
        expect(String(result.stderr).trim()).toBe('error: interrupted');
        expect(leftovers(dir.path)).toEqual([]);
        dir.remove();
      });
    }
  });
});
