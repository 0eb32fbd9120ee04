// End-to-end: the config file where users keep it. A symbolic link from a
// dotfiles manager is kept and the file behind it written; a file mounted on
// its own (`docker run -v …/config.json:…`) is written in place; anything but
// a regular file is refused before it is opened; read-only and full file
// systems are one line with exit 2 and leave no lock behind; an API key no
// HTTP header can carry is refused at the hidden prompt (the other places it
// is refused, and empty profile names: test/unit/commands/config-refusals.test.ts).
// Mounts are made in a private mount namespace (helpers/private-mounts):
// those cases need root and are skipped where the tests do not run as root.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSecret, runCli, type CliResult } from '../helpers/cli.js';
import { inPrivateMounts, privateMountsAvailable } from '../helpers/private-mounts.js';
import { KEYS, ptyAvailable, spawnInPty } from '../helpers/pty.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: { path: string };

useSandboxPerFile((started, tempHome) => {
  sandbox = started;
  home = tempHome;
});

let dirCount = 0;
function fresh(name: string): string {
  const dir = join(home.path, `${name}-${++dirCount}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function aerial(configDir: string, args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}) {
  return runCli(args, { configDir, env: options.env, input: options.input, timeout: 15_000 });
}

function expectOneLine(result: CliResult, exitCode: number, message: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(exitCode);
  expect(result.stderr).not.toMatch(/unexpected/);
  expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(result.stderr).toMatch(message);
}

function json(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

describe('a config file behind a symbolic link (stow, chezmoi, home-manager)', () => {
  it('config set and unset keep the link and write the file it names, with the other profiles kept', async () => {
    const dotfiles = fresh('dotfiles');
    mkdirSync(join(dotfiles, 'aerial'));
    const file = join(dotfiles, 'aerial', 'config.json');
    writeFileSync(file, '{"profiles":{"work":{"baseUrl":"https://work.example"}}}\n', { mode: 0o644 });
    const configDir = fresh('linked');
    const link = join(configDir, 'config.json');
    const target = join('..', basename(dotfiles), 'aerial', 'config.json');
    symlinkSync(target, link); // relative, as stow makes them
    // A link to that link (a config directory itself managed by another tool).
    const outerDir = fresh('linked-twice');
    symlinkSync(link, join(outerDir, 'config.json'));

    for (const [dir, args] of [
      [configDir, ['config', 'set', 'defaults.zoom', 'High']],
      [configDir, ['config', 'set', 'base-url', 'https://default.example']],
      [outerDir, ['config', 'set', 'defaults.epoch', 'Ancient']],
      [configDir, ['config', 'unset', 'defaults.zoom']],
    ] as const) {
      const result = await aerial(dir, [...args]);
      expect(result.exitCode, result.stderr).toBe(0);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(lstatSync(join(outerDir, 'config.json')).isSymbolicLink()).toBe(true);
    expect(json(file)).toEqual({
      profiles: { work: { baseUrl: 'https://work.example' }, default: { baseUrl: 'https://default.example', defaults: { epoch: 'Ancient' } } },
    });
    // It holds the key once one is set: the user's alone, as a file aerial creates.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(configDir)).toEqual(['config.json']);
    expect(readdirSync(join(dotfiles, 'aerial'))).toEqual(['config.json']);
    expect((await aerial(configDir, ['config', 'get', 'base-url'])).stdout).toBe('https://default.example\n');
  });

  it('a link to nothing is refused (one line, exit 2), the link left as it is and nothing created', async () => {
    const configDir = fresh('dangling');
    const nowhere = join(home.path, 'not-there', 'config.json');
    symlinkSync(nowhere, join(configDir, 'config.json'));
    const result = await aerial(configDir, ['config', 'set', 'defaults.zoom', 'High']);
    expectOneLine(result, 2, /^error: ConfigError — config file .*dangling-\d+\/config\.json is a symbolic link to .*not-there\/config\.json, which does not exist; create that file, or remove the link\n$/);
    expect(readlinkSync(join(configDir, 'config.json'))).toBe(nowhere);
    expect(existsSync(join(home.path, 'not-there'))).toBe(false);
    expect(readdirSync(configDir)).toEqual(['config.json']);
  });

  it.skipIf(!privateMountsAvailable)('a link to a file on a read-only file system (a home-manager store) is read, and a change is one line naming both', async () => {
    const base = fresh('store');
    const configDir = join(base, 'config');
    const run = await inPrivateMounts(
      `mkdir -p "$BASE/store" "$BASE/config"
mount -t tmpfs -o size=64k tmpfs "$BASE/store"
printf '{"profiles":{"default":{"defaults":{"zoom":"Low"}}}}' >"$BASE/store/config.json"
mount -o remount,ro "$BASE/store"
ln -s "$BASE/store/config.json" "$BASE/config/config.json"
aerial config get defaults.zoom
aerial config set defaults.zoom High
aerial config get defaults.zoom
`,
      { configDir, env: { BASE: base } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const [before, set, after] = run.runs;
    expect(before!.stdout).toBe('Low\n');
    expectOneLine(
      set!,
      2,
      /^error: ConfigError — cannot write config file .*\/config\/config\.json \(a link to .*\/store\/config\.json\): the file system is read-only \(set AERIAL_CONFIG_DIR to a directory you can write\)\n$/,
    );
    expect(after!.stdout).toBe('Low\n');
    expect(readdirSync(configDir)).toEqual(['config.json']);
  });
});

describe.skipIf(!privateMountsAvailable)('a config file mounted on its own (docker run -v …/config.json:…)', () => {
  /** A host file, and a config directory holding the placeholder the file is mounted over. */
  function mountedFile(content: string, mode = 0o640) {
    const base = fresh('single-file');
    mkdirSync(join(base, 'host'));
    mkdirSync(join(base, 'config'));
    writeFileSync(join(base, 'host', 'config.json'), content, { mode });
    chmodSync(join(base, 'host', 'config.json'), mode);
    writeFileSync(join(base, 'config', 'config.json'), '');
    return { base, host: join(base, 'host', 'config.json'), configDir: join(base, 'config') };
  }
  const BIND = 'mount --bind "$BASE/host/config.json" "$BASE/config/config.json"\n';

  it('is written in place (the rename over a mount point fails with EBUSY): set, set, unset, each kept', async () => {
    const { base, host, configDir } = mountedFile('{"profiles":{"work":{}}}\n');
    const run = await inPrivateMounts(
      `${BIND}aerial config set defaults.zoom High
aerial config set base-url https://mounted.example
aerial config unset defaults.zoom
aerial config get base-url
`,
      { configDir, env: { BASE: base } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.runs.map((r) => [r.exitCode, r.stderr.replace(/\n$/, '')])).toEqual([
      [0, '✔ Set defaults.zoom = High'],
      [0, '✔ Set base-url = https://mounted.example'],
      [0, '✔ Unset defaults.zoom'],
      [0, ''],
    ]);
    expect(run.runs[3]!.stdout).toBe('https://mounted.example\n');
    expect(json(host)).toEqual({ profiles: { work: {}, default: { baseUrl: 'https://mounted.example' } } });
    // The mounted file keeps the mode its owner gave it; the placeholder under the mount is untouched; no temp or lock file is left.
    expect(statSync(host).mode & 0o777).toBe(0o640);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe('');
    expect(readdirSync(configDir)).toEqual(['config.json']);
  });

  it('mounted read-only: one line, exit 2, the file unchanged', async () => {
    const { base, host, configDir } = mountedFile('{"profiles":{}}\n');
    const run = await inPrivateMounts(`${BIND}mount -o remount,bind,ro "$BASE/config/config.json"\naerial config set defaults.zoom High\n`, { configDir, env: { BASE: base } });
    expect(run.exitCode, run.stderr).toBe(0);
    expectOneLine(run.runs[0]!, 2, /^error: ConfigError — cannot write config file .*\/config\/config\.json: the file system is read-only \(set AERIAL_CONFIG_DIR to a directory you can write\)\n$/);
    expect(readFileSync(host, 'utf8')).toBe('{"profiles":{}}\n');
    expect(readdirSync(configDir)).toEqual(['config.json']);
  });

  it('on a file system that fills up during the write: the old bytes are put back, one line, exit 2, no lock left', async () => {
    // One tmpfs page (4 KiB) holds the old file; the new one needs a second, which a filler has taken.
    const old = JSON.stringify({ profiles: { default: { baseUrl: `https://example.com/${'a'.repeat(4030)}` } } });
    expect(old.length).toBeGreaterThan(4000);
    expect(old.length).toBeLessThan(4096);
    const base = fresh('single-file-full');
    mkdirSync(join(base, 'config'));
    writeFileSync(join(base, 'config', 'config.json'), '');
    writeFileSync(join(base, 'seed.json'), old);
    const run = await inPrivateMounts(
      `mkdir -p "$BASE/host"
mount -t tmpfs -o size=8k tmpfs "$BASE/host"
cp "$BASE/seed.json" "$BASE/host/config.json"
head -c 1M /dev/zero >"$BASE/host/filler" 2>/dev/null || true
${BIND}aerial config set defaults.zoom High
cmp -s "$BASE/seed.json" "$BASE/host/config.json" && echo "host file: as it was" || echo "host file: changed"
ls -A "$BASE/host"
echo --
ls -A "$BASE/config"
`,
      { configDir: join(base, 'config'), env: { BASE: base } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expectOneLine(run.runs[0]!, 2, /^error: ConfigError — cannot write config file .*\/config\/config\.json: no space left on the device \(free some space there, or set AERIAL_CONFIG_DIR to a directory on another disk\)\n$/);
    expect(run.stdout).toBe('host file: as it was\nconfig.json\nfiller\n--\nconfig.json\n');
  });
});

