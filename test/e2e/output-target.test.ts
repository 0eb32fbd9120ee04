// End-to-end: nothing is paid for and then thrown away because of something
// knowable earlier. Every output target the CLI can check before sending is
// checked, and refused (exit 2, one line, the request log empty); special
// files are written into, never replaced; a full, read-only or forbidden file
// system is one clear line with exit 2.
//
// Some cases need root (mknod, mount, dropping capabilities): they are skipped
// where the tests do not run as root or the kernel refuses (vitest lists them
// as skipped).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, cliEnv, runCli, spawnCli, stderrSoFar, tempDir, until } from '../helpers/cli.js';
import { API_PATH, jpegInfo, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let work: string;

useSandboxPerFile((started, tempHome) => {
  sandbox = started;
  home = tempHome;
});

let workCount = 0;
beforeEach(() => {
  work = join(home.path, `work${++workCount}`);
  mkdirSync(work);
});

const isRoot = process.getuid?.() === 0;

/** Runs `command` and tells whether it worked: the capability probes below. */
function works(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** A private mount of `type` in a temp dir, or undefined where mounting is not allowed. */
function privateMount(type: string, options: string[] = []): { path: string; unmount(): void } | undefined {
  const dir = tempDir('aerial-mount-');
  if (!isRoot || !works('mount', ['-t', type, ...options, type, dir.path])) {
    dir.remove();
    return undefined;
  }
  return {
    path: dir.path,
    unmount() {
      works('umount', ['-l', dir.path]);
      dir.remove();
    },
  };
}

/** What this machine lets the tests do, found once: root-only cases are skipped where they cannot run. */
const can = (() => {
  const scratch = tempDir('aerial-can-');
  const probe = privateMount('tmpfs', ['-o', 'size=64k']);
  probe?.unmount();
  const result = {
    mount: probe !== undefined,
    mknod: isRoot && works('mknod', [join(scratch.path, 'n'), 'c', '1', '3']),
    dropCapabilities: isRoot && works('setpriv', ['--bounding-set', '-dac_override', 'true']),
  };
  scratch.remove();
  return result;
})();

function cli(args: string[], env: Record<string, string | undefined> = sandbox.env()) {
  return runCli(args, { configDir: home.path, env, cwd: work });
}

const SCENE = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD'];

function generations() {
  return sandbox.requests().filter((entry) => entry.method === 'POST' && entry.path === API_PATH);
}

/** The refusal every case below must show: exit 2, one line naming the flag, and no request at all. */
function expectRefused(result: { exitCode: number; stderr: string }, message: RegExp): void {
  expect(result.stderr.trim()).toMatch(message);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.exitCode).toBe(2);
  expect(sandbox.requests()).toEqual([]);
}

describe('output targets refused before anything is sent', () => {
  it('a dangling symbolic link, with or without --force', async () => {
    const link = join(work, 'dangling.jpg');
    symlinkSync(join(work, 'missing-dir', 'y.jpg'), link);
    for (const force of [[], ['--force']]) {
      expectRefused(await cli(['generate', ...SCENE, '-o', link, ...force]), /^error: --output .*dangling\.jpg is a symbolic link to .*missing-dir\/y\.jpg, which does not exist; remove the link or name another file$/);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a directory, and a name longer than file systems allow (in bytes: 100 two-byte letters)', async () => {
    expectRefused(await cli(['generate', ...SCENE, '-o', work]), /^error: --output .* is a directory; name a file$/);
    const long = `${'é'.repeat(130)}.jpg`; // 264 bytes
    expectRefused(await cli(['generate', ...SCENE, '-o', long]), /^error: --output é+\.jpg: the name is too long for this file system$/);
    expectRefused(await cli(['generate-async', ...SCENE, '--listen', '-o', long]), /the name is too long/);
    expect(readdirSync(work)).toEqual([]);
  });

  it('generate-async --listen and batch refuse the same way, before the listener or the first row', async () => {
    const link = join(work, 'dangling-async.jpg');
    symlinkSync(join(work, 'nowhere.jpg'), link);
    expectRefused(await cli(['generate-async', ...SCENE, '--listen', '-o', link]), /is a symbolic link to .*nowhere\.jpg, which does not exist/);
    const csv = join(work, 'rows.csv');
    writeFileSync(csv, 'lat,lng\n1,2\n3,4\n');
    expectRefused(
      await cli(['batch', csv, '--resolution', 'HD', '--output-template', `${'x'.repeat(260)}/{row}.jpg`, '--manifest', 'm.jsonl']),
      /^error: --output-template: 'x+…' is longer than a file name may be \(255 bytes\)$/,
    );
  });

  it.skipIf(!can.mknod)('a block device (a private node made with mknod), even with --force', async () => {
    const device = join(work, 'block.jpg');
    expect(works('mknod', [device, 'b', '7', '200'])).toBe(true);
    expectRefused(await cli(['generate', ...SCENE, '-o', device, '--force']), /^error: --output .*block\.jpg is a block device; an image is never written there$/);
    expect(statSync(device).isBlockDevice()).toBe(true);
  });

  it.skipIf(!can.mount)('a directory where no file can be created (a private procfs mount, as -o /proc/x.jpg)', async () => {
    const proc = privateMount('proc')!;
    try {
      expectRefused(await cli(['generate', ...SCENE, '-o', join(proc.path, 'x.jpg')]), /^error: --output .*\/x\.jpg: cannot create files in .* \(ENOENT\)$/);
    } finally {
      proc.unmount();
    }
  });

  it.skipIf(!can.mount)('a directory that cannot be made (under a private procfs mount, as /proc/nope): one line naming it, exit 2, at once, for every command that makes one', async () => {
    // Node's own recursive mkdir loops for ever there on Node 20 to 24 (ENOENT with the parent present).
    const proc = privateMount('proc')!;
    try {
      const nope = join(proc.path, 'nope');
      const csv = join(work, 'rows.csv');
      writeFileSync(csv, 'lat,lng\n1,2\n');
      const runs: Array<[string[], RegExp]> = [
        [['generate', ...SCENE, '-o', join(nope, 'x.jpg')], /^error: --output .*\/nope\/x\.jpg: cannot create directory .*\/nope: the file system does not allow a directory there$/],
        [['export', nope], /^error: export: cannot create directory .*\/nope: the file system does not allow a directory there$/],
        [['export', join(nope, 'deeper', 'still')], /^error: export: cannot create directory .*\/nope: the file system does not allow a directory there$/],
        [['batch', csv, '--resolution', 'HD', '--output-template', join(nope, '{row}.jpg'), '--manifest', join(work, 'm.jsonl')], /^error: --output-template: cannot create directory .*\/nope: the file system does not allow a directory there$/],
        [['batch', csv, '--resolution', 'HD', '--output-template', join(work, '{row}.jpg'), '--manifest', join(nope, 'm.jsonl')], /^error: --manifest .*\/nope\/m\.jsonl: the file system does not allow a directory there$/],
        [['generate-async', ...SCENE, '--listen', '-o', join(nope, 'a.jpg')], /^error: --output .*\/nope\/a\.jpg: cannot create directory .*\/nope: the file system does not allow a directory there$/],
      ];
      for (const [args, message] of runs) {
        const started = Date.now();
        const result = await runCli(args, { configDir: home.path, env: sandbox.env(), cwd: work, timeout: 20_000 });
        expect(Date.now() - started, args.join(' ')).toBeLessThan(5_000);
        expectRefused(result, message);
      }
    } finally {
      proc.unmount();
    }
  });

  it.skipIf(!can.mount)('a read-only file system (a private read-only tmpfs), for generate and batch', async () => {
    const readOnly = privateMount('tmpfs', ['-o', 'ro,size=1m'])!;
    try {
      expectRefused(await cli(['generate', ...SCENE, '-o', join(readOnly.path, 'x.jpg')]), /^error: --output .*x\.jpg: cannot create files in .*: the file system is read-only$/);
      const csv = join(work, 'ro.csv');
      writeFileSync(csv, 'lat,lng\n1,2\n');
      expectRefused(await cli(['batch', csv, '--resolution', 'HD', '--output-template', join(readOnly.path, '{row}.jpg'), '--manifest', join(work, 'm.jsonl')]), /^error: --output-template: cannot create files in .*: the file system is read-only$/);
      // A directory to be made there (Node's mkdir -p reports ENOENT for it): the real reason, not "unexpected".
      expectRefused(await cli(['generate', ...SCENE, '-o', join(readOnly.path, 'new', 'x.jpg')]), /^error: --output .*x\.jpg: cannot create directory .*\/new: the file system is read-only$/);
      expectRefused(await cli(['batch', csv, '--resolution', 'HD', '--output-template', join(work, 'ro-{row}.jpg'), '--manifest', join(readOnly.path, 'new', 'm.jsonl')]), /^error: --manifest .*\/new\/m\.jsonl: the file system is read-only$/);
    } finally {
      readOnly.unmount();
    }
  });

  it.skipIf(isRoot && !can.dropCapabilities)('a directory without write permission (EACCES): by mode, and as root without CAP_DAC_OVERRIDE', async () => {
    const locked = join(work, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    try {
      let result;
      if (!isRoot) {
        result = await cli(['generate', ...SCENE, '-o', join(locked, 'x.jpg')]);
      } else {
        // Root passes every permission check through CAP_DAC_OVERRIDE; without it, modes apply to root too.
        const drop = ['--bounding-set', '-dac_override,-dac_read_search', '--inh-caps', '-all'];
        const run = await execa('setpriv', [...drop, '--', process.execPath, BIN, 'generate', ...SCENE, '-o', join(locked, 'x.jpg')], {
          env: cliEnv(home.path, sandbox.env()),
          extendEnv: false,
          cwd: work,
          reject: false,
        });
        result = { exitCode: run.exitCode ?? -1, stderr: String(run.stderr) };
      }
      expectRefused(result, /^error: --output .*x\.jpg: cannot create files in .*locked: permission denied$/);
      expect(readdirSync(locked)).toEqual([]);
    } finally {
      chmodSync(locked, 0o755);
    }
  });
});

describe('special files given as -o are written into, never replaced', () => {
  it.skipIf(!can.mknod)('a character device (a private copy of /dev/null made with mknod), with --force too', async () => {
    const device = join(work, 'null-device');
    expect(works('mknod', [device, 'c', '1', '3'])).toBe(true);
    for (const force of [[], ['--force']]) {
      const result = await cli(['generate', ...SCENE, '-o', device, '--json', ...force]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ file: device });
      expect(JSON.parse(result.stdout).bytes).toBeGreaterThan(10_000);
      expect(statSync(device).isCharacterDevice()).toBe(true);
    }
    expect(readdirSync(work).filter((name) => name.includes('null-device'))).toEqual(['null-device']);
  });

  it('a FIFO: its reader gets the whole JPEG with its metadata, and the FIFO stays a FIFO', async () => {
    const fifo = join(work, 'image.fifo');
    expect(works('mkfifo', [fifo])).toBe(true);
    const reader = execa('cat', [fifo], { encoding: 'buffer' });
    const result = await cli(['generate', ...SCENE, '-o', fifo, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const { stdout: bytes } = await reader;
    expect(bytes.length).toBe(JSON.parse(result.stdout).bytes);
    expect(jpegInfo(bytes)).toMatchObject({ width: 1280, height: 720 });
    expect((await exifr.gps(Buffer.from(bytes))).latitude).toBeCloseTo(48.8584, 5);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('a FIFO nobody reads yet: waits for its reader, saying so, and sends nothing until one comes', async () => {
    const fifo = join(work, 'later.fifo');
    expect(works('mkfifo', [fifo])).toBe(true);
    const child = spawnCli(['generate', ...SCENE, '-o', fifo], { configDir: home.path, env: sandbox.env(), cwd: work });
    const stderr = stderrSoFar(child);
    await until(() => stderr().includes('waiting for a reader'), 'the notice');
    expect(stderr()).toContain(`waiting for a reader to open the FIFO ${fifo}; nothing is sent before one does`);
    expect(sandbox.requests()).toEqual([]);
    const { stdout } = await execa('cat', [fifo], { encoding: 'buffer' });
    expect((await child).exitCode).toBe(0);
    expect(jpegInfo(stdout)).toMatchObject({ width: 1280, height: 720 });
    expect(generations()).toHaveLength(1);
  });

  it('a FIFO whose reader never comes: SIGTERM ends the wait with 130, nothing sent', async () => {
    const fifo = join(work, 'never.fifo');
    expect(works('mkfifo', [fifo])).toBe(true);
    const child = spawnCli(['generate', ...SCENE, '-o', fifo], { configDir: home.path, env: sandbox.env(), cwd: work });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('a full disk is one clear line and exit 2', () => {
  it.skipIf(!can.mknod)('generate into a full device (a private copy of /dev/full): ENOSPC', async () => {
    const device = join(work, 'full-device');
    expect(works('mknod', [device, 'c', '1', '7'])).toBe(true);
    const result = await cli(['generate', ...SCENE, '-o', device]);
    expect(result.stderr).toBe(`error: cannot write ${device}: no space left on the device\n`);
    expect(result.exitCode).toBe(2);
  });

  it.skipIf(!can.mount)('generate and batch on a file system too small for the images (a private 200 KiB tmpfs)', async () => {
    const small = privateMount('tmpfs', ['-o', 'size=200k'])!;
    try {
      // The temp file can be created (so nothing is refused), but an FHD image of a city (Paris) does not fit.
      const result = await cli(['generate', '--lat', '48.8566', '--lng', '2.3522', '-o', join(small.path, 'x.jpg')]);
      expect(result.stderr).toMatch(/^error: cannot write .*x\.jpg: no space left on the device\n$/);
      expect(result.exitCode).toBe(2);
      expect(readdirSync(small.path)).toEqual([]);

      // A batch stops at the first row that cannot be written: every later row would be paid for and lost too.
      sandbox.clearRequests();
      const csv = join(work, 'full.csv');
      writeFileSync(csv, `lat,lng\n${Array.from({ length: 8 }, (_, i) => `48.85${i},2.35`).join('\n')}\n`);
      const batch = await cli(['batch', csv, '--concurrency', '1', '--output-template', join(small.path, '{row}.jpg'), '--manifest', join(work, 'full.jsonl'), '--json']);
      expect(batch.exitCode).toBe(2);
      expect(batch.stderr).toMatch(/stopping the batch: NoSpace — cannot write .*: no space left on the device; rows not yet started are skipped/);
      expect(generations().length).toBeLessThan(8);
      expect(JSON.parse(batch.stdout).skipped).toBeGreaterThan(0);
      expect(readdirSync(small.path).filter((name) => name.endsWith('.part'))).toEqual([]);
    } finally {
      small.unmount();
    }
  });
});

describe('export on a full disk', () => {
  it.skipIf(!can.mount)('the ledger it keeps on disk cannot be written: one line naming its file, exit 2, and no scratch file left', async () => {
    expect((await cli(['generate', ...SCENE, '-o', join(work, 'listed.jpg')])).exitCode).toBe(0);
    // 16 pages of 4 KiB: 15 taken by a file, the last by the export's lock; the first slot of the ledger's
    // id table (a sparse file until written) finds no room.
    const small = privateMount('tmpfs', ['-o', 'size=64k'])!;
    try {
      writeFileSync(join(small.path, 'filler'), Buffer.alloc(60 * 1024));
      const dir = join(small.path, 'backup');
      const result = await cli(['export', dir]);
      expect(result.stderr).toBe(`error: cannot write ${join(dir, '.aerial-export.ids')}: no space left on the device\n`);
      expect(result.exitCode).toBe(2);
      expect(readdirSync(dir).filter((name) => name.startsWith('.'))).toEqual([]);
    } finally {
      small.unmount();
    }
  });
});

describe('long names', () => {
  it('a 250-byte name works: its temp file is kept within what the file system allows', async () => {
    const name = `${'n'.repeat(246)}.jpg`;
    const result = await cli(['generate', ...SCENE, '-o', name]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readdirSync(work)).toContain(name);
    expect(jpegInfo(readFileSync(join(work, name)))).toMatchObject({ width: 1280, height: 720 });
    expect(readdirSync(work).filter((entry) => entry.endsWith('.part'))).toEqual([]);

    const csv = join(work, 'long.csv');
    writeFileSync(csv, 'id,lat,lng\na,1,2\nb,3,4\n');
    const batch = await cli(['batch', csv, '--resolution', 'HD', '--output-template', `long/${'m'.repeat(245)}{id}.jpg`]);
    expect(batch.exitCode, batch.stderr).toBe(0);
    expect(readdirSync(join(work, 'long')).filter((entry) => entry.endsWith('.jpg')).map((entry) => Buffer.byteLength(entry))).toEqual([250, 250]);
    expect(existsSync(join(work, 'long', 'aerial-batch-manifest.jsonl'))).toBe(true);
  });
});
