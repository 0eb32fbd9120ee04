// A walk over a history of millions (`list --all`, `export`) allocates
// steadily and keeps a little of each page alive from one young collection
// to the next. V8 answers that by doubling its young generation each time
// what survived adds up to its size, up to a largest size it sets from the
// machine's memory: 32 MiB (two semi-spaces of 16) on Node 20, 128 MiB on
// Node 24. That alone took `list --all --json` over a million images from
// 139 MiB on Node 20 to 234–253 MiB on Node 24 (docs/performance.md).
//
// The size can be capped only where the process starts (--max-semi-space-size),
// which a command cannot do for itself; but V8 reads how much to grow by
// (--semi-space-growth-factor) each time it grows. So once the young
// generation has reached `capMb` (both semi-spaces, as V8 reports its
// new_space), growing by a factor of 1 keeps it near there (V8 may
// still add a little: 16 to 25 MiB seen under test). At 16 MiB, a million
// images list in 146 MiB on Node 24 (8 MiB: 154; left alone: 234–253).
// The size is looked at after every garbage collection (a PerformanceObserver
// of 'gc' entries, which V8's collections report between turns of the event
// loop) and wherever the caller checks: looked at once a page alone, a page of
// 1,000 images and their downloads could double it past the cap, and an export
// of 10,000 images peaked anywhere from 164 to 191 MiB on Node 24.
// Only this process's commands do this, never the library (src/library/),
// which runs inside other programs.
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The Node lines whose V8 is known to have the flag: on another, an unknown flag is an error line on stderr, so it is not set. */
const LINES_WITH_GROWTH_FACTOR = new Set([20, 22, 24, 26]);

/**
 * Stops the young generation's growth once it has reached `capMb` MiB (both
 * semi-spaces), looked at after each garbage collection from now on. Returns
 * a check to call as the work goes on too (once a page), for work that runs
 * long between turns of the event loop; it says whether the cap is in place.
 */
export function capYoungGeneration(capMb = 16, nodeLine = Number(process.versions.node.split('.')[0])): () => boolean {
  let capped = false;
  const known = LINES_WITH_GROWTH_FACTOR.has(nodeLine);
  const check = () => {
    if (capped || !known) return capped;
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young && young.space_size >= capMb * 1024 * 1024) {
      setFlagsFromString('--semi-space-growth-factor=1');
      capped = true;
      // Observing GCs keeps nothing alive, but once capped there is nothing left to look at.
      afterCollections.disconnect();
    }
    return capped;
  };
  const afterCollections = new PerformanceObserver(() => void check());
  if (known) afterCollections.observe({ entryTypes: ['gc'] });
  return check;
}
