// Taking over a lock whose holder is gone (src/files/file-lock.ts): several
// runs at once, of which exactly one takes it and none removes the winner's
// fresh lock; and lock files that name no holder (empty, torn, not JSON: a
// crash between creating and writing them), taken over once a few seconds old
// (told by an injected clock, or by their own time), at once when what was
// written names a writer on this machine that is gone, and never a wall.
// Real files in a private directory.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdRunLock, runLockHolder, UNREADABLE_LOCK_STALE_MS, withFileLock, type RunLock } from '../../../src/files/file-lock.js';
import { tempDir } from '../../helpers/cli.js';
import { bundleForNode, projectScratchDir } from '../../sandbox/worker-scripts.js';

const dir = tempDir('aerial-lock-takeover-');
afterAll(() => dir.remove());

/**
 * A process that takes the run lock at argv[2] the moment its clock reaches
 * argv[3], prints what it got (its token, or the holder's), and holds it until
 * its stdin ends.
 */
const TAKER = `
import { holdRunLock } from './src/files/file-lock.ts';
const [path, startAt] = process.argv.slice(2);
while (Date.now() < Number(startAt)) {}
const result = await holdRunLock(path, 'a run of the takeover test');
process.stdout.write(JSON.stringify('lock' in result ? { took: result.lock.holder.token } : { busy: result.busy.holder.token }) + '\\n');
process.stdin.resume();
process.stdin.on('end', async () => {
  if ('lock' in result) await result.lock.release();
  process.exit(0);
});
`;
let scratch: string;
let taker: string;
beforeAll(async () => {
  scratch = projectScratchDir('lock-takeover-');
  taker = fileURLToPath(await bundleForNode({ script: TAKER }, join(scratch, 'taker.mjs')));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let count = 0;
const newLock = () => join(dir.path, `lock-${++count}.lock`);
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

/** A clock that moves on by `stepMs` each time it is read: waits that are told by it pass at once. */
function steppingClock(stepMs: number): () => number {
  let now = Date.now();
  return () => (now += stepMs);
}

const tokenOf = (path: string) => (JSON.parse(readFileSync(path, 'utf8')) as { token: string }).token;

describe('takeovers at once of one lock whose holder is gone', () => {
  it('two processes: exactly one takes it, the other is told it is held by that one, and its lock stays on disk (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const path = newLock();
      writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), token: 'the-crashed-run' }));
      // Both start on the same millisecond of the clock, spinning until it comes.
      const startAt = String(Date.now() + 400);
      const takers = [0, 1].map(() => execa(process.execPath, [taker, path, startAt], { stdin: 'pipe', reject: false, timeout: 20_000 }));
      const answers = await Promise.all(
        takers.map(
          (child) =>
            new Promise<{ took?: string; busy?: string }>((resolve, reject) => {
              let text = '';
              child.stdout!.on('data', (chunk: Buffer) => {
                text += chunk.toString();
                if (text.includes('\n')) resolve(JSON.parse(text) as { took?: string; busy?: string });
              });
              child.catch(reject);
              void child.then((result) => reject(new Error(`a taker ended first: ${String(result.stderr)}`)));
            }),
        ),
      );
      const took = answers.flatMap((answer) => (answer.took ? [answer.took] : []));
      expect(took, `round ${round}`).toHaveLength(1);
      expect(answers.find((answer) => answer.busy)?.busy, `round ${round}`).toBe(took[0]);
      expect(tokenOf(path), `round ${round}`).toBe(took[0]);
      for (const child of takers) child.stdin!.end();
      for (const result of await Promise.all(takers)) expect(result.exitCode, String(result.stderr)).toBe(0);
      expect(existsSync(path)).toBe(false);
    }
  }, 120_000);

  for (const contenders of [2, 8]) {
    it(`${contenders} runs in one process: exactly one takes it, the others are told it is held by that one, and its lock stays on disk (20 rounds)`, async () => {
      for (let round = 0; round < 20; round++) {
        const path = newLock();
        writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), token: 'the-crashed-run' }));
        const results = await Promise.all(Array.from({ length: contenders }, (_, i) => holdRunLock(path, `run ${i}`)));
        const winners = results.flatMap((result) => ('lock' in result ? [result.lock] : []));
        expect(winners, `round ${round}`).toHaveLength(1);
        const winner = winners[0]!;
        for (const result of results) if ('busy' in result) expect(result.busy.holder.token, `round ${round}`).toBe(winner.holder.token);
        expect(tokenOf(path)).toBe(winner.holder.token);
        await winner.release();
        expect(existsSync(path)).toBe(false);
        // Nothing left beside it: the stale file went, and no fresh lock was set aside and forgotten.
        expect(readdirSync(dir.path).filter((name) => name.startsWith(`lock-${count}.`))).toEqual([]);
      }
    });
  }

  it('withFileLock: 4 read-change-writes starting together over a dead holder’s lock lose nothing and never overlap (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const path = newLock();
      writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), token: 'the-crashed-run' }));
      let value = 0;
      let inside = 0;
      let mostInside = 0;
      await Promise.all(
        Array.from({ length: 4 }, () =>
          withFileLock(path, async () => {
            mostInside = Math.max(mostInside, ++inside);
            const read = value;
            await new Promise((resolve) => setImmediate(resolve));
            value = read + 1;
            inside--;
          }),
        ),
      );
      expect(value, `round ${round}`).toBe(4);
      expect(mostInside, `round ${round}`).toBe(1);
    }
  });
});

