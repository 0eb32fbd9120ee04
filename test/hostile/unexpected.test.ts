// Exit 1 "unexpected" is for bugs only: every condition the CLI can name
// gets its own line and documented code. Files that are not what they should
// be (a directory or a device where a manifest, an index, a config file or an
// image must go; a batch file that never ends; a full disk). Answers the spec does not describe are tested
// in-process: test/unit/cli/unexpected-answers.test.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/lifecycle/errors.js';
import { judge, persistentPolicy } from '../../src/api/retry.js';
import { rowFailure, stopsTheBatch } from '../../src/batch/row-runner.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { startHostileServer, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_unexpected_94b1e2';
registerSecret(KEY);

let server: HostileServer;
let home: ReturnType<typeof tempDir>;
let work: string;

beforeAll(async () => {
  server = await startHostileServer();
  home = tempDir('aerial-unexpected-');
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => {
  server.reset();
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

/** A character device in the test's own directory: /dev/zero's numbers (endless reads) or /dev/full's (every write: ENOSPC). */
function device(name: string, kind: 'zero' | 'full'): string {
  const path = join(work, name);
  execFileSync('mknod', [path, 'c', '1', kind === 'zero' ? '5' : '7']);
  return path;
}

function expectNamed(result: { exitCode: number; stderr: string }, code: number, message: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(code);
  expect(result.stderr).not.toMatch(/^error: unexpected:/m);
  const lines = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(message);
}

function aerial(args: string[], configDir = home.path) {
  return runCli(args, { configDir, cwd: work, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url }, timeout: 60_000 });
}

// Each of these is found before anything is sent: the server must see no request.
describe('files that are not what they should be', () => {
  const CSV = 'lat,lng\n1,2\n';

  it('a directory or a device as the batch manifest', async () => {
    writeFileSync(join(work, 'r.csv'), CSV);
    mkdirSync(join(work, 'mdir'));
    expectNamed(await aerial(['batch', 'r.csv', '--manifest', 'mdir']), 2, /^error: --manifest mdir: it is a directory$/);
    device('mdev', 'zero');
    expectNamed(await aerial(['batch', 'r.csv', '--manifest', 'mdev']), 2, /^error: --manifest mdev: it is not a regular file$/);
    expect(server.requests).toEqual([]);
  });

  it('a batch file that never ends', async () => {
    device('endless.csv', 'zero');
    expectNamed(await aerial(['batch', 'endless.csv']), 2, /^error: batch file endless\.csv is larger than 256 MiB; split it into several batches$/);
  });

  it('a directory where a row\'s image must go, with or without --force, before anything is sent', async () => {
    writeFileSync(join(work, 'r.csv'), CSV);
    mkdirSync(join(work, 'out', '1.jpg'), { recursive: true });
    for (const force of [[], ['--force']]) {
      expectNamed(await aerial(['batch', 'r.csv', '--output-template', 'out/{row}.jpg', ...force]), 2, /1 output path is a directory \(first: row 1, out\/1\.jpg\)/);
    }
    expect(server.requests).toEqual([]);
  });

  it('a directory where the export index goes, before anything is listed', async () => {
    mkdirSync(join(work, 'backup', 'index.jsonl'), { recursive: true });
    expectNamed(await aerial(['export', 'backup']), 2, /export: .*backup\/index\.jsonl is not a regular file/);
    expect(server.requests).toEqual([]);
  });

  it('a config directory that is a file, a config file that is a directory or a device', async () => {
    writeFileSync(join(work, 'cfgfile'), '{}');
    mkdirSync(join(work, 'cfgdir', 'config.json'), { recursive: true });
    mkdirSync(join(work, 'cfgdev'));
    execFileSync('mknod', [join(work, 'cfgdev', 'config.json'), 'c', '1', '5']);
    const at = (dir: string, args: string[]) => aerial(args, join(work, dir));
    expectNamed(await at('cfgfile', ['config', 'set', 'defaults.zoom', 'High']), 2, /cannot write config file .*: a file is in the way, where a directory must be/);
    expectNamed(await at('cfgdir', ['list']), 2, /cannot read config file .*config\.json: it is a directory, not a regular file; move it out of the way, or set AERIAL_CONFIG_DIR to another directory$/);
    expectNamed(await at('cfgdev', ['list']), 2, /cannot read config file .*config\.json: it is a character device, not a regular file; move it out of the way, or set AERIAL_CONFIG_DIR to another directory$/);
  });

  it('a full disk under a row becomes a named failure that stops the batch, not "unexpected"', () => {
    let failure: unknown;
    try {
      writeFileSync(device('full', 'full'), 'image bytes');
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({ code: 'ENOSPC' });
    // Never retried, even by a batch that retries everything it may...
    const policy = persistentPolicy({ maxRetries: 5, firstDelayMs: 500, retryUnsafe: true });
    expect(judge(failure, { number: 1, answered: true }, 'generation', policy).retry).toBe(false);
    // ...and it stops the batch: every later row would be paid for and lost the same way.
    const error = rowFailure(failure);
    expect(stopsTheBatch(error)).toBe(true);
    expect(error).toMatchObject({ exitCode: ExitCode.Usage, message: 'cannot write the image: no space left on the device' });
  });
});
