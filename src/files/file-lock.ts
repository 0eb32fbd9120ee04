// Cross-process locks: a lock file created with O_EXCL, holding who took it.
//
// Two kinds. withFileLock() guards a read-change-write of a few milliseconds
// (two `aerial config set` at once; the sandbox's state, each `--sandbox` run
// starting its own server on one data dir): a second caller waits its turn.
// holdRunLock() is held for as long as a run lasts (a batch over its manifest,
// an export into its directory): a second run is told who holds it, and the
// holder renews the file's time while it runs.
//
// A holder that crashed leaves its lock file behind. It is taken over:
//   - at once when the holder ran on this machine and its process is gone
//     (or the machine has restarted since: its boot id changed);
//   - for a lock of another machine (a shared or network directory, another
//     container), whose process cannot be looked at, once the file is older
//     than its staleness: `staleMs` for withFileLock, RUN_LOCK_ABANDONED_MS
//     since its holder last renewed it for a run lock.
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { lstat, open, readFile, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface LockOptions {
  /** A lock older than this is considered abandoned. */
  staleMs?: number;
  /** How long to wait for a busy lock before giving up. */
  timeoutMs?: number;
}

/** Who holds a lock, as its file says. */
export interface LockHolder {
  pid: number;
  host: string;
  token: string;
  /** Linux's boot id: the same host name with another one has restarted since, and its pids are gone. */
  boot?: string;
  /** The pid namespace (Linux): a container on the same host sees other pids, so it counts as another machine. */
  pidns?: string;
  /** When it was taken (ISO 8601), for messages. */
  since?: string;
  /** What holds it, for messages: `aerial batch places.csv`. */
  command?: string;
}

/** A run lock's holder renews its file's time this often... */
export const RUN_LOCK_RENEW_MS = 20_000;
/** ...and a lock of another machine not renewed for this long is abandoned (clocks may differ by a little). */
export const RUN_LOCK_ABANDONED_MS = 120_000;

export class LockTimeoutError extends Error {
  constructor(path: string, timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms waiting for the lock ${path}; if no other aerial process is running, delete it`);
    this.name = 'LockTimeoutError';
  }
}

export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const release = await acquire(path, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}

async function acquire(path: string, { staleMs = 10_000, timeoutMs = 15_000 }: LockOptions): Promise<() => Promise<void>> {
  const holder = newHolder();
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (await create(path, holder)) return () => releaseIfOurs(path, holder.token);
    // A lock that cannot be looked at right now (it went, it came back) is waited for like a busy one;
    // one that is not a file at all is refused.
    const seen = await look(path, staleMs).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOTREGULAR') throw error;
      return { gone: false };
    });
    if (seen.gone) continue;
    if (Date.now() - started > timeoutMs) throw new LockTimeoutError(path, timeoutMs);
    // Short, jittered polls: contention is rare and holds are brief.
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 + attempt * 2) * (0.5 + Math.random())));
  }
}

/** A lock held for a run; release() removes it (only if it is still this run's). */
export interface RunLock {
  readonly path: string;
  readonly holder: LockHolder;
  release(): Promise<void>;
}

/** What is known of a lock file someone else holds. */
export interface BusyLock {
  holder: LockHolder;
  /** Whether the holder runs on this machine (its pid was looked at). */
  local: boolean;
  /** How long ago the lock's file was last renewed. */
  renewedAgoMs: number;
}

/**
 * Takes the run lock at `path`, or says who holds it (a live holder). A lock
 * whose holder is gone is removed and taken. While held, its file's time is
 * renewed every RUN_LOCK_RENEW_MS, so that a run on another machine can tell
 * a crashed holder's lock (not renewed) from a live one.
 */
export async function holdRunLock(path: string, command: string): Promise<{ lock: RunLock } | { busy: BusyLock }> {
  const holder = { ...newHolder(), since: new Date().toISOString(), command };
  for (let attempt = 0; ; attempt++) {
    if (await create(path, holder)) return { lock: runLock(path, holder) };
    const seen = await look(path, RUN_LOCK_ABANDONED_MS);
    if (seen.gone) continue;
    if (seen.busy) return { busy: seen.busy };
    // A lock file being written this very moment (still empty): its holder is a few microseconds from naming itself.
    if (attempt > 100) throw new Error(`the lock ${path} stays unreadable; if no other aerial process is running, delete it`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Who holds the run lock at `path`, if anyone does: a lock whose holder is gone is removed. */
export async function runLockHolder(path: string): Promise<BusyLock | undefined> {
  for (let attempt = 0; attempt <= 100; attempt++) {
    const seen = await look(path, RUN_LOCK_ABANDONED_MS);
    if (seen.gone || seen.absent) return undefined;
    if (seen.busy) return seen.busy;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the lock ${path} stays unreadable; if no other aerial process is running, delete it`);
}

function runLock(path: string, holder: LockHolder): RunLock {
  const renewal = setInterval(() => {
    // Renewed only while it is still ours: a lock judged abandoned and taken over is the new holder's to renew.
    void readFile(path, 'utf8')
      .then((content) => {
        if (parseHolder(content)?.token !== holder.token) return;
        const now = new Date();
        return utimes(path, now, now);
      })
      .catch(() => {});
  }, RUN_LOCK_RENEW_MS);
  renewal.unref();
  let released: Promise<void> | undefined;
  return {
    path,
    holder,
    release: () => {
      clearInterval(renewal);
      return (released ??= releaseIfOurs(path, holder.token));
    },
  };
}

let machine: { boot?: string; pidns?: string } | undefined;

/** This process's boot id and pid namespace, where the system tells them (Linux); read once. */
function thisMachine(): { boot?: string; pidns?: string } {
  if (machine) return machine;
  machine = {};
  try {
    machine.boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    // Not Linux: the host name and the pid are what there is.
  }
  try {
    machine.pidns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // As above.
  }
  return machine;
}

function newHolder(): LockHolder {
  return { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex'), ...thisMachine() };
}

/** Creates the lock file naming `holder`; false when it exists already. */
async function create(path: string, holder: LockHolder): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(holder));
  } catch (error) {
    // A full disk takes the empty file but not its holder: a lock nobody can
    // tell is abandoned would make the next writer wait for its staleness.
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw error;
  }
  await handle.close();
  return true;
}

