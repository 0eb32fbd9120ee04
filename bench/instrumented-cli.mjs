// Runs the built CLI in this process exactly as bin/aerial.js does (the bundle
// imported with Node's compile cache on, process.exit once the command is done),
// then records this process's peak RSS and CPU time to the file named by
// AERIAL_BENCH_STATS. Benchmarks spawn this instead of bin/aerial.js when they
// need figures a parent process cannot read from outside. Run with
// --expose-gc, it also records the largest JS heap the program holds: once a
// second a full collection, then the heap's size. Peak RSS also counts the
// garbage V8 lets pile up between collections, which it lets grow with a long
// run's allocation, so it alone cannot tell that from memory held per image.
import { writeFileSync } from 'node:fs';
import module from 'node:module';
import { getHeapStatistics } from 'node:v8';

const statsFile = process.env.AERIAL_BENCH_STATS;
let maxHeldHeap = 0;
const sampleHeldHeap = () => {
  globalThis.gc();
  maxHeldHeap = Math.max(maxHeldHeap, getHeapStatistics().used_heap_size);
};
const sampler = statsFile && typeof globalThis.gc === 'function' ? setInterval(sampleHeldHeap, 1000).unref() : undefined;

module.enableCompileCache?.();
const { main } = await import('../dist/cli.js');
const exitCode = await main(process.argv);
if (statsFile) {
  if (sampler) {
    clearInterval(sampler);
    sampleHeldHeap();
  }
  const cpu = process.cpuUsage();
  const usage = process.resourceUsage();
  writeFileSync(
    statsFile,
    JSON.stringify({ exitCode, maxRssMb: usage.maxRSS / 1024, ...(sampler ? { maxHeldHeapMb: maxHeldHeap / 2 ** 20 } : {}), cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000 }),
  );
}
process.exit(exitCode);
