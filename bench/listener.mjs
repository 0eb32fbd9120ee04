// The cost of the webhook path: `generate-async --listen` (accept, callback to
// the local listener, signed-URL download) against `generate` for the same
// scene on the same sandbox. The difference is what the round trip adds.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, startSandboxProcess } from './startup.mjs';

const BIN = fileURLToPath(new URL('../bin/aerial.js', import.meta.url));
const run = promisify(execFile);

async function timed(args, env) {
  const started = performance.now();
  await run(process.execPath, [BIN, ...args], { env });
  return performance.now() - started;
}

export async function benchListener({ runs = 7 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-bench-listener-'));
  const env = { ...process.env, AERIAL_CONFIG_DIR: dir, NO_COLOR: '1' };
  const sandbox = await startSandboxProcess(['--data-dir', join(dir, 'sandbox')], env);
  const cliEnv = { ...env, AERIAL_API_KEY: sandbox.key, AERIAL_BASE_URL: sandbox.url };
  const scene = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '--no-metadata'];
  try {
    const sync = [];
    const async = [];
    for (let i = 0; i < runs; i++) {
      sync.push(await timed(['generate', ...scene, '-o', join(dir, `sync-${i}.jpg`)], cliEnv));
      async.push(await timed(['generate-async', ...scene, '--listen', '-o', join(dir, `async-${i}.jpg`)], cliEnv));
    }
    const syncMs = median(sync);
    const endToEndMs = median(async);
    return { runs, syncMs, endToEndMs, roundTripMs: endToEndMs - syncMs };
  } finally {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await benchListener());
}
