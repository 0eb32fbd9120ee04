// Run by scripts/build.mjs: loads the staged bundle as bin/aerial.js does, runs
// the quick everyday commands against the in-process sandbox (and a list
// through a stand-in proxy, for undici's proxy agent), then saves the V8 code
// caches of every bundle file they loaded (see bin/code-cache.js).
//
// Only commands whose start-up is most of their time are run. A cache holds
// every function compiled while recording, and every command that loads the
// file pays to read all of it: recording a generation and a batch too made
// `list --json` 1.3-1.8 ms slower (about 2.5% of it), while a generation
// compiles what it adds as it goes for about 3 ms of CPU, unseen in the
// tenths of a second it waits for its image (measured side by side).
// Usage: node record-code-cache.cjs <bundle dir>
'use strict';
const { join } = require('node:path');
const { useCodeCache } = require('../bin/code-cache.js');

const [bundleDir] = process.argv.slice(2);
const recorder = useCodeCache(bundleDir, { record: true });
const { main } = require(join(bundleDir, 'cli.js'));

const commands = [
  ['list', '--json', '--sandbox'],
  ['list', '--sandbox'],
  ['config', 'list'],
];

/**
 * A stand-in forward proxy that answers every request itself with an empty
 * page, so a list through a proxy (which loads undici's proxy agent) can be
 * recorded without any request leaving the machine.
 */
function startPageProxy() {
  const { createServer } = require('node:http');
  const page = JSON.stringify({ content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 });
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(page) }).end(page);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

(async () => {
  for (const args of commands) {
    const exitCode = await main([process.argv[0], 'aerial', ...args]);
    if (exitCode !== 0) throw new Error(`aerial ${args.join(' ')} exited ${exitCode}`);
  }
  const proxy = await startPageProxy();
  process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.address().port}`;
  const proxied = ['list', '--json', '--base-url', 'http://genaerial.invalid', '--api-key', 'code-cache-recording'];
  const exitCode = await main([process.argv[0], 'aerial', ...proxied]);
  if (exitCode !== 0) throw new Error(`aerial ${proxied.join(' ')} through a proxy exited ${exitCode}`);
  proxy.closeAllConnections();
  proxy.close();
  recorder.saveCodeCache();
  process.exit(0);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
