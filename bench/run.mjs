// `npm run bench`: every performance figure the project promises, measured in
// one run on this machine beside a bare `node -e 0`, printed as one table and
// written to bench/results.json.
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { benchStartup, benchStreamingMemory } from './startup.mjs';

// `npm run bench -- startup --against DIR --runs 41`: the start-up figures only, with the build
// in DIR (its bin/ and dist/, such as a copy of the previous release) timed in the same
// interleaved runs, 41 of them. `npm run bench -- scale --full`: the batch-scale figures at full size.
// `npm run bench -- history`: list --all over a million images, and export's memory at two sizes.
// `npm run bench -- peers`: list --all, export and batch beside the scripts a user would write (peers.mjs).
const args = process.argv.slice(2);
const full = args.includes('--full');
const VALUED = ['--against', '--runs'];
const valuesOf = (option) => args.flatMap((arg, i) => (args[i - 1] === option ? [arg] : []));
const against = valuesOf('--against');
const startupRuns = Number(valuesOf('--runs').at(-1)) || 21;
const only = args.filter((arg, i) => arg !== '--full' && !VALUED.includes(arg) && !VALUED.includes(args[i - 1]));
const wanted = (name) => only.length === 0 || only.includes(name);

const rows = [];
const results = {
  date: new Date().toISOString(),
  machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30) },
};

function row(figure, value, goal, pass) {
  rows.push({ figure, value, goal, verdict: pass === undefined ? '' : pass ? 'ok' : 'MISSED' });
}
const ms = (v) => `${v.toFixed(1)} ms`;
const x = (v) => `${v.toFixed(2)}×`;

if (wanted('startup')) {
  // On the Node lines users run, each beside a bare `node -e 0` of the same version, where the goals
  // hold; and on the Node running this script (this machine's), for comparison.
  const { nodeLines, NODE_LINES } = await import('../scripts/node-lines.mjs');
  const machine = process.versions.node.split('.')[0];
  const lines = [...nodeLines(NODE_LINES.filter((line) => line !== machine)), { line: machine, node: process.execPath, machine: true }];
  results.startup = [];
  for (const { line, node, machine: isMachine } of lines) {
    const s = await benchStartup({ runs: startupRuns, against, node });
    results.startup.push(s);
    // As users run it: NODE_EXTRA_CA_CERTS unset. The goals hold here, on the lines users run.
    const c = s.clean;
    const goal = (text, pass) => (isMachine && line === '20' ? ['Node 20: no goal', undefined] : [text, pass]);
    row(`Node ${s.node}${isMachine ? " (this machine's)" : ''}: bare node -e 0 (median), NODE_EXTRA_CA_CERTS unset`, ms(c.nodeMs), 'baseline');
    row('  aerial --version', `${ms(c.versionMs)} = ${x(c.versionRatio)}`, ...goal('≤ 1.30× node', c.versionRatio <= 1.3));
    row('  aerial --help', `${ms(c.helpMs)} = ${x(c.helpRatio)}`, ...goal('≤ 1.30× node', c.helpRatio <= 1.3));
    row('  aerial list --json (sandbox)', `${ms(c.listJsonMs)} = ${x(c.listJsonRatio)}`, ...goal('≤ 2.70× node', c.listJsonRatio <= 2.7));
    for (const other of s.against) {
      row(`    ${other.dir}: --version`, `${ms(other.versionMs)} = ${x(other.versionRatio)}`, 'same runs');
      row(`    ${other.dir}: --help`, `${ms(other.helpMs)} = ${x(other.helpRatio)}`, 'same runs');
      row(`    ${other.dir}: list --json`, `${ms(other.listJsonMs)} = ${x(other.listJsonRatio)}`, 'same runs');
    }
    // This machine's own setting: every start pays for the CA bundle, which dilutes the ratios.
    const e = s.withExtraCaCerts;
    if (e) {
      row('  bare node -e 0 (median), NODE_EXTRA_CA_CERTS set', `${ms(e.nodeMs)} = ${x(e.nodeMs / c.nodeMs)} unset`, 'for comparison');
      row('    aerial --version', `${ms(e.versionMs)} = ${x(e.versionRatio)}`, '');
      row('    aerial --help', `${ms(e.helpMs)} = ${x(e.helpRatio)}`, '');
      row('    aerial list --json (sandbox)', `${ms(e.listJsonMs)} = ${x(e.listJsonRatio)}`, '');
    }
  }
}

if (wanted('memory')) {
  const m = await benchStreamingMemory({ megabytes: 50 });
  results.streamingMemory = m;
  row(`generate: peak RSS for a ${m.responseMb} MiB response`, `${m.peakRssMb} MiB`, '< 100 MiB', m.peakRssMb < 100);
}

if (wanted('render')) {
  try {
    const { benchRender } = await import('./render.mjs');
    const r = await benchRender();
    results.render = r;
    row('sandbox render HD (median)', ms(r.hd_ms), '');
    row('sandbox render FHD (median)', ms(r.fhd_ms), '');
    row('sandbox render UHD (median)', ms(r.uhd_ms), '< 1000 ms', r.uhd_ms < 1000);
  } catch (error) {
    row('sandbox render', `not measured: ${error.message}`, '< 1000 ms UHD', false);
  }
}

