// `aerial batch status` from manifests that record what their rows were
// planned from: shards run against the sandbox on runners of their own, and
// status given the manifests (and perhaps the batch file) but none of the
// shards' flags, in a directory with a config of its own.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/lifecycle/errors.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { API_PATH, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const dirs: Array<{ remove(): void }> = [];
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
  registerSecret(sandbox.key);
});
afterAll(async () => {
  await sandbox?.close();
  while (dirs.length) dirs.pop()!.remove();
});

const PLACES = ['lat,lng', '48.8584,2.2945', '40.6892,-74.0445', '51.5007,-0.1246', '35.6586,139.7454', '-33.8568,151.2153', '27.1751,78.0421', '41.8902,12.4922'];

function workspace(rows = 3): string {
  const dir = tempDir('aerial-status-record-');
  dirs.push(dir);
  writeFileSync(join(dir.path, 'places.csv'), `${PLACES.slice(0, rows + 1).join('\n')}\n`);
  return dir.path;
}

function runner(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  cpSync(join(root, 'places.csv'), join(dir, 'places.csv'));
  return dir;
}

function batch(dir: string, args: string[]) {
  return runCli(['batch', 'places.csv', '--max-retries', '0', ...args], { configDir: join(dir, 'config'), cwd: dir, env: sandbox.env() });
}

/** status where the artifacts were downloaded: its own config, no API key (it sends nothing). */
function status(root: string, args: string[]) {
  return runCli(['batch', 'status', ...args], { configDir: join(root, 'status-config'), cwd: root });
}

/** As download-artifact lays them out: each runner's out/ in a directory of its name. */
function download(root: string, runners: string[]): void {
  for (const name of runners) cpSync(join(root, name, 'out'), join(root, 'artifacts', name), { recursive: true });
}

function sentRows(): number {
  return sandbox.requests().filter((entry) => entry.path === API_PATH && entry.status === 200).length;
}

