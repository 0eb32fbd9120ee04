// The cap on V8's young generation that long walks put in place
// (src/lifecycle/young-generation.ts). Each test file runs in a process of its
// own, so the flag set here stays here. That it keeps a walk of a million
// images under 200 MiB is shown end to end (test/heavy/history-scale.test.ts).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { capYoungGeneration } from '../../src/lifecycle/young-generation.js';
import { inOwnNode } from '../helpers/own-node.js';

const subject = fileURLToPath(new URL('../../src/lifecycle/young-generation.ts', import.meta.url));

const MiB = 1024 * 1024;

/** Allocation whose objects each outlive a few young collections: what makes V8 grow its young generation. */
function churn(rounds: number): number {
  const kept = new Array<{ n: number; text: string } | undefined>(50_000);
  let sum = 0;
  for (let n = 0; n < rounds; n++) {
    sum += kept[n % kept.length]?.text.length ?? 0;
    kept[n % kept.length] = { n, text: `record ${n} ${'x'.repeat(64)}` };
  }
  return sum;
}

describe('capYoungGeneration', () => {
  it('does nothing on a Node line not known to have the flag, whatever the size', () => {
    const hold = capYoungGeneration(0, 99);
    expect(hold()).toBe(false);
    expect(hold()).toBe(false);
  });

  it('does nothing until the young generation reaches the cap', () => {
    expect(capYoungGeneration(64 * 1024)()).toBe(false);
  });

  it('(the same allocation, in a Node of its own without the cap, grows the young generation)', () => {
    const script = `const young = () => require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
      const before = young(); (${churn.toString()})(3000000); process.stdout.write(JSON.stringify([before, young()]));`;
    const [before, after] = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as [number, number];
    expect(after).toBeGreaterThanOrEqual(before * 4);
  });

  it('once the cap it is used with (16 MiB) is reached, keeps the young generation under twice that, where the same allocation takes it to 128 MiB on Node 24', () => {
    // Capped as a walk caps it: checked as the work goes on, the young generation left to grow to 16 MiB first.
    // Measured in a Node process of its own, as a command runs (inside this suite's workers their own heap adds to it).
    const { cappedAt, largest, held } = inOwnNode<{ cappedAt: number; largest: number; held: boolean }>(
      subject,
      `import { getHeapSpaceStatistics } from 'node:v8';
       const youngSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
       const hold = subject.capYoungGeneration(16);
       const kept = new Array(50000);
       let cappedAt = 0;
       let largest = 0;
       for (let n = 0; n < 12000000; n++) {
         kept[n % kept.length] = { n, text: 'record ' + n + ' ' + 'x'.repeat(64) };
         if (n % 1000 !== 0) continue;
         if (!cappedAt && hold()) cappedAt = youngSize();
         if (cappedAt) largest = Math.max(largest, youngSize());
       }
       process.stdout.write(JSON.stringify({ cappedAt, largest, held: hold() }));`,
    );
    expect(cappedAt).toBeGreaterThanOrEqual(16 * MiB);
    expect(largest).toBeLessThan(2 * cappedAt);
    expect(held).toBe(true);
  });

});