describe('anything but a regular file is refused before it is opened: one line, exit 2, no hang', () => {
  const COMMANDS = [['list'], ['config', 'list'], ['config', 'set', 'defaults.zoom', 'High'], ['generate', '--sandbox', '--lat', '1', '--lng', '2', '-o', '-']];

  async function expectRefused(configDir: string, what: RegExp): Promise<void> {
    for (const args of COMMANDS) {
      const result = await aerial(configDir, args, { env: sandbox.env() });
      expectOneLine(result, 2, new RegExp(`^error: ConfigError — cannot read config file .*config\\.json: it is ${what.source}, not a regular file; move it out of the way, or set AERIAL_CONFIG_DIR to another directory\\n$`));
      expect(result.stdout).toBe('');
    }
    const scripted = await aerial(configDir, ['list', '--json'], { env: sandbox.env() });
    expect(scripted.exitCode).toBe(2);
    expect(scripted.stderr.endsWith('\n') && scripted.stderr.split('\n').length).toBe(2);
    expect(JSON.parse(scripted.stderr)).toMatchObject({ status: null, error: 'ConfigError', exitCode: 2, message: expect.stringMatching(what) });
    expect(sandbox.requests()).toEqual([]);
  }

  it('a FIFO, which a writer is waiting on: it is never opened (the writer still waits)', async () => {
    const configDir = fresh('fifo');
    const fifo = join(configDir, 'config.json');
    const made = spawn('mkfifo', [fifo]);
    await new Promise((resolve) => made.on('close', resolve));
    // A writer blocks in open() until someone opens the FIFO for reading: if the CLI did, it would finish.
    const writer = spawn('sh', ['-c', 'printf "{}" >"$1"', 'sh', fifo], { stdio: 'ignore' });
    try {
      await expectRefused(configDir, /a FIFO \(named pipe\)/);
      expect(writer.exitCode).toBe(null);
    } finally {
      writer.kill('SIGKILL');
    }
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  }, 60_000);

  it('a symbolic link to a FIFO', async () => {
    const configDir = fresh('fifo-link');
    const elsewhere = fresh('fifo-target');
    const made = spawn('mkfifo', [join(elsewhere, 'pipe')]);
    await new Promise((resolve) => made.on('close', resolve));
    symlinkSync(join(elsewhere, 'pipe'), join(configDir, 'config.json'));
    await expectRefused(configDir, /a FIFO \(named pipe\)/);
  }, 60_000);

  it('a socket and a directory', async () => {
    const socketDir = fresh('socket');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(socketDir, 'config.json'), resolve));
    try {
      await expectRefused(socketDir, /a socket/);
    } finally {
      server.close();
    }
    const directory = fresh('directory');
    mkdirSync(join(directory, 'config.json'));
    await expectRefused(directory, /a directory/);
  }, 60_000);

  it('a FIFO in place of the lock file', async () => {
    const configDir = fresh('lock-fifo');
    const made = spawn('mkfifo', [join(configDir, 'config.json.lock')]);
    await new Promise((resolve) => made.on('close', resolve));
    const result = await aerial(configDir, ['config', 'set', 'defaults.zoom', 'High']);
    expectOneLine(result, 2, /^error: ConfigError — cannot lock config file .*\/config\.json: .*\/config\.json\.lock is not a regular file; remove it\n$/);
    expect(readdirSync(configDir)).toEqual(['config.json.lock']);
  });
});

