// End-to-end: a lock file that names no run (empty, cut off, not JSON), as a
// crash between creating it and writing it leaves, beside a batch's manifest
// and in an export's directory. It is never a wall: the run takes it over
// (once it is a few seconds old, or at once when what was written names a
// process of this machine that is gone), with or without --wait-for-lock, and
// finishes with exit 0, each row and image once. Real processes
// (bin/aerial.js) against the sandbox.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { holdRunLock } from '../../src/files/file-lock.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { API_PATH, useSandboxPerTest } from '../helpers/sandbox.js';

let home: ReturnType<typeof tempDir>;
let work: string;
beforeAll(() => {
  home = tempDir('aerial-torn-lock-');
});
afterAll(() => home.remove());
beforeEach(() => {
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});
const sandboxFor = useSandboxPerTest();

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;
/** This machine as a lock names it (its boot and pid namespace, where Linux tells them): read from a lock taken here. */
let machine: { boot?: string; pidns?: string } = {};
beforeAll(async () => {
  const taken = await holdRunLock(join(home.path, 'probe.lock'), 'probe');
  if (!('lock' in taken)) throw new Error('the probe lock is held');
  machine = { boot: taken.lock.holder.boot, pidns: taken.lock.holder.pidns };
  await taken.lock.release();
});
/** What a lock names first (its holder's pid, host, boot and pid namespace), cut off before its token, as a crash can leave it. */
function cutOff(pid: number): string {
  return JSON.stringify({ pid, host: hostname(), ...machine, token: 'x' }).replace(/"token".*$/, '');
}
const aged = (path: string) => {
  const old = new Date(Date.now() - 60_000);
  utimesSync(path, old, old);
};
/** Lock files as a crash leaves them: empty (and fresh), cut off after naming a process of this machine that is gone, not JSON at all (and a minute old). */
const TORN: Record<string, { content: () => string; old?: boolean }> = {
  'empty and fresh': { content: () => '' },
  'cut off, its process gone': { content: () => cutOff(deadPid()) },
  'not JSON, a minute old': { content: () => '\u0000\u0000\u0000\u0000', old: true },
};

function cli(args: string[], env: Record<string, string>) {
  return runCli(args, { configDir: home.path, env, cwd: work, timeout: 60_000 });
}

describe('a lock file that names no run', () => {
  for (const [kind, { content, old }] of Object.entries(TORN)) {
    it(`${kind}, beside a batch's manifest: the batch takes it over and finishes, exit 0, each row once`, async () => {
      const sandbox = await sandboxFor();
      writeFileSync(join(work, 'rows.csv'), 'lat,lng\n1,2\n3,4\n');
      mkdirSync(join(work, 'out'));
      const lock = join(work, 'out', 'aerial-batch-manifest.jsonl.lock');
      writeFileSync(lock, content());
      if (old) aged(lock);
      const result = await cli(['batch', 'rows.csv', '--resolution', 'HD', '--output-template', 'out/{row}.jpg'], sandbox.env());
      expect(result.exitCode, result.stderr).toBe(0);
      expect(sandbox.requests().filter((entry) => entry.method === 'POST' && entry.path === API_PATH)).toHaveLength(2);
      expect(existsSync(lock)).toBe(false);
      expect(readdirSync(join(work, 'out')).sort()).toEqual(['1.jpg', '2.jpg', 'aerial-batch-manifest.jsonl']);
    });

    it(`${kind}, in an export's directory: the export takes it over and finishes, exit 0`, async () => {
      const sandbox = await sandboxFor();
      expect((await cli(['generate', '--lat', '5', '--lng', '6', '--resolution', 'HD', '-o', 'seed.jpg'], sandbox.env())).exitCode).toBe(0);
      const dir = join(work, 'export');
      mkdirSync(dir);
      const lock = join(dir, '.aerial-export.lock');
      writeFileSync(lock, content());
      if (old) aged(lock);
      const result = await cli(['export', dir], sandbox.env());
      expect(result.exitCode, result.stderr).toBe(0);
      expect(existsSync(lock)).toBe(false);
      expect(readdirSync(dir).filter((name) => name.endsWith('.jpg'))).toHaveLength(1);
    });
  }

  it('a few seconds old, with --wait-for-lock: taken over, not waited for as a live run is', async () => {
    const sandbox = await sandboxFor();
    writeFileSync(join(work, 'rows.csv'), 'lat,lng\n1,2\n');
    mkdirSync(join(work, 'out'));
    const lock = join(work, 'out', 'aerial-batch-manifest.jsonl.lock');
    writeFileSync(lock, '');
    aged(lock);
    const result = await cli(['batch', 'rows.csv', '--resolution', 'HD', '--output-template', 'out/{row}.jpg', '--wait-for-lock'], sandbox.env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/waiting/);
  });

  it('beside a shard of the batch: the other shards, and the whole batch, are not held back by it', async () => {
    const sandbox = await sandboxFor();
    writeFileSync(join(work, 'rows.csv'), 'lat,lng\n1,2\n3,4\n');
    mkdirSync(join(work, 'out'));
    writeFileSync(join(work, 'out', 'aerial-batch-manifest.jsonl.shard-2-of-2.lock'), '');
    const shard = await cli(['batch', 'rows.csv', '--resolution', 'HD', '--output-template', 'out/{row}.jpg', '--shard', '1/2'], sandbox.env());
    expect(shard.exitCode, shard.stderr).toBe(0);
    const whole = await cli(['batch', 'rows.csv', '--resolution', 'HD', '--output-template', 'out/{row}.jpg'], sandbox.env());
    expect(whole.exitCode, whole.stderr).toBe(0);
    expect(readdirSync(join(work, 'out')).filter((name) => name.endsWith('.jpg')).sort()).toEqual(['1.jpg', '2.jpg']);
  });
});
