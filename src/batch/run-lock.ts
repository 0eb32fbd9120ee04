// One run at a time of a batch (over its manifest) and of an export (into its
// directory). Two runs of one batch would pay for each row twice, and each
// would sweep the other's temp files as a dead run's; two exports would do the
// same to each other's downloads and index.
//
// A run holds a lock file beside what it writes (src/files/file-lock.ts: O_EXCL,
// its holder's pid, host and command, renewed while it runs). A batch's lock
// is its manifest's name with `.lock`, or `.shard-k-of-n.lock` for a shard, so
// that shards sharing one manifest run side by side: a run also looks at the
// other shards' locks of its manifest and stands back from any live one whose
// rows meet its own (the whole batch meets every shard; 1/2 meets 1/4, not 2/4).
// Taking one's own lock before looking at the others means that of two runs
// that meet, at least one sees the other.
import { readdir, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { makeDirectories } from '../files/directories.js';
import { CliError, ExitCode, InterruptedError } from '../lifecycle/errors.js';
import { holdRunLock, RUN_LOCK_ABANDONED_MS, runLockHolder, type BusyLock, type RunLock } from '../files/file-lock.js';
import { printable } from '../text/printable.js';
import type { Shard } from './shard.js';

/** The lock file an export takes in its directory. */
export const EXPORT_LOCK_NAME = '.aerial-export.lock';

/** Another run holds what this one needs: exit 2, like other local files the CLI cannot use, with nothing sent. */
export class RunLockedError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage, 'AlreadyRunning');
  }
}

export interface RunLockRequest {
  /** The lock file this run takes. */
  path: string;
  /** Other lock files of its directory (by name) that must not be held while this run is: shards whose rows meet its own. */
  meets?: (name: string) => boolean;
  /** What this run is, for the message another run prints: `aerial batch places.csv`. */
  command: string;
  /** What the other run is, in the refusal: `another run of this batch`. */
  other: string;
  /** Wait for the other run to end rather than refuse. */
  wait: boolean;
  signal: AbortSignal;
  /** How the lock's path is shown. */
  display: (path: string) => string;
  /** Told once, when the run starts waiting. */
  onWait: (message: string) => void;
}

/**
 * Takes the run's lock, standing back from any live run that holds one it
 * meets: refused with RunLockedError, or with `wait` tried again until that
 * run has ended (or the signal comes). A lock whose holder is gone is taken
 * over at once. A directory made for the lock is removed on release if it is
 * still empty (a batch refused for a bad row leaves nothing behind).
 */
export async function takeRunLock(request: RunLockRequest): Promise<RunLock> {
  const { signal } = request;
  let told = false;
  for (;;) {
    if (signal.aborted) throw new InterruptedError();
    const { taken, busy } = await tryOnce(request);
    if (taken) return taken;
    const message = `${request.other} is under way: ${describeHolder(busy!.lock)}; it holds ${request.display(busy!.path)}`;
    if (!request.wait) throw new RunLockedError(`${message}. Pass --wait-for-lock to wait for it, or run again once it has ended`);
    if (!told) request.onWait(`waiting: ${message}`);
    told = true;
    // Polled, jittered: two waiting runs that meet do not retry in step.
    await sleep(400 + Math.random() * 800, signal).catch(() => {});
  }
}

async function tryOnce(request: RunLockRequest): Promise<{ taken?: RunLock; busy?: { path: string; lock: BusyLock } }> {
  const { path } = request;
  const dir = dirname(path);
  let made: string | undefined;
  let held: Awaited<ReturnType<typeof holdRunLock>>;
  try {
    held = await holdRunLock(path, request.command);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    made = await makeDirectories(dir);
    held = await holdRunLock(path, request.command);
  }
  if ('busy' in held) {
    await removeMade(made, dir);
    return { busy: { path, lock: held.busy } };
  }
  const lock = withDirectoryRemoval(held.lock, made, dir);
  if (request.meets) {
    const mine = basename(path);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name === mine || !request.meets(name)) continue;
      const other = join(dir, name);
      const holder = await runLockHolder(other).catch(() => undefined);
      if (!holder) continue;
      await lock.release();
      return { busy: { path: other, lock: holder } };
    }
  }
  return { taken: lock };
}

/** The lock, whose release also removes the directories made for it when they are empty. */
function withDirectoryRemoval(lock: RunLock, made: string | undefined, dir: string): RunLock {
  if (!made) return lock;
  return {
    path: lock.path,
    holder: lock.holder,
    release: async () => {
      await lock.release();
      await removeMade(made, dir);
    },
  };
}

/** Removes `dir` and its parents up to `made` (the first directory mkdir made), as long as they are empty. */
async function removeMade(made: string | undefined, dir: string): Promise<void> {
  if (!made) return;
  for (let current = dir; ; current = dirname(current)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    if (current === made || dirname(current) === current) return;
  }
}

/** The holder in the words of a refusal: its pid and command, and where it runs when it is not here. */
export function describeHolder({ holder, local, renewedAgoMs }: BusyLock): string {
  // A shared directory's lock file is anyone's text: shown printable and short.
  const command = holder.command ? ` (${printable(holder.command, 120)})` : '';
  const since = holder.since && !Number.isNaN(Date.parse(holder.since)) ? `, since ${new Date(holder.since).toLocaleTimeString('en-GB', { hour12: false })}` : '';
  if (local) return `pid ${holder.pid}${command}${since}`;
  const seconds = Math.round(renewedAgoMs / 1000);
  return `pid ${holder.pid} on ${printable(holder.host, 80)}${command}${since}, last renewed ${seconds}s ago (taken over once not renewed for ${RUN_LOCK_ABANDONED_MS / 60_000} minutes)`;
}

/** The lock file of a batch's run over `manifestPath`: the manifest's name with `.lock`, or `.shard-k-of-n.lock`. */
export function batchLockPath(manifestPath: string, shard: Shard | undefined): string {
  return shard ? `${manifestPath}.shard-${shard.index}-of-${shard.count}.lock` : `${manifestPath}.lock`;
}

/** Whether the lock file `name` (beside the manifest) is held by a run whose rows meet this shard's (or the whole batch's). */
export function batchLocksMeet(manifestPath: string, shard: Shard | undefined): (name: string) => boolean {
  const manifestName = basename(manifestPath);
  return (name) => {
    if (!name.startsWith(`${manifestName}.`) || !name.endsWith('.lock')) return false;
    const rest = name.slice(manifestName.length + 1, -'.lock'.length);
    if (rest === '') return true;
    const match = /^shard-(\d+)-of-(\d+)$/.exec(rest);
    if (!match) return false;
    return shardsMeet(shard, { index: Number(match[1]), count: Number(match[2]) });
  };
}

/** Whether two shards (undefined: the whole batch) have a row in common: k ≡ k' modulo gcd(n, n'). */
export function shardsMeet(a: Shard | undefined, b: Shard | undefined): boolean {
  if (!a || !b) return true;
  if (!(a.count >= 1 && b.count >= 1)) return true;
  return (a.index - b.index) % gcd(a.count, b.count) === 0;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(new InterruptedError());
    }
    signal.addEventListener('abort', aborted, { once: true });
  });
}
