import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../../src/api/errors.js';
import { ManifestWriter } from '../../../src/batch/manifest.js';
import type { Progress } from '../../../src/bulk/progress.js';
import { persistentPolicy, withRetries } from '../../../src/api/retry.js';
import { WireLimiter } from '../../../src/api/wire-limiter.js';
import { OutcomeLog } from '../../../src/batch/outcomes.js';
import { RowRunner, type Job, type RowProducer } from '../../../src/batch/row-runner.js';
import { tempDir } from '../../helpers/cli.js';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});

const silent: Progress = { update() {}, log() {}, stop() {} };
const written = { path: '/out/x.jpg', bytes: 10 };

function jobs(count: number): Job[] {
  return Array.from({ length: count }, (_, i) => ({
    plan: { row: i + 1, cells: {}, request: {} as never, target: `/out/${i + 1}.jpg`, file: `${i + 1}.jpg`, key: `k${i + 1}` },
    resume: { action: 'pending' as const },
  }));
}

/**
 * Rows made as the batch makes them: each attempt (`wire`) under the retry
 * engine with the batch's policy and the row's hooks, then the file finished.
 */
async function runner(count: number, wire: (job: Job) => Promise<void>, concurrency: number, finish?: (job: Job) => Promise<void>) {
  const wireLimiter = new WireLimiter(concurrency);
  const policy = persistentPolicy({ maxRetries: 3, firstDelayMs: 5, retryUnsafe: false, wire: wireLimiter });
  const produce: RowProducer = async (job, retry, signal) => {
    await withRetries(policy, { ...retry, kind: 'generation', signal }, () => wire(job));
    await finish?.(job);
    return written;
  };
  const dir = tempDir('aerial-rows-');
  dirs.push(dir);
  const manifestPath = join(dir.path, 'm.jsonl');
  const manifest = await ManifestWriter.open(manifestPath);
  const outcomes = new OutcomeLog(count);
  const run = new RowRunner({ manifest, produce, progress: silent, outcomes, signal: new AbortController().signal });
  // As the batch runs them: twice as many rows under way as requests on the wire.
  await run.run(jobs(count)[Symbol.iterator](), count, concurrency * 2);
  outcomes.complete(count, (row) => run.unfinished({ row }));
  await manifest.close();
  const lines = readFileSync(manifestPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { row: number; status: string; rateLimited?: number });
  const all = [...outcomes.outcomes()];
  outcomes.close();
  return { outcomes: all, lines, stopError: run.stopError, wire: wireLimiter };
}

describe('RowRunner', () => {
  it('holds every worker, first attempts too, while a 429 pause lasts', async () => {
    const starts: Array<{ row: number; at: number }> = [];
    let pausedUntil = 0;
    let refused = false;
    const { outcomes, lines, wire } = await runner(
      6,
      async (job) => {
        const at = Date.now();
        starts.push({ row: job.plan.row, at });
        if (!refused && job.plan.row === 1) {
          refused = true;
          pausedUntil = at + 150;
          throw new ApiError(429, 'RateLimited', 'slow down', 0.15);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      2,
    );
    expect(outcomes.every((o) => o.status === 'done')).toBe(true);
    expect(outcomes[0]!.attempts).toBe(2);
    // The 429 is counted on the row that met it, in its manifest line, and by the wire.
    expect(lines.find((l) => l.row === 1 && l.status === 'done')?.rateLimited).toBe(1);
    expect(lines.filter((l) => l.status === 'done' && l.row !== 1).every((l) => l.rateLimited === undefined)).toBe(true);
    expect(wire.stats.rateLimited).toBe(1);
    // Row 2 may have been sent alongside row 1; nothing started after the 429 until the pause was over.
    const after = starts.slice(2);
    for (const start of after) expect(start.at).toBeGreaterThanOrEqual(pausedUntil - 5);
  });

  it('stops on 402: rows in flight finish, rows not started are skipped, with a manifest line for each row sent', async () => {
    const { outcomes, lines, stopError } = await runner(
      8,
      async (job) => {
        await new Promise((resolve) => setTimeout(resolve, job.plan.row === 3 ? 1 : 20));
        if (job.plan.row === 3) throw new ApiError(402, 'InsufficientCredits', 'no credits');
      },
      3,
    );
    expect(stopError?.code).toBe('InsufficientCredits');
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'done', 'failed', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
    expect(outcomes[3]!.exitCode).toBe(4);
    expect(lines.filter((l) => l.status === 'started').map((l) => l.row).sort()).toEqual([1, 2, 3]);
    expect(lines.filter((l) => l.status === 'done').map((l) => l.row).sort()).toEqual([1, 2]);
    expect(lines.filter((l) => l.status === 'failed').map((l) => l.row)).toEqual([3]);
  });

  it('retries a reset only before the body could be processed, and records the reason otherwise', async () => {
    let callsForRow1 = 0;
    const { outcomes, lines } = await runner(
      2,
      async (job) => {
        if (job.plan.row === 1) callsForRow1++;
        if (job.plan.row === 1 && callsForRow1 < 3) throw new NetworkError('could not connect (ECONNREFUSED)', 'ECONNREFUSED', false);
        if (job.plan.row === 2) throw new NetworkError('connection failed (ECONNRESET)', 'ECONNRESET', true);
      },
      1,
    );
    expect(outcomes[0]).toMatchObject({ status: 'done', attempts: 3 });
    expect(outcomes[1]).toMatchObject({ status: 'failed', attempts: 1, exitCode: 7 });
    expect(outcomes[1]!.error).toMatch(/--retry-unsafe/);
    expect(lines.filter((l) => l.row === 2).map((l) => l.status)).toEqual(['started', 'failed']);
  });

  it('bounds the requests on the wire, not the files being finished: a received row gives its slot to the next', async () => {
    let onWire = 0;
    let peakOnWire = 0;
    let finishing = 0;
    let sentWhileFinishing = 0;
    const { outcomes } = await runner(
      9,
      async () => {
        onWire++;
        peakOnWire = Math.max(peakOnWire, onWire);
        if (finishing > 0) sentWhileFinishing++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        onWire--;
      },
      3,
      async () => {
        finishing++;
        await new Promise((resolve) => setTimeout(resolve, 30));
        finishing--;
      },
    );
    expect(outcomes.every((o) => o.status === 'done')).toBe(true);
    expect(peakOnWire).toBe(3);
    expect(sentWhileFinishing).toBeGreaterThan(0);
  });

  it('holds no slot while a row waits to retry', async () => {
    const sent: number[] = [];
    let failedOnce = false;
    const { outcomes } = await runner(
      2,
      async (job) => {
        sent.push(job.plan.row);
        if (job.plan.row === 1 && !failedOnce) {
          failedOnce = true;
          throw new ApiError(500, 'InternalError', 'try again');
        }
      },
      1,
    );
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'done']);
    // Row 2 went out during row 1's backoff, with the only slot.
    expect(sent).toEqual([1, 2, 1]);
  });
});