if (wanted('throughput')) {
  try {
    const { benchRendererThroughput } = await import('./sandbox-throughput.mjs');
    const t = await benchRendererThroughput({ rounds: 3 });
    results.rendererThroughput = t;
    row(
      `sandbox distinct HD scenes, ${t.requests} at concurrency 16, latency 100 ms (median of ${t.rounds})`,
      `${t.current.toFixed(1)}/s = ${x(t.ratio)} the renderer of ${t.referenceCommit} (${t.reference.toFixed(1)}/s)`,
      '≥ 2× the previous renderer',
      t.ratio >= 2,
    );
  } catch (error) {
    row('sandbox distinct-scene throughput', `not measured: ${error.message}`, '≥ 2× the previous renderer', false);
  }
}

if (wanted('batch')) {
  try {
    const { benchBatch } = await import('./batch.mjs');
    const b = await benchBatch();
    results.batch = b;
    const run = (seconds, ratio) => `${seconds.toFixed(2)} s = ${x(ratio)} ideal`;
    row(
      `batch ${b.rows} rows, concurrency ${b.concurrency}, latency ${b.latencyMs} ms: first request to exit`,
      `${run(b.runSeconds, b.runRatio)} (${b.idealSeconds.toFixed(2)} s)`,
      '≤ 1.15× ideal',
      b.runRatio <= 1.15,
    );
    row('  the same, whole process (start-up included)', run(b.seconds, b.ratio), '');
    row('batch client CPU per row', ms(b.cpuMsPerRow), '< 10 ms', b.cpuMsPerRow < 10);
    row('  bare undici loop, same requests, fresh sandbox: first request to exit', run(b.baselineRunSeconds, b.baselineRunRatio), 'floor with the sandbox');
    row('  the same, whole process', run(b.baselineSeconds, b.baselineRatio), '');
    row('  aerial batch against a stub that only waits 100 ms: first request to exit', run(b.stubRunSeconds, b.stubRunRatio), '');
    row('  bare undici loop against the same stub: first request to exit', run(b.stubBareRunSeconds, b.stubBareRunRatio), 'floor of this machine');
  } catch (error) {
    row('batch', `not measured: ${error.message}`, '≤ 1.15× ideal', false);
  }
}

if (wanted('preview')) {
  try {
    const { benchPreview } = await import('./preview.mjs');
    const p = await benchPreview();
    results.preview = p;
    row(`aerial view of a UHD JPEG at ${p.columns} columns, whole process (node -e 0: ${ms(p.nodeMs)})`, '', '');
    for (const [protocol, figure] of Object.entries(p.protocols)) {
      row(`  --protocol ${protocol}`, `${ms(figure.ms)} = ${x(figure.ratio)} node (decode and encode ${ms(figure.renderMs)})`, '< 500 ms', figure.ms < 500);
    }
  } catch (error) {
    row('aerial view of a UHD JPEG', `not measured: ${error.message}`, '< 500 ms', false);
  }
}

if (wanted('report')) {
  try {
    const { benchReport } = await import('./report.mjs');
    const r = await benchReport();
    results.report = r;
    row(`report of ${r.count} HD images, first build (${r.made} thumbnails made)`, `${(r.coldMs / 1000).toFixed(1)} s = ${ms(r.coldMs / r.made)} per image`, '');
    row(`  the same again (${r.reused} thumbnails reused)`, ms(r.warmMs), '');
    row('  page and thumbnail sizes', `${Math.round(r.htmlKb)} KiB page, ${r.thumbnailKb.toFixed(1)} KiB per thumbnail`, '');
    row(`report of ${r.pageCount} images: page size`, `${r.pageMb.toFixed(1)} MiB`, '');
    if (r.pageLoadMs !== undefined) {
      row('  opened in chromium from file://, to load', ms(r.pageLoadMs), '');
      row('  a filter applied to every card and marker, to the next frame', ms(r.pageFilterMs), '');
      row('  scrolling a screen at a time, to the next frame (median)', ms(r.pageScrollFrameMs), '');
    }
  } catch (error) {
    row('report', `not measured: ${error.message}`, '', false);
  }
}

