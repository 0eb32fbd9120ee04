// docs/ci/slurm-array.sbatch and docs/ci/slurm-status.sbatch, submitted to a
// real Slurm: a one-node cluster on loopback (test/helpers/slurm-cluster.ts).
// The files are submitted as they are, from a directory holding the batch
// file, with `aerial` on the PATH (bin/aerial.js of this checkout) and the
// sandbox as the service; sbatch passes that environment on to the jobs, as it
// passes a user's. The array's tasks get Slurm's own SLURM_ARRAY_TASK_*
// variables, counted from 1, and --shard auto must place each row in exactly
// one of them; the status job, held by --dependency=afterany until every task
// has ended, must find every row done. Skipped where Slurm or munge is not
// installed; CI installs them (AERIAL_TEST_REQUIRE_TOOLS=1).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARD_SOURCES } from '../../src/batch/shard.js';
import { CI_DIR } from '../helpers/ci-engines.js';
import { assertNoSecrets, cliEnv, installAerial, registerSecret, tempDir } from '../helpers/cli.js';
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import { API_PATH, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { slurmAvailable, startSlurmCluster, type SlurmCluster } from '../helpers/slurm-cluster.js';

const ARRAY_JOB = join(CI_DIR, 'slurm-array.sbatch');
const STATUS_JOB = join(CI_DIR, 'slurm-status.sbatch');
/** The array's size, as its #SBATCH --array=1-4 says. */
const TASKS = 4;
const ROWS = 40;

/**
 * Five places, row r at place (r - 1) mod 5: few enough that the sandbox draws
 * each once (its render cache) and the test waits on Slurm and the shards, not
 * on drawing; the service's log then says how often each place was asked for.
 */
const PLACES = ['48.8584,2.2945', '40.6892,-74.0445', '27.1751,78.0421', '35.6586,139.7454', '-33.8568,151.2153'];
const ROW_PLACES = Array.from({ length: ROWS }, (_, i) => PLACES[i % PLACES.length]!);

/** Variables an engine sets, which the test's own runner may have: the jobs should meet only Slurm's. */
const ENGINE_VARIABLE = new Set(['AERIAL_SHARD', ...SHARD_SOURCES.flatMap((source) => [source.index, ...(source.total ? [source.total] : [])])]);

const dirs: Array<{ remove(): void }> = [];
let sandbox: TestSandbox | undefined;
let cluster: SlurmCluster | undefined;

describe.skipIf(!slurmAvailable())('docs/ci Slurm examples, submitted to a one-node Slurm cluster', () => {
  beforeAll(async () => {
    [sandbox, cluster] = await Promise.all([startTestSandbox(), startSlurmCluster()]);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await sandbox?.close();
    while (dirs.length) dirs.pop()!.remove();
  }, 30_000);

  /** A directory every node sees (here the one node), holding the batch file, and `aerial` on the PATH. */
  async function workspace(credits: number) {
    const account = await sandbox!.createAccount({ credits });
    registerSecret(account.key);
    const root = tempDir('aerial-slurm-work-');
    dirs.push(root);
    const bin = installAerial(root.path);
    const work = join(root.path, 'shared');
    mkdirSync(work);
    writeFileSync(join(work, 'places.csv'), `lat,lng\n${ROW_PLACES.join('\n')}\n`);
    const inherited = cliEnv(join(root.path, 'config'));
    for (const name of Object.keys(inherited)) if (name.startsWith('SLURM_') || ENGINE_VARIABLE.has(name)) delete inherited[name];
    const env = { ...inherited, ...cluster!.env, AERIAL_BASE_URL: sandbox!.url, AERIAL_API_KEY: account.key, PATH: `${bin}:${process.env.PATH}` };
    const posts = () => sandbox!.requests().filter((entry) => entry.keyId === account.keyId && entry.method === 'POST' && entry.path === API_PATH);
    return { work, env, posts };
  }

  /** `sbatch --parsable --wait`: the job id as soon as it is queued, and the job's exit code once it has ended. */
  function submit(args: string[], cwd: string, env: Record<string, string | undefined>) {
    const child = execa('sbatch', ['--parsable', '--wait', ...args], { cwd, env, extendEnv: false, reject: false, timeout: 90_000 });
    const id = firstLine(child.stdout!).then((line) => line.split(';')[0]!);
    return { id, done: child };
  }

  /** What a job wrote, checked for the key. */
  function output(dir: string, name: string): string {
    const text = readFileSync(join(dir, name), 'utf8');
    assertNoSecrets(text, name);
    return text;
  }

  /** Every row sent exactly once, and the task with the k-th id of the array (`ids`) did shard k: rows k, k+4, k+8, … */
  function expectEveryRowOnce(work: string, ids: number[], posts: () => RequestLogEntry[]) {
    // What the service saw: each row's place once, and nothing more (every place as often as rows name it).
    const sent = posts();
    expect(sent.map((entry) => entry.status)).toEqual(Array.from({ length: ROWS }, () => 200));
    const placesSent = sent.map((entry) => {
      const { lat, lng } = (entry.body as { coordinates: { lat: number; lng: number } }).coordinates;
      return `${lat},${lng}`;
    });
    expect(placesSent.sort()).toEqual([...ROW_PLACES].sort());

    for (const [k, id] of ids.entries()) {
      const records = readFileSync(join(work, 'manifests', `shard-${id}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { row?: number; status?: string });
      const done = records
        .filter((record) => record.status === 'done')
        .map((record) => record.row!)
        .sort((a, b) => a - b);
      expect(done, `manifests/shard-${id}.jsonl`).toEqual(Array.from({ length: ROWS / ids.length }, (_, i) => k + 1 + i * ids.length));
    }
    expect(readdirSync(join(work, 'out')).filter((name) => name.endsWith('.jpg'))).toHaveLength(ROWS);
  }

  it('the array sends every row once, each task its shard, and the status job after it finds every row done', async () => {
    const { work, env, posts } = await workspace(ROWS * 2);
    const started = Date.now();
    const array = submit([ARRAY_JOB], work, env);
    const arrayId = await array.id;
    // Queued while the array runs: Slurm holds it until every task has ended.
    const status = submit([`--dependency=afterany:${arrayId}`, STATUS_JOB], work, env);
    const [arrayDone, statusDone] = await Promise.all([array.done, status.done]);
    const statusId = await status.id;
    const seconds = (Date.now() - started) / 1000;

    const taskLogs = Array.from({ length: TASKS }, (_, i) => `aerial-batch-${arrayId}_${i + 1}.out`);
    const logs = () => [...taskLogs, `aerial-batch-status-${statusId}.out`].filter((name) => existsSync(join(work, name))).map((name) => `--- ${name}\n${output(work, name)}`).join('\n');
    expect(arrayDone.exitCode, `${arrayDone.stderr}\n${logs()}\n${cluster!.logs()}`).toBe(0);
    for (const name of taskLogs) output(work, name);

    // Task i (SLURM_ARRAY_TASK_ID=i, the array counting from 1) is shard i/4.
    expectEveryRowOnce(work, [1, 2, 3, 4], posts);

    // The status job: its exit code is sbatch's, its account in its output.
    const statusLog = output(work, `aerial-batch-status-${statusId}.out`);
    expect(statusDone.exitCode, `${statusDone.stderr}\n${logs()}`).toBe(0);
    expect(statusLog).toMatch(new RegExp(`^  done +${ROWS}$`, 'm'));
    expect(statusLog).toMatch(/^ {2}failed +0$/m);
    expect(statusLog).toMatch(/^ {2}missing +0$/m);
    expect(statusLog).toMatch(/^ {2}429s +0 /m);
    expect(statusLog).not.toMatch(/more than once/);
    const geojson = JSON.parse(readFileSync(join(work, 'out', 'places.geojson'), 'utf8'));
    expect(geojson.features).toHaveLength(ROWS);
    for (const feature of geojson.features) expect(feature.properties.status).toBe('done');
    expect(readFileSync(join(work, 'out', 'report.html'), 'utf8')).toContain('<html');
    console.log(`Slurm: array of ${TASKS} and status job, ${ROWS} rows, in ${seconds.toFixed(1)} s`);
  }, 90_000);

  it('an array from 10 in steps of 2 is four shards too: ids 10, 12, 14 and 16 take shards 1 to 4', async () => {
    const { work, env, posts } = await workspace(ROWS * 2);
    // Given on the command line, --array overrides the file's #SBATCH --array.
    const array = submit(['--array=10-16:2', ARRAY_JOB], work, env);
    const arrayId = await array.id;
    const done = await array.done;
    const logs = [10, 12, 14, 16].map((id) => output(work, `aerial-batch-${arrayId}_${id}.out`));
    expect(done.exitCode, `${done.stderr}\n${logs.join('\n')}`).toBe(0);
    expectEveryRowOnce(work, [10, 12, 14, 16], posts);
  }, 60_000);

  it('an array with gaps is refused by every task, in one line naming the variables, and nothing is sent', async () => {
    const { work, env, posts } = await workspace(ROWS);
    const array = submit(['--array=1,2,4', ARRAY_JOB], work, env);
    const arrayId = await array.id;
    const done = await array.done;
    expect(done.exitCode, done.stderr).toBe(2);
    for (const task of [1, 2, 4]) {
      const log = output(work, `aerial-batch-${arrayId}_${task}.out`);
      expect(log).toMatch(
        /^error: --shard auto: a Slurm array job's ids are not an evenly spaced range \(SLURM_ARRAY_TASK_ID=\d, SLURM_ARRAY_TASK_COUNT=3, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=4, SLURM_ARRAY_TASK_STEP=1\), so they name no k\/n; submit it as one range/,
      );
      expect(log.trim().split('\n'), log).toHaveLength(1);
    }
    expect(posts()).toHaveLength(0);
    expect(existsSync(join(work, 'manifests'))).toBe(false);
  }, 60_000);
});

function firstLine(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end >= 0) {
        stream.off('data', onData);
        resolve(text.slice(0, end).trim());
      }
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error(`sbatch printed no job id: ${text}`)));
  });
}