async function releaseIfOurs(path: string, token: string): Promise<void> {
  try {
    const content = await readFile(path, 'utf8');
    // Someone may have judged us stale and taken over; their lock is not ours to remove.
    if (parseHolder(content)?.token === token) await unlink(path);
  } catch {
    // Already gone.
  }
}

/**
 * What the lock file at `path` says: absent; gone (its holder was gone, and
 * the file has been removed); busy (a live holder, or one that cannot be
 * looked at and is not yet stale); or none of these (a file still being
 * written, not yet stale).
 */
async function look(path: string, staleMs: number): Promise<{ absent?: boolean; gone?: boolean; busy?: BusyLock }> {
  let content: string;
  let modifiedAt: number;
  try {
    const info = await lstat(path);
    // A FIFO (or any other special file) in its place would hang the read below for ever.
    if (!info.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTREGULAR', path, syscall: 'open' });
    modifiedAt = info.mtimeMs;
    content = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTREGULAR') throw error;
    // Released between our attempt and now: try again at once.
    if (code === 'ENOENT') return { absent: true, gone: true };
    throw error;
  }
  const holder = parseHolder(content);
  const local = holder !== undefined && onThisMachine(holder);
  const renewedAgoMs = Math.max(0, Date.now() - modifiedAt);
  const holderIsDead = holder !== undefined && (restartedSince(holder) || (local && !processIsAlive(holder.pid)));
  if (!holderIsDead && renewedAgoMs <= staleMs) return holder ? { busy: { holder, local, renewedAgoMs } } : {};
  // Re-read right before removing: if the file changed, someone else already took over.
  const again = await readFile(path, 'utf8').catch(() => undefined);
  if (again !== content) return {};
  await unlink(path).catch(() => {});
  return { gone: true };
}

/** Whether the holder's pid is one this process can look at: the same host, and (where known) the same boot and pid namespace. */
function onThisMachine(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const here = thisMachine();
  if (holder.pidns !== undefined && here.pidns !== undefined && holder.pidns !== here.pidns) return false;
  return true;
}

/** The holder's host has restarted since it took the lock: its process is gone, whatever pid now has its number. */
function restartedSince(holder: LockHolder): boolean {
  const here = thisMachine();
  return holder.host === hostname() && holder.boot !== undefined && here.boot !== undefined && holder.boot !== here.boot;
}

function parseHolder(content: string): LockHolder | undefined {
  try {
    const value = JSON.parse(content) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') {
      return value as LockHolder;
    }
  } catch {
    // A lock file being written right now is still empty.
  }
  return undefined;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
