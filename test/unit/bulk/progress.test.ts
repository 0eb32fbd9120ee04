import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { createProgress, fitBarLine, fitToColumns, progressLine } from '../../../src/bulk/progress.js';
import { TestTerminal } from '../../helpers/terminal.js';

async function terminal(options: { tty?: boolean; quiet?: boolean } = {}) {
  const terminal = new TestTerminal({ tty: { stderr: options.tty ?? false } });
  const { io } = await terminal.context({ quiet: options.quiet, color: false });
  return { io, text: () => terminal.stderr.text() };
}

describe('progress text', () => {
  it('gives the ETA in whole seconds', () => {
    expect(progressLine({ total: 100, done: 1, failed: 0, retrying: 0 }, 4400)).toMatch(/ETA 7m16s$/);
    expect(progressLine({ total: 1000, done: 1, failed: 0, retrying: 0 }, 3700)).toMatch(/ETA 1h01m36s$/);
  });

  it('states done, failed, retrying, rate and ETA', () => {
    expect(progressLine({ total: 200, done: 45, failed: 5, retrying: 3 }, 10_000)).toBe(
      '50/200 rows (25%): 45 done, 5 failed, 3 retrying — 5.0/s, ETA 30s',
    );
    expect(progressLine({ total: 10, done: 0, failed: 0, retrying: 0 }, 0)).toBe('0/10 rows (0%): 0 done, 0 failed, 0 retrying — 0.0/s, ETA ?');
  });
});

describe('createProgress', () => {
  it('prints plain periodic lines, without control codes, when stderr is not a terminal', async () => {
    let now = 0;
    const { io, text } = await terminal();
    const progress = await createProgress(io, { intervalMs: 10, now: () => now });
    now = 2000;
    progress.update({ total: 4, done: 2, failed: 0, retrying: 1 });
    progress.log('row 3 failed: boom');
    await new Promise((resolve) => setTimeout(resolve, 35));
    progress.stop();
    const output = text();
    expect(output).toContain('warning: row 3 failed: boom\n');
    expect(output).toContain('batch: 2/4 rows (50%): 2 done, 0 failed, 1 retrying — 1.0/s, ETA 2s\n');
    // Unchanged counts are not repeated every interval.
    expect(output.match(/batch: /g)).toHaveLength(1);
    expect(output).not.toMatch(/\u001b\[/);
  });

  it('draws a bar on a terminal', async () => {
    const { io, text } = await terminal({ tty: true });
    const progress = await createProgress(io);
    progress.update({ total: 4, done: 1, failed: 1, retrying: 0 });
    progress.stop();
    expect(text()).toMatch(/2\/4 rows \| 1 done, 1 failed, 0 retrying \| [0-9.]+\/s \| ETA /);
  });

  it('is silent with --quiet', async () => {
    const { io, text } = await terminal({ quiet: true });
    const progress = await createProgress(io, { intervalMs: 5 });
    progress.update({ total: 1, done: 1, failed: 0, retrying: 0 });
    await new Promise((resolve) => setTimeout(resolve, 15));
    progress.stop();
    expect(text()).toBe('');
  });
});

describe('fitToColumns', () => {
  it('breaks a notice between words into lines narrower than the terminal, keeping every word in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.stringMatching(/^[a-z():;,0-9-]{1,12}$/), fc.constantFrom('漢字の', 'ｗｉｄｅ', 'é', `\x1b[33mwarning:\x1b[39m`)), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 20, max: 120 }),
        (parts, columns) => {
          const text = parts.join(' ');
          const lines = fitToColumns(text, columns, stringWidth);
          for (const line of lines) expect(stringWidth(line)).toBeLessThan(columns);
          expect(lines.slice(1).every((line) => line.startsWith('  '))).toBe(true);
          expect(lines.join(' ').split(/\s+/).join('')).toBe(parts.join(''));
        },
      ),
    );
  });

  it('cuts a word wider than a line between characters', () => {
    expect(fitToColumns(`error: ${'x'.repeat(30)}`, 20, stringWidth)).toEqual(['error:', `  ${'x'.repeat(17)}`, `  ${'x'.repeat(13)}`]);
  });
});

describe('fitBarLine', () => {
  const line = (maxWidth: number, retrying = 0, value = 1000) =>
    fitBarLine({
      progress: value / 1000,
      value,
      total: 1000,
      maxWidth,
      noun: 'images',
      payload: { done: value, failed: 0, retrying, perSecond: '12.5', remaining: '0s' },
      complete: '█',
      incomplete: '░',
    });

  it('ends with the ETA at every width, never cut, with a bar of 10 to 20 cells', () => {
    for (let width = 40; width <= 200; width++) {
      const text = line(width);
      expect(text.length, text).toBeLessThan(width);
      expect(text).toMatch(/\| ETA 0s$/);
      expect(text).toMatch(/^█{1,20} 1000\/1000 images/);
    }
  });

  it('says everything where it fits, leaving out "0 retrying" first, then the rate, then the counts', () => {
    expect(line(120)).toBe(`${'█'.repeat(20)} 1000/1000 images | 1000 done, 0 failed, 0 retrying | 12.5/s | ETA 0s`);
    expect(line(80)).toBe(`${'█'.repeat(10)} 1000/1000 images | 1000 done, 0 failed, 0 retrying | 12.5/s | ETA 0s`);
    expect(line(70)).toBe(`${'█'.repeat(12)} 1000/1000 images | 1000 done, 0 failed | 12.5/s | ETA 0s`);
    expect(line(60)).toBe(`${'█'.repeat(11)} 1000/1000 images | 1000 done, 0 failed | ETA 0s`);
    expect(line(50)).toBe(`${'█'.repeat(20)} 1000/1000 images | ETA 0s`);
    expect(line(80, 3, 500)).toBe(`${'█'.repeat(6)}${'░'.repeat(6)} 500/1000 images | 500 done, 0 failed, 3 retrying | 12.5/s | ETA 0s`);
  });
});

describe('createProgress with --json', () => {
  it('leaves out a failure the summary lists, and keeps every other notice', async () => {
    const terminal = new TestTerminal();
    const ctx = await terminal.context({ json: true });
    const progress = await createProgress(ctx.io);
    progress.log('row 2 failed: ErrorGeneratingImage: no', { inSummary: true });
    progress.log('rate limited (429): pausing all requests for 2s');
    progress.stop();
    expect(terminal.stderr.text()).toBe('warning: rate limited (429): pausing all requests for 2s\n');
  });
});
