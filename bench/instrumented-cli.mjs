// Runs the built CLI in this process exactly as bin/aerial.js does (the bundle
// imported with Node's compile cache on, process.exit once the command is done),
// then records this process's peak RSS and CPU time to the file named by
// AERIAL_BENCH_STATS. Benchmarks spawn this instead of bin/aerial.js when they
// need figures a parent process cannot read from outside.
import { writeFileSync } from 'node:fs';
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/cli.js');
const exitCode = await main(process.argv);
const statsFile = process.env.AERIAL_BENCH_STATS;
if (statsFile) {
  const cpu = process.cpuUsage();
  const usage = process.resourceUsage();
  writeFileSync(
    statsFile,
    JSON.stringify({ exitCode, maxRssMb: usage.maxRSS / 1024, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000 }),
  );
}
process.exit(exitCode);