describe.skipIf(!privateMountsAvailable)('read-only and full file systems', () => {
  it('a config directory to be made under a read-only mount: one line naming it, exit 2, never "unexpected"', async () => {
    const base = fresh('read-only');
    const configDir = join(base, 'ro', 'aerial', 'nested');
    writeFileSync(join(base, 'key'), 'some-key-1234567890\n');
    registerSecret('some-key-1234567890');
    const run = await inPrivateMounts(
      `mkdir -p "$BASE/ro"
mount -t tmpfs -o ro,size=16k tmpfs "$BASE/ro"
aerial config set defaults.zoom High
STDIN="$BASE/key" aerial config set api-key
aerial config list
`,
      { configDir, env: { BASE: base } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const message = /^error: ConfigError — cannot write config file .*\/ro\/aerial\/nested\/config\.json: the file system is read-only \(set AERIAL_CONFIG_DIR to a directory you can write\)\n$/;
    expectOneLine(run.runs[0]!, 2, message);
    expectOneLine(run.runs[1]!, 2, message);
    // Reading needs nothing written: the commands that only read still run.
    expect(run.runs[2]!.exitCode, run.runs[2]!.stderr).toBe(0);
  });

  it('a full file system: one line, exit 2, the file as it was, no lock or temp file left, and the next change does not wait', async () => {
    const base = fresh('full');
    const configDir = join(base, 'config');
    const run = await inPrivateMounts(
      `mkdir -p "$BASE/config"
mount -t tmpfs -o size=16k tmpfs "$BASE/config"
aerial config set defaults.zoom Low
cp "$BASE/config/config.json" "$BASE/before.json"
head -c 1M /dev/zero >"$BASE/config/filler" 2>/dev/null || true
aerial config set defaults.zoom High
cmp -s "$BASE/before.json" "$BASE/config/config.json" && echo "config file: as it was" || echo "config file: changed"
ls -A "$BASE/config"
rm "$BASE/config/filler"
aerial config set defaults.zoom High
aerial config get defaults.zoom
`,
      { configDir, env: { BASE: base } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const [first, full, next, get] = run.runs;
    expect(first!.exitCode, first!.stderr).toBe(0);
    expectOneLine(full!, 2, /^error: ConfigError — cannot write config file .*\/config\/config\.json: no space left on the device \(free some space there, or set AERIAL_CONFIG_DIR to a directory on another disk\)\n$/);
    expect(run.stdout).toBe('config file: as it was\nconfig.json\nfiller\n');
    expect(next!.exitCode, next!.stderr).toBe(0);
    // A lock left behind would make this wait for it to go stale (10 s).
    expect(next!.ms).toBeLessThan(5_000);
    expect(get!.stdout).toBe('High\n');
  });
});

describe('an API key with characters no HTTP header can carry (the rest: test/unit/commands/config-refusals.test.ts)', () => {
  // Two halves that would each give the key away: neither may appear in any output.
  const FRONT = 'Zq7Xk2Lp9';
  const BACK = 'Wm4Rt8Yn3Bv6';
  for (const secret of [FRONT, BACK]) registerSecret(secret);
  const BAD: Array<[name: string, codePoint: string, key: string, at: number]> = [
    ['a zero-width space', 'U+200B', `${FRONT}\u200b${BACK}`, 10],
    ['a typographic quote', 'U+201C', `\u201c${FRONT}${BACK}\u201d`, 1],
    ['a no-break space', 'U+00A0', `${FRONT}\u00a0${BACK}`, 10],
    ['a byte order mark \\(zero-width no-break space\\)', 'U+FEFF', `${FRONT}\ufeff${BACK}`, 10],
    ['a control character', 'U+0007', `${FRONT}\u0007${BACK}`, 10],
    ['a tab', 'U+0009', `${FRONT}\t${BACK}`, 10],
  ];

  it.skipIf(!ptyAvailable())('typed at the hidden prompt of config set and of init: refused, naming what was found', async () => {
    const configDir = fresh('bad-keys-pty');
    const set = spawnInPty(['config', 'set', 'api-key'], { configDir });
    await set.answer('API key', `${BAD[0]![2]}${KEYS.enter}`);
    expect((await set.exited).exitCode).toBe(2);
    expect(set.screen).toMatch(/error: api-key contains a zero-width space \(U\+200B\) at character 10 of 22/);

    const init = spawnInPty(['init'], { configDir, env: {} });
    await init.choose('Service', `${KEYS.down}${KEYS.down}${KEYS.enter}`);
    await init.answer('Service base URL', `${sandbox.url}${KEYS.enter}`);
    await init.answer('API key', `${BAD[1]![2]}${KEYS.enter}`);
    await init.waitFor(/the API key contains a typographic quote \(U\+201C\) at character 1 of 23/);
    init.write(KEYS.ctrlC);
    expect((await init.exited).exitCode).toBe(130);
    expect(readdirSync(configDir)).toEqual([]);
  }, 60_000);
});
