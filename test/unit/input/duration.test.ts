// The one duration reading and writing of the CLI: bare numbers are seconds,
// units are written out, and what formatDuration writes parseDuration reads back.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/lifecycle/errors.js';
import { describeDurationRange, formatDuration, parseDuration, readDuration, type DurationRange } from '../../../src/input/duration.js';

const CALLBACK: DurationRange = { minMs: 1, maxMs: 24 * 3_600_000, bareMaxMs: 600_000 };
const RETRY: DurationRange = { minMs: 0, maxMs: 30_000 };
const LATENCY: DurationRange = { minMs: 0, maxMs: 600_000, bareMaxMs: 30_000 };
const INTERVAL: DurationRange = { minMs: 1000, maxMs: 3_600_000 };

function refusal(raw: string, flag: string, range: DurationRange): string {
  try {
    parseDuration(raw, flag, range);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${flag} ${raw} was accepted`);
}

describe('parseDuration', () => {
  it('reads a bare number as seconds, as timeout(1), curl, gh and aws do', () => {
    expect(parseDuration('30', '--timeout', CALLBACK)).toBe(30_000);
    expect(parseDuration('0.5', '--timeout', CALLBACK)).toBe(500);
    expect(parseDuration(' 2 ', '--retry-delay', RETRY)).toBe(2000);
    expect(parseDuration('5', '--progress-interval', INTERVAL)).toBe(5000);
  });

  it('reads ms, s, m and h, combined from the largest unit down, in any case', () => {
    const cases: Array<[string, number]> = [
      ['500ms', 500],
      ['90s', 90_000],
      ['1.5s', 1500],
      ['10m', 600_000],
      ['1h', 3_600_000],
      ['1h30m', 5_400_000],
      ['1m05s', 65_000],
      ['2h00m30s', 7_230_000],
      ['1s250ms', 1250],
      ['10M', 600_000],
    ];
    for (const [raw, ms] of cases) expect(parseDuration(raw, '--timeout', CALLBACK), raw).toBe(ms);
  });

  it('refuses what is not a duration, naming the flag and what it takes', () => {
    for (const raw of ['', 'soon', '-5s', '5 s', '1d', '30m1h', '1m1m', '1e3', '0x10', 's', '1h 30m', 'Infinity']) {
      expect(refusal(raw, '--timeout', CALLBACK), raw).toBe(
        `--timeout must be a duration from 1ms to 24h, such as 500ms, 30 (seconds), 90s, 10m or 1h; a bare number is seconds, at most 600; got '${raw}'`,
      );
    }
  });

  it('refuses values out of range', () => {
    expect(refusal('0', '--timeout', CALLBACK)).toMatch(/^--timeout must be a duration from 1ms to 24h.*got '0'$/);
    expect(refusal('25h', '--timeout', CALLBACK)).toMatch(/got '25h'$/);
    expect(refusal('31s', '--retry-delay', RETRY)).toBe("--retry-delay must be a duration from 0s to 30s, such as 500ms or 30 (seconds); got '31s'");
    expect(refusal('500ms', '--progress-interval', INTERVAL)).toMatch(/^--progress-interval must be a duration from 1s to 1h, such as 30 \(seconds\), 90s, 10m or 1h; got '500ms'$/);
  });

  it('refuses a bare number that was surely meant as milliseconds, with the way to write it', () => {
    // Bare numbers were milliseconds before: these must not quietly become minutes or hours.
    expect(refusal('500', '--retry-delay', RETRY)).toMatch(/got '500': for milliseconds write 500ms$/);
    expect(refusal('500', '--latency', LATENCY)).toMatch(/a bare number is seconds, at most 30; got '500': for milliseconds write 500ms, or for 500 seconds write 8m20s$/);
    expect(refusal('30000', '--timeout', CALLBACK)).toMatch(/got '30000': for milliseconds write 30000ms, or for 30000 seconds write 8h20m$/);
    // Out of range either way: no hint to write something that would be refused too.
    expect(refusal('50000', '--retry-delay', RETRY)).toMatch(/got '50000'$/);
    // With a unit, the long value is taken.
    expect(parseDuration('500s', '--latency', LATENCY)).toBe(500_000);
    expect(parseDuration('8h20m', '--timeout', CALLBACK)).toBe(30_000_000);
    expect(parseDuration('600', '--timeout', CALLBACK)).toBe(600_000);
  });
});

describe('formatDuration', () => {
  it('writes what people write', () => {
    const cases: Array<[number, string]> = [
      [0, '0s'],
      [1, '1ms'],
      [500, '500ms'],
      [1000, '1s'],
      [1500, '1.5s'],
      [30_000, '30s'],
      [90_000, '1m30s'],
      [65_000, '1m05s'],
      [600_000, '10m'],
      [3_600_000, '1h'],
      [3_605_000, '1h00m05s'],
      [5_400_000, '1h30m'],
      [86_400_000, '24h'],
    ];
    for (const [ms, text] of cases) expect(formatDuration(ms), String(ms)).toBe(text);
  });

  it('rounds to a precision, and says ? for no estimate', () => {
    expect(formatDuration(4400, 1000)).toBe('4s');
    expect(formatDuration(1449, 100)).toBe('1.4s');
    expect(formatDuration(Infinity)).toBe('?');
    expect(formatDuration(-5)).toBe('0s');
  });

  it('is read back as the same duration', () => {
    for (let ms = 0; ms < 30 * 3_600_000; ms += 1 + Math.floor(ms / 3)) {
      expect(readDuration(formatDuration(ms))?.ms, String(ms)).toBe(ms);
    }
  });
});

describe('describeDurationRange', () => {
  it('gives only examples the flag takes', () => {
    expect(describeDurationRange(RETRY)).toBe('a duration from 0s to 30s, such as 500ms or 30 (seconds)');
    expect(describeDurationRange(LATENCY)).toBe('a duration from 0s to 10m, such as 500ms, 30 (seconds), 90s or 10m; a bare number is seconds, at most 30');
  });
});
