// Garbage collection on demand, to prove that deadlines survive it: a time
// limit the collector can drop (AbortSignal.any over AbortSignal.timeout) never
// fires once a collection has run, and a test that never collects never sees it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** This process's collector (node --expose-gc, switched on at run time). */
export function inProcessGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Runs `work` while collecting garbage in this process every `everyMs`; resolves with its result. */
export async function underForcedGc<T>(work: Promise<T>, everyMs = 5): Promise<{ result: T; collections: number }> {
  const gc = inProcessGc();
  let collections = 0;
  const timer = setInterval(() => {
    gc();
    collections++;
  }, everyMs);
  try {
    return { result: await work, collections };
  } finally {
    clearInterval(timer);
  }
}

export interface ForcedGcChild {
  /** Environment for a child `node` process: --expose-gc and a preload that collects every `everyMs`. */
  env: Record<string, string>;
  /** How many collections the last child ran (written when it exits). */
  collections(): number;
}

/** A preload in `dir` (a temp dir of the test) that makes a child Node process collect garbage all the time. */
export function forcedGcChild(dir: string, everyMs = 20): ForcedGcChild {
  const preload = join(dir, 'force-gc.cjs');
  const counter = join(dir, 'gc-count');
  writeFileSync(
    preload,
    `'use strict';
const { writeFileSync } = require('node:fs');
let collections = 0;
setInterval(() => { globalThis.gc(); collections++; }, ${everyMs}).unref();
process.on('exit', () => writeFileSync(${JSON.stringify(counter)}, String(collections)));
`,
  );
  return {
    env: { NODE_OPTIONS: `--expose-gc --require ${JSON.stringify(preload)}` },
    collections: () => Number(readFileSync(counter, 'utf8')),
  };
}
