// The cross-process lock around the config file and the sandbox's state
// (src/files/file-lock.ts): one holder at a time, a lock left by a holder that is
// gone taken over at once, an abandoned one after its age, and nobody's lock
// removed by another. Real files in a private directory; real processes where
// a holder has to be alive or dead.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LockTimeoutError, withFileLock } from '../../../src/files/file-lock.js';
import { tempDir } from '../../helpers/cli.js';

const dir = tempDir('aerial-file-lock-');
afterAll(() => dir.remove());
let lockCount = 0;
const newLock = () => join(dir.path, `state-${++lockCount}.lock`);

/** The pid of a process that has ended (and been reaped): no process has it now. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

function holder(pid: number, host = hostname()) {
  return JSON.stringify({ pid, host, token: 'someone-else' });
}

describe('withFileLock', () => {
  it('lets one holder in at a time: 40 read-change-writes of one counter lose nothing', async () => {
    const lock = newLock();
    const counter = join(dir.path, 'counter');
    writeFileSync(counter, '0');
    let inside = 0;
    let mostInside = 0;
    await Promise.all(
      Array.from({ length: 40 }, () =>
        withFileLock(lock, async () => {
          mostInside = Math.max(mostInside, ++inside);
          const value = Number(readFileSync(counter, 'utf8'));
          await new Promise((resolve) => setTimeout(resolve, 1));
          writeFileSync(counter, String(value + 1));
          inside--;
        }),
      ),
    );
    expect(readFileSync(counter, 'utf8')).toBe('40');
    expect(mostInside).toBe(1);
    expect(existsSync(lock)).toBe(false);
  });

  it('releases the lock when the work throws, and passes the error on', async () => {
    const lock = newLock();
    await expect(withFileLock(lock, async () => Promise.reject(new Error('the work failed')))).rejects.toThrow('the work failed');
    expect(existsSync(lock)).toBe(false);
    expect(await withFileLock(lock, async () => 'next')).toBe('next');
  });

  it('takes over at once a lock whose holder on this host has ended, however fresh', async () => {
    const lock = newLock();
    writeFileSync(lock, holder(deadPid()));
    // No time to wait at all: a lock waited for rather than taken over at once fails with LockTimeoutError.
    expect(await withFileLock(lock, async () => 'taken over', { timeoutMs: 0, staleMs: 60_000 })).toBe('taken over');
  });

  it('waits for a live holder, and gives up after the timeout with a line that names the lock', async () => {
    const lock = newLock();
    writeFileSync(lock, holder(process.pid));
    const started = Date.now();
    const failure = withFileLock(lock, async () => 'never', { timeoutMs: 300, staleMs: 60_000 });
    await expect(failure).rejects.toThrow(LockTimeoutError);
    await expect(failure).rejects.toThrow(`waiting for the lock ${lock}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(readFileSync(lock, 'utf8')).toBe(holder(process.pid));
  });

  it('takes over a lock older than staleMs, even one from another host whose process it cannot see', async () => {
    const lock = newLock();
    writeFileSync(lock, holder(1, 'another-host.example'));
    const old = new Date(Date.now() - 20_000);
    utimesSync(lock, old, old);
    expect(await withFileLock(lock, async () => 'taken over', { staleMs: 10_000, timeoutMs: 2_000 })).toBe('taken over');
  });

  it('waits for a fresh lock from another host: it cannot tell whether that holder is alive', async () => {
    const lock = newLock();
    writeFileSync(lock, holder(1, 'another-host.example'));
    await expect(withFileLock(lock, async () => 'never', { staleMs: 10_000, timeoutMs: 200 })).rejects.toThrow(LockTimeoutError);
  });

  it('takes over a lock file left empty or unreadable by a crash once it is stale, not before', async () => {
    const lock = newLock();
    writeFileSync(lock, '');
    await expect(withFileLock(lock, async () => 'never', { staleMs: 10_000, timeoutMs: 200 })).rejects.toThrow(LockTimeoutError);
    const old = new Date(Date.now() - 20_000);
    utimesSync(lock, old, old);
    expect(await withFileLock(lock, async () => 'taken over', { staleMs: 10_000, timeoutMs: 2_000 })).toBe('taken over');
  });

  it('a holder judged stale and taken over does not remove the new holder’s lock when it ends', async () => {
    const lock = newLock();
    let newHolderContent = '';
    await withFileLock(
      lock,
      async () => {
        // Meanwhile another process judged this holder stale and took the lock over.
        newHolderContent = holder(process.pid);
        writeFileSync(lock, newHolderContent);
      },
      { timeoutMs: 2_000 },
    );
    expect(readFileSync(lock, 'utf8')).toBe(newHolderContent);
  });
});
