// The help of each duration flag is written out (so --help loads no parser);
// here it is held to the ranges and defaults the flags are parsed with, and
// every example it gives is a value the flag takes.
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROGRESS_INTERVAL_MS, PROGRESS_INTERVAL_RANGE, RETRY_DELAY_RANGE } from '../../../src/commands/shared/batch-options.js';
import { PERSISTENT_RETRIES } from '../../../src/api/retry.js';
import { CALLBACK_WAIT_RANGE, DEFAULT_CALLBACK_WAIT } from '../../../src/webhook/async-generation.js';
import { CALLBACK_WAIT_HELP, PROGRESS_INTERVAL_HELP, RETRY_DELAY_HELP } from '../../../src/commands/shared/help.js';
import { LATENCY_BARE_MAX_MS, LATENCY_HELP } from '../../../src/commands/sandbox/index.js';
import { formatDuration, parseDuration, type DurationRange } from '../../../src/input/duration.js';
import { MAX_LATENCY_MS } from '../../../src/sandbox/faults.js';

const LATENCY_RANGE: DurationRange = { minMs: 0, maxMs: MAX_LATENCY_MS, bareMaxMs: LATENCY_BARE_MAX_MS };

const flags: Array<[string, string, DurationRange, string[]]> = [
  ['--timeout / --callback-timeout', CALLBACK_WAIT_HELP, CALLBACK_WAIT_RANGE, [`at most ${CALLBACK_WAIT_RANGE.bareMaxMs! / 1000}`, `default ${DEFAULT_CALLBACK_WAIT}`, `up to ${formatDuration(CALLBACK_WAIT_RANGE.maxMs)}`]],
  ['--retry-delay', RETRY_DELAY_HELP, RETRY_DELAY_RANGE, [`default ${formatDuration(PERSISTENT_RETRIES.firstDelayMs)}`, `at most ${formatDuration(RETRY_DELAY_RANGE.maxMs)}`]],
  ['--progress-interval', PROGRESS_INTERVAL_HELP, PROGRESS_INTERVAL_RANGE, [`default ${formatDuration(DEFAULT_PROGRESS_INTERVAL_MS)}`]],
  ['--latency', LATENCY_HELP, LATENCY_RANGE, [`at most ${LATENCY_BARE_MAX_MS / 1000}`, `up to ${formatDuration(MAX_LATENCY_MS)}`]],
];

describe('duration flags in --help', () => {
  it.each(flags)('%s states its limits and default as parsed', (_flag, help, range, facts) => {
    for (const fact of facts) expect(help).toContain(fact);
    expect(help).toContain('a bare number is seconds');
    const examples = help.split(':').at(-1)!.split(';')[0]!.split(',').map((example) => example.trim());
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(() => parseDuration(example, 'flag', range), example).not.toThrow();
  });

  it('the default callback wait is one the flags take', () => {
    expect(parseDuration(DEFAULT_CALLBACK_WAIT, '--timeout', CALLBACK_WAIT_RANGE)).toBe(600_000);
  });
});
