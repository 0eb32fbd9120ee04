// A cross-process lock: a lock file created with O_EXCL. Whatever several
// processes read, change and write back goes through one: the config file
// (two `aerial config set` at once), and the sandbox's state (each `--sandbox`
// run starts its own server on one data dir).
//
// A holder that crashed leaves its lock file behind; it is taken over when its
// process is gone (same host) or when it is older than `staleMs` (mutations hold
// the lock for milliseconds, so anything that old is abandoned).
import { randomBytes } from 'node:crypto';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface LockOptions {
  /** A lock older than this is considered abandoned. */
  staleMs?: number;
  /** How long to wait for a busy lock before giving up. */
  timeoutMs?: number;
}

interface LockHolder {
  pid: number;
  host: string;
  token: string;
}

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
  const holder: LockHolder = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex') };
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(holder));
        await handle.close();
      } catch (error) {
        // A full disk takes the empty file but not its holder: a lock nobody can
        // tell is abandoned would make the next writer wait for staleMs.
        await handle.close().catch(() => {});
        await unlink(path).catch(() => {});
        throw error;
      }
      return () => releaseIfOurs(path, holder.token);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (await removeIfStale(path, staleMs)) continue;
    if (Date.now() - started > timeoutMs) throw new LockTimeoutError(path, timeoutMs);
    // Short, jittered polls: contention is rare and holds are brief.
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 + attempt * 2) * (0.5 + Math.random())));
  }
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

async function removeIfStale(path: string, staleMs: number): Promise<boolean> {
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
    return code === 'ENOENT';
  }
  const holder = parseHolder(content);
  const holderIsDead = holder !== undefined && holder.host === hostname() && !processIsAlive(holder.pid);
  const tooOld = Date.now() - modifiedAt > staleMs;
  if (!holderIsDead && !tooOld) return false;
  // Re-read right before removing: if the file changed, someone else already took over.
  const again = await readFile(path, 'utf8').catch(() => undefined);
  if (again !== content) return false;
  await unlink(path).catch(() => {});
  return true;
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
