// The CI examples of docs/ci/ run as their engines would run them: each file
// is parsed with the `yaml` package, its shard commands are run exactly as
// written (through the engine's shell, with the variables the engine sets for
// each copy) as parallel processes against one sandbox that rate-limits the
// account, the shards' files reach the status job as the engine passes them
// on, and the file's own `aerial batch status` command must find every row
// done exactly once, none missing, and count the 429s the sandbox answered.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsBatch, githubActions, gitlabCi, kubernetes, type EngineCommand, type EnginePlan, type Secrets } from '../helpers/ci-engines.js';
import { assertNoSecrets, cliEnv, installAerial, registerSecret, tempDir } from '../helpers/cli.js';
import { API_PATH, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** A few hundred rows: enough for four shards to meet the limit together, few enough to stay quick. */
const ROWS = 200;
/** Requests per second the sandbox allows each account: far below the four shards' --rate 20/s together, even on a busy machine. */
const ACCOUNT_RATE_LIMIT = 25;
/** Few places, so the sandbox draws each once (its render cache) and the test measures the shards, not the drawing. */
const PLACES = [
  [48.8584, 2.2945],
  [40.6892, -74.0445],
  [27.1751, 78.0421],
  [35.6586, 139.7454],
  [-33.8568, 151.2153],
  [51.5007, -0.1246],
];

function placesCsv(): string {
  const lines = ['lat,lng'];
  for (let row = 0; row < ROWS; row++) lines.push(PLACES[row % PLACES.length]!.join(','));
  return `${lines.join('\n')}\n`;
}

const dirs: Array<{ remove(): void }> = [];
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ rateLimit: ACCOUNT_RATE_LIMIT });
});
afterAll(async () => {
  await sandbox?.close();
  while (dirs.length) dirs.pop()!.remove();
});

/** A checkout of the project the examples run in: the batch file at its root. */
function checkout(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'places.csv'), placesCsv());
  return dir;
}

async function run(command: EngineCommand, cwd: string, bin: string, configDir: string) {
  const result = await execa(command.argv[0]!, command.argv.slice(1), {
    cwd,
    // The service is the sandbox: a CI job would reach the public one.
    env: cliEnv(configDir, { ...command.env, AERIAL_BASE_URL: sandbox.url, PATH: `${bin}:${process.env.PATH}` }),
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  const stdout = String(result.stdout);
  const stderr = String(result.stderr);
  assertNoSecrets(stdout, `stdout of ${command.argv.join(' ')}`);
  assertNoSecrets(stderr, `stderr of ${command.argv.join(' ')}`);
  return { exitCode: result.exitCode, stdout, stderr };
}

function filesNamed(dir: string, name: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return filesNamed(path, name);
    return entry === name ? [path] : [];
  });
}

function jpegsUnder(dir: string): number {
  return readdirSync(dir).reduce((count, name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return count + jpegsUnder(path);
    return count + (name.endsWith('.jpg') ? 1 : 0);
  }, 0);
}

const engines: Array<[string, (secrets: Secrets) => EnginePlan]> = [
  ['github-actions.yml', githubActions],
  ['gitlab-ci.yml', gitlabCi],
  ['kubernetes-indexed-job.yaml', kubernetes],
  ['aws-batch-job-definition.json', awsBatch],
];

// The four engines at once, each on an account of its own (its own rate limit): they wait on the limit, not the CPU.
describe.concurrent('docs/ci examples, run as their engines run them', () => {
  for (const [file, engine] of engines) {
    it(`${file}: parallel shards under one rate limit, then batch status finds every row done once and counts the 429s`, async () => {
      const account = await sandbox.createAccount({ credits: ROWS * 4 });
      registerSecret(account.key);
      const plan = engine({ apiKey: account.key });
      expect(plan.shards.length).toBeGreaterThan(1);
      const root = tempDir('aerial-ci-');
      dirs.push(root);
      const bin = installAerial(root.path);
      const volume = plan.layout === 'volume' ? checkout(join(root.path, 'volume')) : undefined;
      const shardDirs = plan.shards.map((_, index) => volume ?? checkout(join(root.path, `runner-${index + 1}`)));

      const shards = await Promise.all(plan.shards.map((command, index) => run(command, shardDirs[index]!, bin, join(root.path, `config-${index + 1}`))));
      for (const [index, shard] of shards.entries()) {
        expect(shard.exitCode, `${plan.name} shard ${index + 1}: ${shard.stderr}`).toBe(0);
      }

      // What the service saw of this account: each row generated once, and the 429s it answered.
      const log = sandbox.requests().filter((entry) => entry.keyId === account.keyId && entry.method === 'POST' && entry.path === API_PATH);
      expect(log.filter((entry) => entry.status === 200)).toHaveLength(ROWS);
      const rateLimited = log.filter((entry) => entry.status === 429).length;
      expect(rateLimited, 'the shards together should have met the account limit').toBeGreaterThan(0);

      let statusDir = volume;
      if (!statusDir) {
        statusDir = checkout(join(root.path, 'status'));
        const artifacts = join(root.path, 'artifacts');
        for (const [index, dir] of shardDirs.entries()) plan.collect!(dir, index, statusDir, artifacts);
      }
      expect(jpegsUnder(statusDir)).toBe(ROWS);

      const status = await run(plan.status, statusDir, bin, join(root.path, 'config-status'));
      expect(status.exitCode, status.stderr).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`^  done +${ROWS}$`, 'm'));
      expect(status.stdout).toMatch(/^ {2}failed +0$/m);
      expect(status.stdout).toMatch(/^ {2}missing +0$/m);
      expect(status.stdout).toMatch(new RegExp(`^  429s +${rateLimited} `, 'm'));
      expect(status.stdout).not.toMatch(/more than once/);

      // The report and the GeoJSON of the whole batch, every row with its image.
      const [geojsonPath] = filesNamed(statusDir, 'places.geojson');
      const geojson = JSON.parse(readFileSync(geojsonPath!, 'utf8'));
      expect(geojson.features).toHaveLength(ROWS);
      for (const feature of geojson.features) {
        expect(feature.properties.status).toBe('done');
        expect(existsSync(join(dirname(geojsonPath!), feature.properties.file)), feature.properties.file).toBe(true);
      }
      const [reportPath] = filesNamed(statusDir, 'report.html');
      expect(readFileSync(reportPath!, 'utf8')).toContain('<html');
      expect(readdirSync(join(dirname(reportPath!), 'report.thumbnails')).filter((name) => name.endsWith('.jpg'))).toHaveLength(ROWS);

      // The same command with --json: the exact account.
      const argv = [...plan.status.argv.slice(0, -1), `${plan.status.argv.at(-1)} --json`];
      const json = await run({ ...plan.status, argv }, statusDir, bin, join(root.path, 'config-status'));
      expect(json.exitCode, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout);
      expect(report).toMatchObject({ total: ROWS, done: ROWS, failed: 0, missing: 0, duplicated: 0, rateLimited, complete: true, unmatchedRecords: 0 });
      expect(report.manifests).toHaveLength(plan.shards.length);
      expect(report.manifests.reduce((sum: number, manifest: { done: number }) => sum + manifest.done, 0)).toBe(ROWS);
    }, 180_000);
  }
});