describe('batch status from the manifests\' own record', () => {
  it('gives the true account of a batch run with flags, given only the batch file and the manifest', async () => {
    const root = workspace(3);
    const run = await batch(root, ['--resolution', 'HD', '--output-template', 'out/{row}.jpg']);
    expect(run.exitCode, run.stderr).toBe(0);
    const text = readFileSync(join(root, 'out', 'aerial-batch-manifest.jsonl'), 'utf8');
    expect(text).not.toContain(sandbox.key);
    const plan = JSON.parse(text.split('\n')[0]!);
    expect(plan).toMatchObject({
      plan: 1,
      batch: { path: 'places.csv', rows: 3, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      settings: { outputTemplate: 'out/{row}.jpg', format: 'csv', delimiter: ',', scene: { resolution: 'HD' }, sceneDefaults: { zoom: 'Medium' } },
    });
    expect(plan.shard).toBeUndefined();

    // The example: no flags, the batch file and the manifest.
    const result = await status(root, ['places.csv', '--manifest', 'out/aerial-batch-manifest.jsonl']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}done +3$/m);
    expect(result.stdout).toMatch(/^ {2}missing +0$/m);
    expect(result.stderr).toBe('Planned as the manifests record: --output-template out/{row}.jpg --resolution HD\n');
    // Not even the batch file: the one the manifest records, checked by its digest.
    const bare = await status(root, ['--manifest', 'out/*.jsonl', '--json']);
    expect(bare.exitCode, bare.stderr).toBe(0);
    expect(JSON.parse(bare.stdout)).toMatchObject({ file: 'places.csv', total: 3, done: 3, complete: true, planFrom: 'manifests', unmatchedRecords: 0 });

    // Flags that agree with the record are taken; one that contradicts it is refused, named.
    const agreeing = await status(root, ['--manifest', 'out/*.jsonl', '--resolution', 'hd', '--output-template', 'out/{row}.jpg', '--format', 'csv']);
    expect(agreeing.exitCode, agreeing.stderr).toBe(0);
    const cases: Array<[string[], string]> = [
      [['--resolution', 'UHD'], 'error: --resolution UHD contradicts the manifests, whose shards ran with --resolution HD; leave it out: status plans the rows as the manifests record\n'],
      [['--zoom', 'High'], 'error: --zoom High contradicts the manifests, whose shards ran with --zoom Medium; leave it out: status plans the rows as the manifests record\n'],
      [['--output-template', 'out/{row}-{lat}.jpg'], 'error: --output-template out/{row}-{lat}.jpg contradicts the manifests, whose shards ran with --output-template out/{row}.jpg; leave it out: status plans the rows as the manifests record\n'],
      [['--delimiter', ';'], "error: --delimiter ; contradicts the manifests, whose shards ran with --delimiter ','; leave it out: status plans the rows as the manifests record\n"],
    ];
    for (const [args, message] of cases) {
      const refused = await status(root, ['places.csv', '--manifest', 'out/*.jsonl', ...args]);
      expect(refused.exitCode, args.join(' ')).toBe(ExitCode.Usage);
      expect(refused.stderr).toBe(message);
      expect(refused.stdout).toBe('');
    }

    // A re-run with nothing to do, and one that resumes, write no second record of the same plan.
    rmSync(join(root, 'out', '2.jpg'));
    expect((await batch(root, ['--resolution', 'HD', '--output-template', 'out/{row}.jpg'])).exitCode).toBe(0);
    expect(readFileSync(join(root, 'out', 'aerial-batch-manifest.jsonl'), 'utf8').match(/^\{"plan"/gm)).toHaveLength(1);
  }, 60_000);

  it('accounts for shards on separate runners from their manifests alone, and names the rows of a missing one', async () => {
    const root = workspace(7);
    const runners = ['shard-1', 'shard-2', 'shard-3'].map((name) => runner(root, name));
    sandbox.clearRequests();
    for (const [index, dir] of runners.entries()) {
      // The runners' config sets a default the status job's does not have: the record carries it.
      expect((await runCli(['config', 'set', 'defaults.zoom', 'High'], { configDir: join(dir, 'config'), cwd: dir })).exitCode).toBe(0);
      const run = await batch(dir, ['--shard', `${index + 1}/3`, '--resolution', 'HD', '--weather', 'Cloudy', '--output-template', 'out/{row}-{lat}_{lng}.jpg']);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    expect(sentRows()).toBe(7);
    download(root, ['shard-1', 'shard-2', 'shard-3']);

    const all = await status(root, ['places.csv', '--manifest', 'artifacts/*/aerial-batch-manifest.jsonl']);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/^ {2}done +7$/m);
    expect(all.stderr).toBe('Planned as the manifests record: --output-template out/{row}-{lat}_{lng}.jpg --resolution HD --weather Cloudy; 3 shards\n');
    // Given the flags alone, with this config, it would not have been: the zoom came from the runners' config.
    const byFlags = await runCli(
      ['batch', 'status', 'places.csv', '--manifest', 'artifacts/shard-1/aerial-batch-manifest.jsonl', '--resolution', 'HD', '--weather', 'Cloudy', '--output-template', 'out/{row}-{lat}_{lng}.jpg', '--json'],
      { configDir: join(root, 'status-config'), cwd: root },
    );
    expect(JSON.parse(byFlags.stdout)).toMatchObject({ done: 3, missing: 4 });

    // Shard 2's artifact never arrived: its rows are named, and the exit code is that of missing rows.
    rmSync(join(root, 'artifacts', 'shard-2'), { recursive: true });
    const missing = await status(root, ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl']);
    expect(missing.exitCode).toBe(ExitCode.Server);
    expect(missing.stdout).toMatch(/^ {2}done +5$/m);
    expect(missing.stdout).toMatch(/^ {2}missing +2$/m);
    expect(missing.stdout).toContain('Missing: rows 2, 5\n');
    expect(missing.stdout).toContain('No manifest of shard 2/3: its rows 2, 5 are missing\n');
    expect(missing.stderr).toContain('error: BatchIncomplete — 2 of 7 rows not done (2 missing); re-run the shards that did not finish (each resumes from its manifest)\n');
    const json = await status(root, ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl', '--json']);
    expect(json.exitCode).toBe(ExitCode.Server);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: 7, done: 5, missing: 2, missingRows: [2, 5], shards: { count: 3, missing: [2] }, unmatchedRecords: 0 });
  }, 60_000);

  it('reads one manifest that several shards shared, each shard recorded in it', async () => {
    const root = workspace(5);
    for (const spec of ['1/3', '3/3']) {
      const run = await batch(root, ['--shard', spec, '--zoom', 'Low', '--output-template', 'out/{row}.jpg']);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    const text = readFileSync(join(root, 'out', 'aerial-batch-manifest.jsonl'), 'utf8');
    expect(text.match(/^\{"plan"/gm)).toHaveLength(2);
    const partial = await status(root, ['--manifest', 'out/aerial-batch-manifest.jsonl', '--json']);
    expect(partial.exitCode).toBe(ExitCode.Server);
    expect(JSON.parse(partial.stdout)).toMatchObject({ done: 3, missingRows: [2, 5], shards: { count: 3, missing: [2] } });
    expect((await batch(root, ['--shard', '2/3', '--zoom', 'Low', '--output-template', 'out/{row}.jpg'])).exitCode).toBe(0);
    // Without --manifest, --output-template says where the batch's own manifest is; it agrees with the record.
    const whole = await status(root, ['--output-template', 'out/{row}.jpg', '--json']);
    expect(whole.exitCode, whole.stderr).toBe(0);
    expect(JSON.parse(whole.stdout)).toMatchObject({ total: 5, done: 5, shards: { count: 3, missing: [] } });
  }, 60_000);

  it('refuses, naming them, a batch file that is not the one the shards ran, and shards that ran with different settings', async () => {
    const root = workspace(4);
    const [a, b] = [runner(root, 'a'), runner(root, 'b')];
    expect((await batch(a, ['--shard', '1/2', '--resolution', 'HD', '--output-template', 'out/{row}.jpg'])).exitCode).toBe(0);
    expect((await batch(b, ['--shard', '2/2', '--resolution', 'UHD', '--output-template', 'out/{row}.jpg'])).exitCode).toBe(0);
    download(root, ['a', 'b']);

    const differing = await status(root, ['places.csv', '--manifest', 'artifacts/*/aerial-batch-manifest.jsonl']);
    expect(differing.exitCode).toBe(ExitCode.Usage);
    expect(differing.stdout).toBe('');
    expect(differing.stderr).toBe(
      "error: the manifests record different settings: artifacts/b/aerial-batch-manifest.jsonl (shard 2/2) ran with --resolution UHD, artifacts/a/aerial-batch-manifest.jsonl (shard 1/2) with --resolution HD; status accounts for one batch: re-run the odd shard with the others' settings, or give status only the manifests of one batch\n",
    );

    // One runner's manifest alone is one batch; the batch file here has been edited since.
    writeFileSync(join(root, 'places.csv'), `${PLACES.slice(0, 5).join('\n')}\n${PLACES[5]}\n`);
    const edited = await status(root, ['places.csv', '--manifest', 'artifacts/a/aerial-batch-manifest.jsonl']);
    expect(edited.exitCode).toBe(ExitCode.Usage);
    expect(edited.stdout).toBe('');
    expect(edited.stderr).toMatch(
      /^error: places\.csv is not the batch file the shards ran: its sha256 is [0-9a-f]{12}…, the manifests record [0-9a-f]{12}… \(places\.csv, 4 rows\); give status the file the shards ran\n$/,
    );
    // Without a batch file status reads the recorded path, and checks it alike.
    const recordedPath = await status(root, ['--manifest', 'artifacts/a/aerial-batch-manifest.jsonl']);
    expect(recordedPath.exitCode).toBe(ExitCode.Usage);
    expect(recordedPath.stderr).toContain('error: places.csv is not the batch file the shards ran');
    // Where the recorded path leads nowhere, status says whose path it was.
    const elsewhere = await runCli(['batch', 'status', '--manifest', 'a/aerial-batch-manifest.jsonl'], { configDir: join(root, 'status-config'), cwd: join(root, 'artifacts') });
    expect(elsewhere.exitCode).toBe(ExitCode.Usage);
    expect(elsewhere.stderr).toBe('error: batch file places.csv does not exist (the path the manifests record); give status the batch file the shards ran\n');
    // The runner's copy is the one.
    const right = await status(root, ['a/places.csv', '--manifest', 'artifacts/a/aerial-batch-manifest.jsonl', '--json']);
    expect(right.exitCode).toBe(ExitCode.Server);
    expect(JSON.parse(right.stdout)).toMatchObject({ total: 4, done: 2, missingRows: [2, 4], shards: { count: 2, missing: [2] } });
  }, 60_000);

  it('reads a manifest written before the record, with the flags, as it always did', async () => {
    const root = workspace(3);
    // Written by aerial before manifests recorded their plan: `aerial batch places.csv --resolution HD --output-template 'out/{row}.jpg'`.
    mkdirSync(join(root, 'out'));
    writeFileSync(
      join(root, 'out', 'aerial-batch-manifest.jsonl'),
      [
        '{"row":1,"key":"f39b11f256fd4aa744190da8bfa042e5","status":"started","file":"1.jpg","time":"2026-11-27T00:19:27.276Z"}',
        '{"row":2,"key":"2e0273e7cc8e0532d9a70efa4b78d051","status":"started","file":"2.jpg","time":"2026-11-27T00:19:27.280Z"}',
        '{"row":3,"key":"f37b66011dd5a2b109691b7fe7621079","status":"started","file":"3.jpg","time":"2026-11-27T00:19:27.280Z"}',
        '{"row":2,"key":"2e0273e7cc8e0532d9a70efa4b78d051","status":"done","file":"2.jpg","bytes":62857,"attempts":1,"input":"876ad4d57d6c1d09d319219f4dbeda5a","time":"2026-11-27T00:19:27.898Z"}',
        '{"row":1,"key":"f39b11f256fd4aa744190da8bfa042e5","status":"done","file":"1.jpg","bytes":242716,"attempts":1,"input":"5108f68d8b7086cfda29ba1017e28870","time":"2026-11-27T00:19:27.915Z"}',
        '{"row":3,"key":"f37b66011dd5a2b109691b7fe7621079","status":"done","file":"3.jpg","bytes":328837,"attempts":1,"input":"5fa5b6d60e4de32cb4b310bfefdfd2b0","time":"2026-11-27T00:19:28.311Z"}',
        '',
      ].join('\n'),
    );
    writeFileSync(join(root, 'places.csv'), 'lat,lng\n48.85,2.29\n40.68,-74.04\n51.5,-0.12\n');
    const withFlags = await status(root, ['places.csv', '--manifest', 'out/aerial-batch-manifest.jsonl', '--resolution', 'HD', '--output-template', 'out/{row}.jpg']);
    expect(withFlags.exitCode, withFlags.stderr).toBe(0);
    expect(withFlags.stdout).toMatch(/^ {2}done +3$/m);
    expect(withFlags.stderr).toBe('');
    const json = await status(root, ['places.csv', '--manifest', 'out/aerial-batch-manifest.jsonl', '--resolution', 'HD', '--output-template', 'out/{row}.jpg', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ done: 3, planFrom: 'flags' });
    expect(JSON.parse(json.stdout).shards).toBeUndefined();
    // Without the flags, the old account and its warning.
    const without = await status(root, ['places.csv', '--manifest', 'out/aerial-batch-manifest.jsonl']);
    expect(without.exitCode).toBe(ExitCode.Server);
    expect(without.stdout).toMatch(/^ {2}missing +3$/m);
    expect(without.stderr).toContain('give status the --output-template and scene flags the shards used');
    // A plan record of a later format is left aside, said once, and the manifest read as one without it.
    const manifest = join(root, 'out', 'aerial-batch-manifest.jsonl');
    const old = readFileSync(manifest, 'utf8');
    writeFileSync(join(root, 'out', 'later.jsonl'), `{"plan":2,"aerial":"9.0.0","batch":{"digest":"blake3:00"}}\n${old}`);
    const later = await status(root, ['places.csv', '--manifest', 'out/later.jsonl', '--resolution', 'HD', '--output-template', 'out/{row}.jpg']);
    expect(later.exitCode, later.stderr).toBe(0);
    expect(later.stdout).toMatch(/^ {2}done +3$/m);
    expect(later.stderr).toBe('warning: out/later.jsonl: its plan record is left aside: it is in plan format 2, newer than this aerial reads (1); upgrade aerial\n');
    // So is one whose settings plan no row (a value hand-edited in).
    const unplannable = { plan: 1, aerial: '0.1.0', batch: { path: 'places.csv', sha256: '0'.repeat(64), rows: 3 }, settings: { outputTemplate: 'out/{row}.jpg', format: 'csv', scene: { resolution: 'XX' }, sceneDefaults: {} } };
    writeFileSync(join(root, 'out', 'edited.jsonl'), `${JSON.stringify(unplannable)}\n${old}`);
    const edited = await status(root, ['places.csv', '--manifest', 'out/edited.jsonl', '--resolution', 'HD', '--output-template', 'out/{row}.jpg']);
    expect(edited.exitCode, edited.stderr).toBe(0);
    expect(edited.stderr).toMatch(/^warning: out\/edited\.jsonl: its plan record is left aside: its settings do not plan a row: --resolution must be one of HD, FHD, UHD; got 'XX'/);
    // Without the batch file: nothing says which it was.
    const noFile = await status(root, ['--manifest', 'out/aerial-batch-manifest.jsonl']);
    expect(noFile.exitCode).toBe(ExitCode.Usage);
    expect(noFile.stderr).toBe('error: give status the batch file the shards ran: no manifest records it (written before manifests recorded their plan)\n');
    // A run of the new version over it resumes, and adds its record: status needs no flags from then on.
    const resumed = await batch(root, ['--resolution', 'HD', '--output-template', 'out/{row}.jpg', '--force']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect((await status(root, ['--manifest', 'out/aerial-batch-manifest.jsonl'])).exitCode).toBe(0);
  }, 60_000);

  it('says that a batch read from standard input must be given to status', async () => {
    const root = workspace(2);
    const run = await runCli(['batch', '-', '--output-template', 'out/{row}.jpg'], { configDir: join(root, 'config'), cwd: root, env: sandbox.env(), input: readFileSync(join(root, 'places.csv')) });
    expect(run.exitCode, run.stderr).toBe(0);
    const bare = await status(root, ['--manifest', 'out/aerial-batch-manifest.jsonl']);
    expect(bare.exitCode).toBe(ExitCode.Usage);
    expect(bare.stderr).toBe('error: the shards read their batch file from standard input; give it to status: aerial batch status <file> --manifest …\n');
    const given = await status(root, ['places.csv', '--manifest', 'out/aerial-batch-manifest.jsonl']);
    expect(given.exitCode, given.stderr).toBe(0);
    expect(given.stdout).toMatch(/^ {2}done +2$/m);
  }, 30_000);
});
