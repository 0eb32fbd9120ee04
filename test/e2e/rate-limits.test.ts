// End-to-end: four `aerial batch --shard k/4` processes (bin/aerial.js) share
// one account limited to 20 requests a second, by a service that answers at
// once (test/helpers/rate-limited-service.ts) behind a limiter of each shape
// docs/scale-out.md names: a sliding window (at most 20 accepted in any one
// second; and one that counts refused requests too), and a token bucket (20
// a second, a second's worth of burst).
//   - Given the account's limit divided among them (`--rate 5/s`), they meet
//     at most 10 429s for 200 rows (the goal is none): `--rate N/s` starts at
//     most N requests in any one-second window, with no burst at the start.
//   - Without `--rate` they find the rate themselves: at most 100 429s for
//     200 rows (the stretch goal is 50).
// Every shard's summary counts the 429s the service answered. RATE_REPORT=1
// prints what each run met.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../helpers/cli.js';
import { startRateLimitedService, type LimiterOptions } from '../helpers/rate-limited-service.js';

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('aerial-rate-limits-');
});
afterAll(() => home.remove());

const ROWS = 200;
let runs = 0;

interface SharedRun {
  /** 429s the service answered, and the shards' summaries counted. */
  refused: number;
  counted: number;
  seconds: number;
  /** The most requests the service accepted in any one second. */
  busiestSecond: number;
}

/** Four shards of a 200-row batch against `limiter` at 20 requests a second. */
async function fourShards(limiter: Omit<LimiterOptions, 'perSecond'>, flags: string[]): Promise<SharedRun> {
  const service = await startRateLimitedService({ ...limiter, perSecond: 20 });
  try {
    const dir = join(home.path, `run-${++runs}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'rows.csv'), `id,lat,lng\n${Array.from({ length: ROWS }, (_, i) => `r${i + 1},${(i / 10 - 10).toFixed(1)},${(i / 7).toFixed(2)}`).join('\n')}\n`);
    const env = { AERIAL_BASE_URL: service.url, AERIAL_API_KEY: 'shared-account-key' };
    const started = Date.now();
    const shards = [1, 2, 3, 4].map((index) =>
      spawnCli(['batch', 'rows.csv', '--resolution', 'HD', '--output-template', 'out/{id}.jpg', '--shard', `${index}/4`, ...flags, '--json'], { configDir: home.path, env, cwd: dir, timeout: 120_000 }),
    );
    const results = await Promise.all(shards);
    const seconds = (Date.now() - started) / 1000;
    for (const result of results) expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(service.accepted()).toBe(ROWS);
    const counted = results.reduce((sum, result) => sum + (JSON.parse(String(result.stdout)) as { rateLimited: number }).rateLimited, 0);
    const accepted = service.acceptedAt();
    let busiestSecond = 0;
    for (let first = 0, last = 0; last < accepted.length; last++) {
      while (accepted[last]! - accepted[first]! >= 1000) first++;
      busiestSecond = Math.max(busiestSecond, last - first + 1);
    }
    const run = { refused: service.refused(), counted, seconds, busiestSecond };
    if (process.env.RATE_REPORT) console.log(`${flags.join(' ') || 'adaptive'} against ${describeLimiter(limiter)}: ${run.refused} 429s in ${seconds.toFixed(1)} s, at most ${busiestSecond} accepted in one second`);
    return run;
  } finally {
    await service.close();
  }
}

function describeLimiter(limiter: Omit<LimiterOptions, 'perSecond'>): string {
  return limiter.shape === 'token-bucket' ? 'a token bucket' : limiter.countRefused ? 'a sliding window that counts refused requests' : 'a sliding window';
}

const LIMITERS: Array<Omit<LimiterOptions, 'perSecond'>> = [{ shape: 'sliding-window' }, { shape: 'sliding-window', countRefused: true }, { shape: 'token-bucket' }];

describe('four shards on an account of 20 requests a second', () => {
  for (const limiter of LIMITERS) {
    it(`each with --rate 5/s, against ${describeLimiter(limiter)}: at most 10 429s for 200 rows`, async () => {
      const run = await fourShards(limiter, ['--rate', '5/s', '--concurrency', '8']);
      expect(run.counted).toBe(run.refused);
      expect(run.refused).toBeLessThanOrEqual(10);
      // The account's rate alone takes 10 s; the pacing is not a crawl (loose, for a loaded machine).
      expect(run.seconds).toBeLessThan(30);
    }, 120_000);

    it(`without --rate, against ${describeLimiter(limiter)}: they find the rate, with at most 100 429s for 200 rows`, async () => {
      const run = await fourShards(limiter, []);
      expect(run.counted).toBe(run.refused);
      expect(run.refused).toBeLessThanOrEqual(100);
      expect(run.seconds).toBeLessThan(30);
    }, 120_000);
  }
});