if (wanted('scale')) {
  try {
    const { benchBatchScale } = await import('./batch-scale.mjs');
    const s = await benchBatchScale({ full });
    results.batchScale = s;
    const size = full ? '' : ' (a tenth of full size: --full)';
    const mb = (v) => `${v} MiB`;
    row(`batch --dry-run, ${s.dryRows.toLocaleString('en')} rows: peak RSS${size}`, mb(s.dryPeakRssMb), '< 150 MiB at 1,000,000', s.dryPeakRssMb < 150);
    row(`batch, ${s.runRows.toLocaleString('en')} rows, concurrency ${s.concurrency}, a server answering at once: peak RSS`, mb(s.runPeakRssMb), '< 200 MiB at 200,000', s.runPeakRssMb < 200);
    row('  rows per second, first request to exit', `${s.rowsPerSecond}/s (client CPU ${s.cpuMsPerRow.toFixed(2)} ms per row)`, '≥ 2,000/s', s.rowsPerSecond >= 2000);
    row(`batch resumed over a ${s.manifestLines.toLocaleString('en')}-line manifest: start to first request`, `${s.resumeToFirstRequestSeconds.toFixed(2)} s (peak RSS ${mb(s.resumePeakRssMb)})`, '< 3 s at 200,000 rows', s.resumeToFirstRequestSeconds < 3);
  } catch (error) {
    row('batch scale', `not measured: ${error.message}`, '', false);
  }
}

if (wanted('history')) {
  try {
    const { benchHistory } = await import('./history.mjs');
    const h = await benchHistory({ full });
    results.history = h;
    const mb = (v) => `${v} MiB`;
    const l = h.list;
    row(`list --all --json, ${l.images.toLocaleString('en')} images (every record checked): peak RSS`, `${mb(l.peakRssMb)} (${l.seconds.toFixed(1)} s, ${l.requests} requests)`, '< 200 MiB at 1,000,000', l.peakRssMb < 200);
    const [small, large] = h.exports;
    const size = full ? '' : ' (a tenth of full size: --full)';
    row(`export, ${small.images.toLocaleString('en')} images: peak RSS${size}`, `${mb(small.peakRssMb)} (${small.seconds.toFixed(0)} s)`, '');
    row(`export, ${large.images.toLocaleString('en')} images: peak RSS`, `${mb(large.peakRssMb)} (${large.seconds.toFixed(0)} s)`, 'flat: ≤ 1.2× the tenth', large.peakRssMb <= 1.2 * small.peakRssMb);
  } catch (error) {
    row('history', `not measured: ${error.message}`, '', false);
  }
}

if (wanted('peers')) {
  // Beside the scripts a user would write, on the Node running this (Node 24 for the goals:
  // `node_modules/.cache/aerial-node-lines/node_modules/node24/bin/node bench/run.mjs peers`).
  try {
    const { benchPeers } = await import('./peers.mjs');
    const p = await benchPeers({ parts: ['list', 'export', 'paced', 'batch'] });
    results.peers = p;
    const s = (v) => `${v.toFixed(2)} s`;
    row(`Node ${p.node}, load ${p.load.before[0]} → ${p.load.after[0]}: medians of ${p.runs} alternated runs`, '', '');
    const l = p.list;
    row(`  list --all --json, ${l.images.toLocaleString('en')} records, against a bare fetch loop`, `${s(l.aerialSeconds)} / ${s(l.peerSeconds)} = ${x(l.ratio)} (CPU ${x(l.cpuRatio)})`, '≤ 1.25×', l.ratio <= 1.25);
    const e = p.export;
    row(`  export of ${e.images.toLocaleString('en')} JPEGs (${e.imageKb} KB) with its report, against a download script`, `${s(e.aerialSeconds)} / ${s(e.peerSeconds)} = ${x(e.ratio)}`, '≤ 2.0×', e.ratio <= 2);
    row('  export --no-report, against the same script', `${s(e.noReportSeconds)} / ${s(e.peerSeconds)} = ${x(e.noReportRatio)}`, '≤ 1.3×', e.noReportRatio <= 1.3);
    row('  … the thumbnails alone (sharp, nothing else running), against the same script', `${s(e.thumbnailsAloneSeconds)} / ${s(e.peerSeconds)} = ${x(e.thumbnailsAloneSeconds / e.peerSeconds)}`, '');
    const paced = p.exportPaced;
    row(`  export with its report, every download ${paced.imageLatencyMs} ms to its first byte, against the script`, `${s(paced.aerialSeconds)} / ${s(paced.peerSeconds)} = ${x(paced.ratio)}`, '');
    const b = p.batch;
    row(`  batch ${b.rows} rows at ${b.concurrency}, against an undici script: first request to exit`, `${s(b.aerialRunSeconds)} / ${s(b.undiciRunSeconds)} = ${x(b.ratio)}`, '≤ 1.1×', b.ratio <= 1.1);
  } catch (error) {
    row('peers', `not measured: ${error.message}`, '', false);
  }
}

if (wanted('listener')) {
  try {
    const { benchListener } = await import('./listener.mjs');
    const l = await benchListener();
    results.listener = l;
    row('generate (sync, sandbox, HD, median)', ms(l.syncMs), '');
    row('generate-async --listen (same scene, median)', ms(l.endToEndMs), '');
    row('webhook round trip added by --listen', ms(l.roundTripMs), '');
  } catch (error) {
    row('listener', `not measured: ${error.message}`, '', false);
  }
}

const widths = ['figure', 'value', 'goal', 'verdict'].map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ');
console.log(line(['figure', 'value', 'goal', 'verdict']));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line([r.figure, r.value, r.goal, r.verdict]));

results.table = rows;
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log('\nwritten to bench/results.json');
