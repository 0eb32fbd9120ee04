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
//     since its holder last renewed it for a run lock;
//   - for a lock file that names no holder (empty, torn or not JSON: a crash
//     between creating it and writing it, which takes a writer microseconds),
//     once it is UNREADABLE_LOCK_STALE_MS old, or has been seen unchanged for
//     that long (its time may be ahead of this machine's clock), or at once
//     when what can be read of it names a holder on this machine that is gone.
//
// A takeover first renames the stale file to a name of its own, then checks
// that what it moved is the file it judged: of two runs taking over one lock
// at once only one moves it, and one that moved the other's fresh lock (taken
// in between) puts it back. A holder releases its lock the same way.
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync, type Stats } from 'node:fs';
import { link, lstat, open, readFile, rename, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { namingFile } from '../lifecycle/errors.js';

export interface LockOptions {
  /** A lock older than this is considered abandoned. */
  staleMs?: number;
  /** How long to wait for a busy lock before giving up. */
  timeoutMs?: number;
  /** The clock the ages of lock files are told by; injectable for tests. */
  now?: () => number;
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
/** A lock file that names no holder is a crashed writer's once this old (a live writer names itself within microseconds). */
export const UNREADABLE_LOCK_STALE_MS = 5_000;
/** How often a lock file that names no holder yet is looked at again. */
const UNREADABLE_POLL_MS = 50;

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

async function acquire(path: string, { staleMs = 10_000, timeoutMs = 15_000, now = Date.now }: LockOptions): Promise<() => Promise<void>> {
  const holder = newHolder();
  const started = Date.now();
  const watch = new UnreadableWatch(now);
  for (let attempt = 0; ; attempt++) {
    if (await create(path, holder)) return () => releaseIfOurs(path, holder.token);
    // A lock that cannot be looked at right now (it went, it came back) is waited for like a busy one;
    // one that is not a file at all is refused.
    const seen = await look(path, staleMs, watch, now).catch((error: NodeJS.ErrnoException) => {
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
export async function holdRunLock(path: string, command: string, options: { now?: () => number } = {}): Promise<{ lock: RunLock } | { busy: BusyLock }> {
  const now = options.now ?? Date.now;
  const holder = { ...newHolder(), since: new Date().toISOString(), command };
  const watch = new UnreadableWatch(now);
  for (;;) {
    if (await create(path, holder)) return { lock: runLock(path, holder) };
    const seen = await look(path, RUN_LOCK_ABANDONED_MS, watch, now);
    if (seen.gone) continue;
    if (seen.busy) return { busy: seen.busy };
    // A lock file that names no holder yet: a writer microseconds from naming itself, or a crashed
    // one's, taken over within UNREADABLE_LOCK_STALE_MS.
    await new Promise((resolve) => setTimeout(resolve, UNREADABLE_POLL_MS));
  }
}

/**
 * Who holds the run lock at `path`, if anyone does: a lock whose holder is
 * gone is removed. One that names no holder (yet) is not held by a run that
 * has looked for others: a run writes its own lock before it looks.
 */
export async function runLockHolder(path: string): Promise<BusyLock | undefined> {
  return (await look(path, RUN_LOCK_ABANDONED_MS)).busy;
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

/** This process as a lock's holder; the fields that tell whether it is alive first, for a file cut off while written. */
function newHolder(): LockHolder {
  return { pid: process.pid, host: hostname(), ...thisMachine(), token: randomBytes(8).toString('hex') };
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
    throw namingFile(error, path);
  }
  await handle.close();
  return true;
}

async function releaseIfOurs(path: string, token: string): Promise<void> {
  try {
    const [info, content] = await Promise.all([lstat(path), readFile(path, 'utf8')]);
    // Someone may have judged us stale and taken over; their lock is not ours to remove.
    if (parseHolder(content)?.token === token) await removeIfUnchanged(path, { info, content });
  } catch {
    // Already gone.
  }
}

/** A lock file as it was looked at: what it said, and which file it was. */
interface SeenFile {
  info: Stats;
  content: string;
}

/**
 * Removes the lock file at `path` if it is still the file `seen` (the same
 * file, unchanged). It is renamed to a name of its own first: of several
 * removers only one moves it, and what was moved is checked. A fresh lock,
 * taken in the moment between, is put back where it was (unless yet another
 * run has taken the place since). Returns whether `seen` was removed.
 */
async function removeIfUnchanged(path: string, seen: SeenFile): Promise<boolean> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    // Removed by another already (ENOENT): nothing of ours to do.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = await Promise.all([lstat(aside), readFile(aside, 'utf8')]).catch(() => undefined);
  if (moved && sameFile(moved[0], seen.info) && moved[1] === seen.content) {
    await unlink(aside).catch(() => {});
    return true;
  }
  // Another run's lock: back in its place, without replacing one taken there since (a link fails on an existing name).
  try {
    await link(aside, path);
    await unlink(aside).catch(() => {});
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') await unlink(aside).catch(() => {});
    // A file system without hard links: renamed back.
    else await rename(aside, path).catch(() => {});
  }
  return false;
}

/** The same file, not changed since: its inode, size and modification time. */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * How long a lock file that names no holder has been seen unchanged, by this
 * process's clock: its own time cannot be trusted to tell its age when it is
 * ahead of the clock (a network directory, another machine).
 */
class UnreadableWatch {
  private seen?: { key: string; since: number };

  constructor(private readonly now: () => number) {}

  /** Milliseconds the file `key` describes has been seen unchanged (0 the first time). */
  unchangedFor(key: string): number {
    const now = this.now();
    if (this.seen?.key !== key) this.seen = { key, since: now };
    return now - this.seen.since;
  }
}

/**
 * What the lock file at `path` says: absent; gone (its holder was gone, and
 * the file has been removed); busy (a live holder, or one that cannot be
 * looked at and is not yet stale); or none of these (a file that names no
 * holder, not yet stale, or one another run is taking over right now).
 */
async function look(path: string, staleMs: number, watch?: UnreadableWatch, now: () => number = Date.now): Promise<{ absent?: boolean; gone?: boolean; busy?: BusyLock }> {
  let content: string;
  let info: Stats;
  try {
    info = await lstat(path);
    // A FIFO (or any other special file) in its place would hang the read below for ever.
    if (!info.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTREGULAR', path, syscall: 'open' });
    content = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTREGULAR') throw error;
    // Released between our attempt and now: try again at once.
    if (code === 'ENOENT') return { absent: true, gone: true };
    throw error;
  }
  const renewedAgoMs = Math.max(0, now() - info.mtimeMs);
  const holder = parseHolder(content);
  if (holder) {
    const local = onThisMachine(holder);
    const holderIsDead = restartedSince(holder) || (local && !processIsAlive(holder.pid));
    if (!holderIsDead && renewedAgoMs <= staleMs) return { busy: { holder, local, renewedAgoMs } };
  } else {
    // No holder named: a writer between creating the file and writing it, or one that crashed there.
    const writerIsDead = tornWriterIsDead(content);
    const unchangedFor = watch?.unchangedFor(`${info.ino}:${info.mtimeMs}:${content}`) ?? 0;
    const stale = Math.min(staleMs, UNREADABLE_LOCK_STALE_MS);
    if (!writerIsDead && renewedAgoMs <= stale && unchangedFor <= stale) return {};
  }
  // Its holder is gone: taken over, unless it changed meanwhile (someone else took over, or it was renewed).
  return (await removeIfUnchanged(path, { info, content })) ? { gone: true } : {};
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

/**
 * Whether a torn lock file (cut off while it was written) names a writer on
 * this machine that is gone: its pid, host, boot id and pid namespace come
 * first (newHolder's order), so what was written of them can be read. Where
 * this machine has a pid namespace, the file must have got as far as naming
 * its own: a container of the same host name sees other pids.
 */
function tornWriterIsDead(content: string): boolean {
  const field = (name: string) => new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*"|\\d+)[,}]`).exec(content)?.[1];
  const read = (raw: string | undefined): unknown => {
    try {
      return raw === undefined ? undefined : JSON.parse(raw);
    } catch {
      return undefined;
    }
  };
  const pid = read(field('pid'));
  const host = read(field('host'));
  const boot = read(field('boot'));
  const pidns = read(field('pidns'));
  if (typeof pid !== 'number' || host !== hostname()) return false;
  const here = thisMachine();
  if (typeof boot === 'string' && here.boot !== undefined && boot !== here.boot) return true;
  if (here.pidns !== undefined && pidns !== here.pidns) return false;
  return !processIsAlive(pid);
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
