// Runs the built CLI in this process exactly as bin/aerial.js does, then
// records this process's peak RSS and CPU time to the file named by
// AERIAL_BENCH_STATS. Benchmarks spawn this instead of bin/aerial.js when
// they need figures a parent process cannot read from outside.
import { writeFileSync } from 'node:fs';

const statsFile = process.env.AERIAL_BENCH_STATS;
const { main } = await import('../dist/cli.js');
const exitCode = await main(process.argv);
if (statsFile) {
  const cpu = process.cpuUsage();
  const usage = process.resourceUsage();
  writeFileSync(
    statsFile,
    JSON.stringify({ exitCode, maxRssMb: usage.maxRSS / 1024, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000 }),
  );
}
