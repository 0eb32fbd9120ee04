// How long `aerial view` takes to show a UHD image, per protocol, as a user
// waits for it: the whole process (start-up, sharp, decoding, encoding),
// medians of interleaved runs beside a bare `node -e 0`, with
// NODE_EXTRA_CA_CERTS unset as users run it. The image is a real sandbox UHD
// render (3840 × 2160), written once through `aerial generate --sandbox`.
//
//   node bench/preview.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './startup.mjs';

const BIN = fileURLToPath(new URL('../bin/aerial.js', import.meta.url));
const PROTOCOLS = ['blocks', 'kitty', 'iterm', 'sixel'];
const COLUMNS = 100;

function timeOnce(args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms, stderr: result.stderr };
}

export async function benchPreview({ runs = 11 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'aerial-bench-preview-'));
  const { NODE_EXTRA_CA_CERTS: _unused, ...rest } = process.env;
  const env = { ...rest, AERIAL_CONFIG_DIR: dir, NO_COLOR: '1' };
  try {
    const image = join(dir, 'uhd.jpg');
    execFileSync(process.execPath, [BIN, 'generate', '--sandbox', '--lat', '48.8566', '--lng', '2.3522', '--resolution', 'UHD', '--weather', 'Cloudy', '-o', image], {
      env,
      stdio: 'ignore',
    });
    const cases = { node: ['-e', '0'] };
    for (const protocol of PROTOCOLS) cases[protocol] = [BIN, 'view', image, '--protocol', protocol, '--width', String(COLUMNS), '--verbose'];
    const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
    const renderMs = Object.fromEntries(PROTOCOLS.map((name) => [name, []]));
    for (const args of Object.values(cases)) timeOnce(args, env); // warm the file cache
    for (let i = 0; i < runs; i++) {
      for (const [name, args] of Object.entries(cases)) {
        const { ms, stderr } = timeOnce(args, env);
        samples[name].push(ms);
        // The command's own account of decoding and encoding (--verbose): "…, 1000×563 px, 48ms".
        const inside = /px, (\d+)ms/.exec(stderr);
        if (inside) renderMs[name].push(Number(inside[1]));
      }
    }
    const nodeMs = median(samples.node);
    return {
      runs,
      columns: COLUMNS,
      nodeMs,
      protocols: Object.fromEntries(PROTOCOLS.map((name) => [name, { ms: median(samples[name]), ratio: median(samples[name]) / nodeMs, renderMs: median(renderMs[name]) }])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await benchPreview(), null, 2));
}
