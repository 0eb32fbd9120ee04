// The cap of src/lifecycle/young-generation.ts put in place by the garbage
// collections themselves, with no check called. Measured in a Node process of
// its own, as a command runs: inside a test worker the worker's own heap adds
// to the young generation and the figure says more about the suite's load than
// about the cap.
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { inOwnNode } from '../helpers/own-node.js';

const MiB = 1024 * 1024;
const subject = fileURLToPath(new URL('../../src/lifecycle/young-generation.ts', import.meta.url));

it('caps the young generation after a collection reaches 16 MiB, when the work yields to the event loop as a walk does', () => {
  // The allocation that takes the young generation to 128 MiB on Node 24 (young-generation.test.ts), run in
  // turns of the event loop as pages arrive; the check returned is not called until the end.
  const { largest, capped } = inOwnNode<{ largest: number; capped: boolean }>(
    subject,
    `import { getHeapSpaceStatistics } from 'node:v8';
     import { setImmediate as nextTurn } from 'node:timers/promises';
     const youngSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
     const check = subject.capYoungGeneration(16);
     const kept = new Array(50000);
     let largest = 0;
     for (let n = 0; n < 12000000; n++) {
       kept[n % kept.length] = { n, text: 'record ' + n + ' ' + 'x'.repeat(64) };
       if (n % 20000 !== 0) continue;
       largest = Math.max(largest, youngSize());
       await nextTurn();
     }
     process.stdout.write(JSON.stringify({ largest, capped: check() }));`,
  );
  expect(largest).toBeGreaterThanOrEqual(16 * MiB);
  // Left alone, the same allocation takes it to 128 MiB on Node 24 and 26. The observer runs after the collection
  // that reached the cap, which may have grown it once more: 34 to 36 MiB seen on Node 24 and 26 in a process of its own.
  expect(largest).toBeLessThan(3 * 16 * MiB);
  expect(capped).toBe(true);
});
