// Runs the CLI with the file-system fault injector (fs-faults.cjs) preloaded:
// the calls it makes on paths under one directory fail as a sick disk's do,
// or get stuck in Node's thread pool. `strikes()` says which calls were hit,
// so a test can tell a fault that was met from one the command never reached.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/** The faults the injector makes: what a full, forbidden, read-only, failing or vanishing disk answers, or no answer at all. */
export const FS_FAULTS = ['ENOSPC', 'EACCES', 'EROFS', 'EIO', 'ENOENT', 'stuck'] as const;
export type FsFault = (typeof FS_FAULTS)[number];

/** Kinds of call the injector tells apart (see fs-faults.cjs). */
export type CallKind = 'open' | 'create' | 'read' | 'write' | 'sync' | 'close' | 'stat' | 'mkdir' | 'rename' | 'remove' | 'readdir' | 'utimes';

/** The calls each fault strikes by default: those a real disk fails that way. */
export const STRUCK_BY: Record<FsFault, CallKind[]> = {
  // A full disk: whatever allocates (a new file, a directory, data, a rename's new entry, a flush).
  ENOSPC: ['create', 'write', 'sync', 'mkdir', 'rename'],
  // Permissions: whatever looks a name up or changes a directory.
  EACCES: ['open', 'create', 'mkdir', 'rename', 'remove', 'readdir', 'stat'],
  // Remounted read-only: whatever would change the file system.
  EROFS: ['create', 'mkdir', 'rename', 'remove', 'utimes'],
  // A failing device: any input or output.
  EIO: ['open', 'create', 'read', 'write', 'sync', 'close', 'stat', 'readdir'],
  // The directory removed from under the command: any name looked up in it.
  ENOENT: ['open', 'create', 'stat', 'mkdir', 'rename', 'remove', 'readdir', 'utimes'],
  // A hung network file system: any call at all.
  stuck: ['open', 'create', 'read', 'write', 'sync', 'close', 'stat', 'mkdir', 'rename', 'remove', 'readdir', 'utimes'],
};

const PRELOAD = join(ROOT, 'test', 'helpers', 'fs-faults.cjs');

export interface FsFaultOptions {
  /** Paths under this directory (and files opened there) are struck. */
  under: string;
  fault: FsFault;
  /** The calls struck; STRUCK_BY[fault] when absent. */
  kinds?: CallKind[];
  /** How many matching calls succeed first. */
  after?: number;
  /** A directory of the test's own for the injector's log (and, for "stuck", its FIFO). */
  scratch: string;
}

export interface InjectedFault {
  /** The environment that preloads the injector in the CLI. */
  env: Record<string, string>;
  /** The calls struck so far, one line each: "<kind> <syscall> <path>". */
  strikes(): string[];
}

let count = 0;

/** The environment that runs the CLI under `fault` on paths under `under`. */
export function injectFsFault(options: FsFaultOptions): InjectedFault {
  const n = ++count;
  const log = join(options.scratch, `fs-fault-${n}.log`);
  const fifo = join(options.scratch, `fs-fault-${n}.fifo`);
  if (options.fault === 'stuck') execFileSync('mkfifo', [fifo]);
  const spec = { under: options.under, fault: options.fault, kinds: options.kinds ?? STRUCK_BY[options.fault], after: options.after ?? 0, log, fifo };
  return {
    env: { NODE_OPTIONS: `--require "${PRELOAD}"`, AERIAL_TEST_FS_FAULT: JSON.stringify(spec) },
    strikes: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
  };
}
