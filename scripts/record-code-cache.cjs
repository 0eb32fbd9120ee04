// Run by scripts/build.mjs: loads the staged bundle as bin/aerial.js does, runs
// the everyday commands against the in-process sandbox, then saves the V8 code
// caches of every bundle file they loaded (see bin/code-cache.js).
// Usage: node record-code-cache.cjs <bundle dir> <scratch dir>
'use strict';
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { useCodeCache } = require('../bin/code-cache.js');

const [bundleDir, scratch] = process.argv.slice(2);
const recorder = useCodeCache(bundleDir, { record: true });
const { main } = require(join(bundleDir, 'cli.js'));

const rows = join(scratch, 'rows.csv');
writeFileSync(rows, 'lat,lng\n48.8584,2.2945\n40.6892,-74.0445\n');
const commands = [
  ['list', '--json', '--sandbox'],
  ['list', '--sandbox'],
  ['generate', '--sandbox', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', join(scratch, 'eiffel.jpg')],
  ['batch', rows, '--dry-run', '--sandbox'],
  ['batch', rows, '--sandbox', '--concurrency', '2', '--output-template', join(scratch, 'batch', '{row}.jpg')],
  ['config', 'list'],
];

(async () => {
  for (const args of commands) {
    const exitCode = await main([process.argv[0], 'aerial', ...args]);
    if (exitCode !== 0) throw new Error(`aerial ${args.join(' ')} exited ${exitCode}`);
  }
  recorder.saveCodeCache();
  process.exit(0);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