describe('a lock file that names no holder', () => {
  it('empty and fresh: waited for, then taken over once it has stayed so for UNREADABLE_LOCK_STALE_MS', async () => {
    const path = newLock();
    writeFileSync(path, '');
    const reads: number[] = [];
    const clock = steppingClock(1_000);
    const result = await holdRunLock(path, 'aerial batch a.csv', { now: () => { const now = clock(); reads.push(now); return now; } });
    expect('lock' in result).toBe(true);
    // Not at the first look: only after the clock had moved past the staleness.
    expect(reads.at(-1)! - reads[0]!).toBeGreaterThanOrEqual(UNREADABLE_LOCK_STALE_MS);
    await (result as { lock: RunLock }).lock.release();
  });

  it('empty, torn or not JSON, and a few seconds old: taken over at once, by a run lock and by withFileLock', async () => {
    for (const content of ['', '{"pid":12', 'not a lock at all\n', '\u0000\u0000\u0000']) {
      const path = newLock();
      writeFileSync(path, content);
      const old = new Date(Date.now() - UNREADABLE_LOCK_STALE_MS - 1_000);
      utimesSync(path, old, old);
      const result = await holdRunLock(path, 'aerial export out');
      expect('lock' in result, JSON.stringify(content)).toBe(true);
      await (result as { lock: RunLock }).lock.release();
      writeFileSync(path, content);
      utimesSync(path, old, old);
      expect(await withFileLock(path, async () => 'taken over', { timeoutMs: 2_000 })).toBe('taken over');
    }
  });

  it('torn after naming a writer on this machine that is gone: taken over at once, however fresh', async () => {
    const path = newLock();
    const own = await holdRunLock(newLock(), 'x');
    const here = (own as { lock: RunLock }).lock.holder;
    // What newHolder writes first, cut off before its token.
    const torn = JSON.stringify({ pid: deadPid(), host: hostname(), boot: here.boot, pidns: here.pidns, token: 'cut' }).replace(/"token".*$/, '');
    writeFileSync(path, torn);
    const clock = steppingClock(0);
    expect('lock' in (await holdRunLock(path, 'y', { now: clock }))).toBe(true);
    await (own as { lock: RunLock }).lock.release();
  });

  it('torn after naming a live writer (this process): waited for until stale, not taken at once', async () => {
    const path = newLock();
    const torn = JSON.stringify({ pid: process.pid, host: hostname(), token: 'cut' }).replace(/,"token".*$/, '');
    writeFileSync(path, torn);
    const reads: number[] = [];
    const clock = steppingClock(1_000);
    const result = await holdRunLock(path, 'y', { now: () => { const now = clock(); reads.push(now); return now; } });
    expect('lock' in result).toBe(true);
    expect(reads.at(-1)! - reads[0]!).toBeGreaterThanOrEqual(UNREADABLE_LOCK_STALE_MS);
    await (result as { lock: RunLock }).lock.release();
  });

  it('with a time ahead of this clock (a network directory): taken over once seen unchanged for the staleness, not never', async () => {
    const path = newLock();
    writeFileSync(path, '');
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(path, ahead, ahead);
    const result = await holdRunLock(path, 'y', { now: steppingClock(1_000) });
    expect('lock' in result).toBe(true);
    await (result as { lock: RunLock }).lock.release();
  });

  it('is not another shard’s live run: runLockHolder answers at once that nobody holds it', async () => {
    const path = newLock();
    writeFileSync(path, '');
    expect(await runLockHolder(path)).toBeUndefined();
    expect(existsSync(path)).toBe(true);
  });
});
