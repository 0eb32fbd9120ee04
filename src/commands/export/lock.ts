// One export into a directory at a time, whether it downloads or only makes
// the report: another would sweep this one's downloads as a dead run's temp
// files, or write the report beside a half-made one.
import { join } from 'node:path';
import type { Context } from '../../cli/context.js';

/** Takes the export lock of `dir` for `command` (as `ps` would show it), released by the run's cleanup. */
export async function takeExportLock(ctx: Context, dir: string, command: string, waitForLock: boolean): Promise<void> {
  const { EXPORT_LOCK_NAME, takeRunLock } = await import('../../batch/run-lock.js');
  const lock = await takeRunLock({
    path: join(dir, EXPORT_LOCK_NAME),
    command,
    other: 'another export into this directory',
    wait: waitForLock,
    signal: ctx.signal,
    display: (path) => path,
    onWait: (message) => ctx.io.info(message),
  });
  ctx.onCleanup(() => lock.release());
}
