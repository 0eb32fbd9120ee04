// Which runs may go side by side (src/batch/run-lock.ts), and the run lock's
// judgement of its holder (src/files/file-lock.ts): a live one here, a dead one, one
// from before this machine restarted, one of another machine fresh or left.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { batchLockPath, batchLocksMeet, shardsMeet } from '../../../src/batch/run-lock.js';
import { holdRunLock, RUN_LOCK_ABANDONED_MS } from '../../../src/files/file-lock.js';
import { tempDir } from '../../helpers/cli.js';

const dir = tempDir('aerial-run-lock-');
afterAll(() => dir.remove());
let count = 0;
const newLock = () => join(dir.path, `run-${++count}.lock`);
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('shards that meet', () => {
  it('two shards meet exactly when some row is in both (checked against the rows themselves)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.nat(), fc.nat(), (n, m, i, j) => {
        const a = { index: (i % n) + 1, count: n };
        const b = { index: (j % m) + 1, count: m };
        let common = false;
        for (let row = 1; row <= n * m; row++) if ((row - 1) % n === a.index - 1 && (row - 1) % m === b.index - 1) common = true;
        expect(shardsMeet(a, b)).toBe(common);
      }),
    );
    expect(shardsMeet(undefined, { index: 3, count: 4 })).toBe(true);
  });

  it('reads the lock names of a manifest: the whole batch, a shard, and nothing else', () => {
    const manifest = '/out/aerial-batch-manifest.jsonl';
    expect(batchLockPath(manifest, undefined)).toBe('/out/aerial-batch-manifest.jsonl.lock');
    expect(batchLockPath(manifest, { index: 2, count: 4 })).toBe('/out/aerial-batch-manifest.jsonl.shard-2-of-4.lock');
    const meetsShard2of4 = batchLocksMeet(manifest, { index: 2, count: 4 });
    expect(meetsShard2of4('aerial-batch-manifest.jsonl.lock')).toBe(true);
    expect(meetsShard2of4('aerial-batch-manifest.jsonl.shard-2-of-2.lock')).toBe(true);
    expect(meetsShard2of4('aerial-batch-manifest.jsonl.shard-1-of-2.lock')).toBe(false);
    expect(meetsShard2of4('aerial-batch-manifest.jsonl.shard-3-of-4.lock')).toBe(false);
    expect(meetsShard2of4('other.jsonl.lock')).toBe(false);
    expect(meetsShard2of4('aerial-batch-manifest.jsonl')).toBe(false);
    expect(meetsShard2of4('aerial-batch-manifest.jsonl.shard-x.lock')).toBe(false);
  });
});

describe('holdRunLock', () => {
  it('takes a free lock, names its holder and command, and refuses a second taker while held; release frees it', async () => {
    const path = newLock();
    const first = await holdRunLock(path, 'aerial batch a.csv');
    expect('lock' in first).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), command: 'aerial batch a.csv' });
    const second = await holdRunLock(path, 'aerial batch a.csv');
    expect(second).toMatchObject({ busy: { holder: { pid: process.pid }, local: true } });
    if ('lock' in first) await first.lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it('takes over at once the lock of a process that has ended, and of one from before this host restarted', async () => {
    const path = newLock();
    const own = await holdRunLock(newLock(), 'x');
    const here = 'lock' in own ? own.lock.holder : undefined;
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), token: 't' }));
    expect('lock' in (await holdRunLock(path, 'y'))).toBe(true);
    if (here?.boot) {
      const restarted = newLock();
      // A live pid (this one), but recorded under another boot of this host: that process is long gone.
      writeFileSync(restarted, JSON.stringify({ pid: process.pid, host: hostname(), token: 't', boot: 'an-earlier-boot' }));
      expect('lock' in (await holdRunLock(restarted, 'y'))).toBe(true);
    }
    if ('lock' in own) await own.lock.release();
  });

  it('respects a fresh lock of another host or pid namespace, and takes it over once not renewed for the abandonment time', async () => {
    for (const holder of [
      { pid: 1, host: 'runner-7.example', token: 't' },
      { pid: deadPid(), host: hostname(), token: 't', pidns: 'pid:[another container]' },
    ]) {
      const path = newLock();
      writeFileSync(path, JSON.stringify(holder));
      expect(await holdRunLock(path, 'y')).toMatchObject({ busy: { local: false } });
      const old = new Date(Date.now() - RUN_LOCK_ABANDONED_MS - 10_000);
      utimesSync(path, old, old);
      expect('lock' in (await holdRunLock(path, 'y'))).toBe(true);
    }
  });
});
