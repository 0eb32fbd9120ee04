#!/usr/bin/env node
// Kept tiny on purpose: startup time is a product goal. `--version` is answered
// without loading the CLI bundle at all.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`aerial ${version} (node ${process.version})\n`);
} else {
  const { main } = await import('../dist/cli.js');
  const exitCode = await main(process.argv);
  // Everything the command started has been closed by now; exit without waiting on
  // V8's background compile threads.
  process.exit(exitCode);
}
