// `aerial batch status` over real shards: batches run against the sandbox,
// their manifests laid out as CI artifacts are, and the account checked
// against what the sandbox saw.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/lifecycle/errors.js';
import { registerSecret, runCli, runPiped, tempDir } from '../helpers/cli.js';
import { API_PATH, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const TEMPLATE = 'out/{row}-{lat}_{lng}.jpg';
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

function workspace(rows: number): string {
  const dir = tempDir('aerial-status-');
  dirs.push(dir);
  const lines = ['lat,lng'];
  for (let row = 0; row < rows; row++) lines.push(row % 2 ? '48.8584,2.2945' : '40.6892,-74.0445');
  writeFileSync(join(dir.path, 'places.csv'), `${lines.join('\n')}\n`);
  return dir.path;
}

/** One shard on a runner of its own (`dir`), its outputs and manifest under out/ as an artifact would hold them. */
function shard(dir: string, spec: string, extra: string[] = []) {
  return runCli(['batch', 'places.csv', '--shard', spec, '--output-template', TEMPLATE, '--resolution', 'HD', '--max-retries', '0', ...extra], {
    configDir: dir,
    cwd: dir,
    env: sandbox.env(),
  });
}

function runner(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  cpSync(join(root, 'places.csv'), join(dir, 'places.csv'));
  return dir;
}

/** As download-artifact lays them out: each runner's out/ in a directory of its name. */
function download(root: string, runners: string[]): void {
  for (const name of runners) cpSync(join(root, name, 'out'), join(root, 'artifacts', name), { recursive: true });
}

function status(root: string, args: string[] = ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl']) {
  return runCli(['batch', 'status', 'places.csv', '--output-template', TEMPLATE, '--resolution', 'HD', ...args], { configDir: root, cwd: root, env: sandbox.env() });
}

describe('aerial batch status', () => {
  it('tells failed and missing rows of shards on separate runners, then all done once they are re-run', async () => {
    const root = workspace(16);
    const runners = ['shard-1', 'shard-2', 'shard-3', 'shard-4'].map((name) => runner(root, name));
    // Shard 2 meets generation failures; shard 4 never runs.
    expect((await shard(runners[0]!, '1/4')).exitCode).toBe(0);
    sandbox.setFaults({ failRate: 1 });
    expect((await shard(runners[1]!, '2/4')).exitCode).toBe(ExitCode.Server);
    sandbox.setFaults({ failRate: 0 });
    expect((await shard(runners[2]!, '3/4')).exitCode).toBe(0);
    download(root, ['shard-1', 'shard-2', 'shard-3']);

    const human = await status(root);
    expect(human.exitCode).toBe(ExitCode.Server);
    expect(human.stdout).toMatch(/^ {2}done +8$/m);
    expect(human.stdout).toMatch(/^ {2}failed +4$/m);
    expect(human.stdout).toMatch(/^ {2}missing +4$/m);
    expect(human.stdout).toContain('  row 2: ErrorGeneratingImage: ');
    expect(human.stdout).toContain('(artifacts/shard-2/aerial-batch-manifest.jsonl)');
    expect(human.stdout).toContain('Missing: rows 4, 8, 12, 16\n');
    expect(human.stdout).toContain('No manifest of shard 4/4: its rows 4, 8, 12, 16 are missing\n');
    expect(human.stderr).toBe(
      `Planned as the manifests record: --output-template ${TEMPLATE} --resolution HD; 4 shards\nerror: BatchIncomplete — 8 of 16 rows not done (4 failed, 4 missing); re-run the shards that did not finish (each resumes from its manifest)\n`,
    );

    const json = await status(root, ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl', '--json']);
    expect(json.exitCode).toBe(ExitCode.Server);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ total: 16, done: 8, failed: 4, missing: 4, duplicated: 0, complete: false, missingRows: [4, 8, 12, 16], inFlightRows: [] });
    expect(report).toMatchObject({ planFrom: 'manifests', shards: { count: 4, missing: [4] } });
    expect(report.failedRows.map((row: { row: number; exitCode: number; manifest: string }) => [row.row, row.exitCode, row.manifest])).toEqual(
      [2, 6, 10, 14].map((row) => [row, ExitCode.Server, 'artifacts/shard-2/aerial-batch-manifest.jsonl']),
    );
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'BatchIncomplete', exitCode: ExitCode.Server });

    // The report and the GeoJSON of the whole batch say the same, row by row, with the images found in the artifacts.
    const outputs = await status(root, ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl', '--report', 'report/batch.html', '--geojson', 'report/batch.geojson']);
    expect(outputs.exitCode).toBe(ExitCode.Server);
    expect(outputs.stderr).toContain('Report: report/batch.html\n');
    const features = JSON.parse(readFileSync(join(root, 'report', 'batch.geojson'), 'utf8')).features as Array<{ properties: Record<string, unknown> }>;
    const states = features.map(({ properties }) => [properties.row, properties.status, properties.error === null ? null : String(properties.error).split(':')[0]]);
    expect(states).toEqual(
      Array.from({ length: 16 }, (_, index) => {
        const row = index + 1;
        if (row % 4 === 2) return [row, 'failed', 'ErrorGeneratingImage'];
        if (row % 4 === 0) return [row, 'skipped', 'missing'];
        return [row, 'done', null];
      }),
    );
    for (const { properties } of features.filter(({ properties }) => properties.status === 'done')) {
      expect(String(properties.file)).toMatch(/^\.\.\/artifacts\/shard-[13]\/\d+-/);
      expect(existsSync(join(root, 'report', String(properties.file)))).toBe(true);
    }
    const html = readFileSync(join(root, 'report', 'batch.html'), 'utf8');
    expect(html).toContain('missing: no shard finished it');
    expect(readdirSync(join(root, 'report', 'batch.thumbnails')).filter((name) => name.endsWith('.jpg'))).toHaveLength(8);

    // The failed shard re-run on its runner resumes; the missing one runs; their new artifacts replace the old.
    sandbox.clearRequests();
    expect((await shard(runners[1]!, '2/4')).exitCode).toBe(0);
    expect((await shard(runners[3]!, '4/4')).exitCode).toBe(0);
    expect(sandbox.requests().filter((entry) => entry.path === API_PATH && entry.status === 200)).toHaveLength(8);
    download(root, ['shard-2', 'shard-4']);
    const done = await status(root);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^ {2}done +16$/m);
    expect(done.stdout).toMatch(/^ {2}missing +0$/m);

    // An artifact downloaded twice, or shards that overlap: each row counted once, and named.
    cpSync(join(root, 'artifacts', 'shard-1'), join(root, 'artifacts', 'shard-1-again'), { recursive: true });
    const twice = await status(root, ['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl', '--json']);
    expect(twice.exitCode).toBe(0);
    expect(JSON.parse(twice.stdout)).toMatchObject({ done: 16, duplicated: 4, complete: true });
    expect(JSON.parse(twice.stdout).duplicatedRows[0]).toEqual({ row: 1, manifests: ['artifacts/shard-1-again/aerial-batch-manifest.jsonl', 'artifacts/shard-1/aerial-batch-manifest.jsonl'] });
    // The same file named twice (a glob and a path) is read once.
    const once = await status(root, ['--manifest', 'artifacts/shard-1/aerial-batch-manifest.jsonl', '--manifest', 'artifacts/shard-[1234]/*.jsonl', '--json']);
    expect(JSON.parse(once.stdout)).toMatchObject({ done: 16, duplicated: 0 });
    expect(JSON.parse(once.stdout).manifests).toHaveLength(4);
  }, 60_000);

  it('reads manifests kept apart from the images, under one name in several directories', async () => {
    const root = workspace(6);
    const [a, b] = [runner(root, 'a'), runner(root, 'b')];
    for (const [dir, spec] of [[a, '1/2'], [b, '2/2']] as const) {
      expect((await shard(dir, spec, ['--manifest', 'manifests/m.jsonl'])).exitCode).toBe(0);
      cpSync(join(dir, 'manifests'), join(root, 'downloads', spec.replace('/', '-of-')), { recursive: true });
    }
    const result = await status(root, ['--manifest', 'downloads/**/m.jsonl']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}done +6$/m);
    // Several paths after one --manifest, as an unquoted glob expands to, with more flags after them.
    const paths = ['downloads/1-of-2/m.jsonl', 'downloads/2-of-2/m.jsonl'];
    for (const args of [['--manifest', ...paths, '--json'], ['--manifest', paths[0]!, '--manifest', paths[1]!, '--json']]) {
      const several = await status(root, args);
      expect(several.exitCode, several.stderr).toBe(0);
      expect(JSON.parse(several.stdout)).toMatchObject({ done: 6, complete: true, manifests: [{ path: paths[0], done: 3 }, { path: paths[1], done: 3 }] });
    }
  }, 30_000);

  it('warns that records match no row when status is not given the flags the shards used, for manifests that do not record them', async () => {
    const root = workspace(4);
    expect((await shard(root, '1/1')).exitCode).toBe(0);
    // As a manifest written before the plan record was.
    const manifest = join(root, 'out', 'aerial-batch-manifest.jsonl');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/^\{"plan".*\n/m, ''));
    const result = await runCli(['batch', 'status', 'places.csv', '--output-template', TEMPLATE, '--manifest', 'out/aerial-batch-manifest.jsonl'], { configDir: root, cwd: root });
    expect(result.exitCode).toBe(ExitCode.Server);
    expect(result.stdout).toMatch(/^ {2}missing +4$/m);
    expect(result.stderr).toContain('warning: 4 manifest records match no row of places.csv: rows edited since, or shards run with other flags; give status the --output-template and scene flags the shards used');
  }, 30_000);

  it('refuses, with exit 2, manifests it cannot find, and a second batch file', async () => {
    const root = workspace(2);
    mkdirSync(join(root, 'empty'));
    const cases: Array<[string[], string]> = [
      [['--manifest', 'artifacts/*/aerial-batch-manifest.jsonl'], 'error: --manifest artifacts/*/aerial-batch-manifest.jsonl matches no file\n'],
      [['--manifest', 'nowhere.jsonl'], 'error: --manifest nowhere.jsonl: no such file\n'],
      [['--manifest', 'empty'], 'error: --manifest empty is a directory; name the manifest file, or a glob such as dir/**/*.jsonl\n'],
      [[], "error: no manifest at out/aerial-batch-manifest.jsonl (the batch's default place); give the shards' manifests with --manifest <path or glob>\n"],
      [['--manifest', 'empty', 'nowhere.jsonl'], 'error: --manifest empty is a directory; name the manifest file, or a glob such as dir/**/*.jsonl\n'],
      [['other.csv', '--manifest', 'a.jsonl'], 'error: batch status takes one batch file; got 2 (places.csv other.csv): give the batch file first, then --manifest and its paths or globs\n'],
    ];
    for (const [args, message] of cases) {
      const result = await status(root, args);
      expect(result.exitCode, args.join(' ')).toBe(ExitCode.Usage);
      expect(result.stderr).toBe(message);
      expect(result.stdout).toBe('');
    }
    // batch itself writes one manifest.
    const batch = await runCli(['batch', 'places.csv', '--manifest', 'a.jsonl', '--manifest', 'b.jsonl', '--sandbox'], { configDir: root, cwd: root });
    expect(batch.exitCode).toBe(ExitCode.Usage);
    expect(batch.stderr).toBe('error: --manifest: a batch writes one manifest; got 2 (a.jsonl b.jsonl): give the batch file before --manifest (`aerial batch status` reads several)\n');
  }, 30_000);

  it('writes its whole --json account to a slow reader, byte for byte as to a file', async () => {
    const root = workspace(20_000);
    // A manifest of one row: every other row is missing, and listed.
    mkdirSync(join(root, 'out'));
    writeFileSync(join(root, 'out', 'aerial-batch-manifest.jsonl'), '{"row":1,"key":"00","status":"done","file":"x.jpg"}\n');
    const args = ['batch', 'status', 'places.csv', '--output-template', TEMPLATE, '--json'];
    const piped = await runPiped(args, { configDir: root, cwd: root, startAfterMs: 1000, pauseMs: 2 });
    expect(piped.exitCode).toBe(ExitCode.Server);
    const toFile = join(root, 'status.json');
    const direct = await runCli(args, { configDir: root, cwd: root });
    writeFileSync(toFile, direct.stdout);
    expect(piped.stdout.length).toBeGreaterThan(100_000);
    expect(piped.stdout.equals(readFileSync(toFile))).toBe(true);
    expect(JSON.parse(piped.stdout.toString()).missingRows).toHaveLength(20_000);
  }, 60_000);
});
