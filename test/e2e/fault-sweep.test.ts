// Every command under every fault the file-system fault injector makes
// (test/helpers/fs-faults.cjs: ENOSPC, EACCES, EROFS, EIO, ENOENT, and a call
// stuck in Node's thread pool), from the first call and part way through:
// each run ends with a documented exit code, never 1 ("unexpected", for bugs),
// and says what happened in one line. A stuck call is ended by the first
// SIGTERM within 3 s. bin/aerial.js runs against the sandbox; the faults
// strike the paths under the run's own directory (its outputs and inputs, or
// its config directory), never the sandbox's.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertNoSecrets, BIN, cliEnv, runCli, stderrSoFar, tempDir, until } from '../helpers/cli.js';
import { FS_FAULTS, injectFsFault, type FsFault } from '../helpers/fs-faults.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
useSandboxPerFile((started, tempHome) => {
  sandbox = started;
  home = tempHome;
});

/** The exit codes docs/contract.md names: everything but 1. */
const NAMED = new Set([0, 2, 3, 4, 5, 6, 7, 8, 130, 141]);
const SCENE = ['--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD'];
const isNode20 = Number(process.versions.node.split('.')[0]) === 20;

/** What the runs share: a config file, an image on disk, images in the account's history. */
let configFile: string;
let image: string;
let imageId: string;
let scratch: string;

beforeAll(async () => {
  scratch = join(home.path, 'scratch');
  mkdirSync(scratch);
  const config = join(home.path, 'config');
  mkdirSync(config);
  expect((await runCli(['config', 'set', 'defaults.zoom', 'High'], { configDir: config })).exitCode).toBe(0);
  configFile = join(config, 'config.json');
  image = join(home.path, 'seed.jpg');
  const seeded = await runCli(['generate', ...SCENE, '-o', image], { configDir: config, env: sandbox.env() });
  expect(seeded.exitCode, seeded.stderr).toBe(0);
  expect((await runCli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', join(home.path, 'seed2.jpg')], { configDir: config, env: sandbox.env() })).exitCode).toBe(0);
  // Deleted by every run of `delete` that gets that far: the sandbox answers 404 from the second on, a named code too.
  imageId = (JSON.parse((await runCli(['list', '--json'], { configDir: config, env: sandbox.env() })).stdout) as { content: Array<{ id: string }> }).content[0]!.id;
}, 60_000);

interface Command {
  name: string;
  /** Where the fault strikes: the run's own files, or its config directory. */
  area: 'work' | 'config';
  args: (work: string) => string[];
  /** Standard input (mcp's requests). */
  input?: string;
  /** Runs until stopped (a server): ended with SIGTERM once it has had its time. */
  serves?: boolean;
}

const mcpSession = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sweep', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'generate_image', arguments: { lat: 3, lng: 4, resolution: 'HD', output: 'tool.jpg' } } },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join('');

const COMMANDS: Command[] = [
  { name: 'generate', area: 'work', args: (work) => ['generate', ...SCENE, '-o', join(work, 'out', 'x.jpg')] },
  { name: 'generate-async --listen', area: 'work', args: (work) => ['generate-async', ...SCENE, '--listen', '-o', join(work, 'out', 'a.jpg')] },
  { name: 'batch', area: 'work', args: (work) => ['batch', join(work, 'rows.csv'), '--resolution', 'HD', '--output-template', join(work, 'out', '{row}.jpg'), '--report', join(work, 'out', 'report.html')] },
  { name: 'export', area: 'work', args: (work) => ['export', join(work, 'export')] },
  { name: 'view', area: 'work', args: (work) => ['view', join(work, 'in.jpg'), '--protocol', 'blocks'] },
  { name: 'mcp', area: 'work', args: (work) => ['mcp', '--output-dir', join(work, 'mcp')], input: mcpSession },
  { name: 'sandbox', area: 'work', args: (work) => ['sandbox', '--port', '0', '--data-dir', join(work, 'sandbox-data')], serves: true },
  { name: 'config set', area: 'config', args: () => ['config', 'set', 'defaults.bearing', 'NE'] },
  { name: 'config list', area: 'config', args: () => ['config', 'list'] },
  { name: 'list', area: 'config', args: () => ['list', '--json'] },
  { name: 'delete', area: 'config', args: () => ['delete', imageId, '--yes', '--json'] },
  { name: 'init', area: 'config', args: () => ['init'] },
  { name: 'completion', area: 'config', args: () => ['completion', 'bash'] },
];

let runCount = 0;

/** A fresh directory for one run: its config (a copy of the shared one) and its work files. */
function prepareRun(): { config: string; work: string } {
  const root = join(home.path, `run-${++runCount}`);
  const config = join(root, 'config');
  const work = join(root, 'work');
  mkdirSync(config, { recursive: true });
  mkdirSync(work);
  copyFileSync(configFile, join(config, 'config.json'));
  copyFileSync(image, join(work, 'in.jpg'));
  writeFileSync(join(work, 'rows.csv'), 'lat,lng\n1,2\n3,4\n5,6\n');
  return { config, work };
}

interface SweepRun {
  exitCode: number | undefined;
  signal?: string;
  stdout: string;
  stderr: string;
  strikes: string[];
  /** From the SIGTERM sent to the end of the process, when one was sent. */
  stoppedInMs?: number;
}

async function runUnderFault(command: Command, fault: FsFault, after: number): Promise<SweepRun> {
  const { config, work } = prepareRun();
  const injected = injectFsFault({ under: command.area === 'work' ? work : config, fault, after, scratch });
  const child = execa('node', [BIN, ...command.args(work)], {
    env: cliEnv(config, { ...sandbox.env(), ...injected.env }),
    extendEnv: false,
    cwd: work,
    reject: false,
    input: command.input,
    stdin: command.input === undefined ? 'ignore' : undefined,
    timeout: 40_000,
    // A kill of execa's own after 5 s would hide a process that ignores the SIGTERM.
    forceKillAfterDelay: false,
  });
  let ended = false;
  void child.finally(() => (ended = true));
  let stoppedAt: number | undefined;
  // A stuck call, or a server that has had its time: the first SIGTERM, once.
  const waitedSince = Date.now();
  while (!ended) {
    const stuck = fault === 'stuck' && injected.strikes().length > 0;
    if (stuck || (command.serves && Date.now() - waitedSince > 3_000)) {
      // Give the stuck call a moment to be the one the command waits for.
      await new Promise((resolve) => setTimeout(resolve, stuck ? 200 : 0));
      stoppedAt = Date.now();
      child.kill('SIGTERM');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const result = await child;
  const stdout = String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  assertNoSecrets(stdout + stderr, `aerial ${command.name} under ${fault}`);
  return { exitCode: result.exitCode, signal: result.signal, stdout, stderr, strikes: injected.strikes(), stoppedInMs: stoppedAt === undefined ? undefined : Date.now() - stoppedAt };
}

function expectNamedEnd(run: SweepRun, cmd: Command, what: string): void {
  const detail = `${what}\nstrikes: ${run.strikes.join('; ')}\nstderr: ${run.stderr}`;
  if (run.stoppedInMs !== undefined) {
    expect(run.stoppedInMs, detail).toBeLessThan(3_000);
    // Node 20 cannot end a process without waiting for a call stuck in its thread pool: the signal itself ends it there.
    if (isNode20 && run.signal === 'SIGTERM') return;
  }
  expect(run.signal, detail).toBeUndefined();
  expect(NAMED.has(run.exitCode ?? -1), detail).toBe(true);
  expect(run.stderr, detail).not.toMatch(/unexpected/i);
  const errors = run.stderr.split('\n').filter((line) => line.startsWith('error:') || line.startsWith('{"status"'));
  // A failure says what in one line; a signal may end a server (mcp, sandbox) without a word.
  if (run.exitCode === 130) expect(errors.length, detail).toBeLessThanOrEqual(1);
  else if (run.exitCode !== 0) expect(errors, detail).toHaveLength(1);
  // An MCP tool's failure is its answer, not the process's: named too.
  if (cmd.name === 'mcp') expect(run.stdout, detail).not.toMatch(/unexpected/i);
}

describe('every command under every fault of the file system', () => {
  for (const fault of FS_FAULTS) {
    it(`${fault}: from the first call and part way, a named exit code and one line, never 1`, async () => {
      const runs: Array<{ what: string; command: Command; after: number }> = [];
      for (const cmd of COMMANDS) for (const after of [0, 3]) runs.push({ what: `${cmd.name} under ${fault} after ${after} calls`, command: cmd, after });
      let struck = 0;
      // A few at a time: each run is a process of its own.
      for (let i = 0; i < runs.length; i += 4) {
        const results = await Promise.all(runs.slice(i, i + 4).map(async (run) => ({ ...run, result: await runUnderFault(run.command, fault, run.after) })));
        for (const { what, command, result } of results) {
          if (process.env.SWEEP_REPORT) console.log(`${what}: exit ${result.exitCode ?? result.signal}, ${result.strikes.length} struck (${result.strikes[0] ?? ''}) ${result.stderr.trim().split('\n').at(-1)}`);
          expectNamedEnd(result, command, what);
          if (result.strikes.length > 0) struck++;
        }
      }
      // The sweep met the fault, not only commands that never touched a struck path.
      expect(struck).toBeGreaterThanOrEqual(runs.length / 2);
    }, 300_000);
  }
});

describe('the first signal while a call is stuck in the thread pool', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`export, its directory's first look stuck: the first ${signal} ends it within 3 s, with one line and 130`, async () => {
      const { config, work } = prepareRun();
      const injected = injectFsFault({ under: join(work, 'export'), fault: 'stuck', scratch });
      const child = execa('node', [BIN, 'export', join(work, 'export')], { env: cliEnv(config, { ...sandbox.env(), ...injected.env }), extendEnv: false, cwd: work, reject: false, timeout: 30_000, forceKillAfterDelay: false });
      await until(() => injected.strikes().length > 0, 'the stuck call');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sentAt = Date.now();
      child.kill(signal);
      const result = await child;
      expect(Date.now() - sentAt).toBeLessThan(3_000);
      expect(String(result.stderr).trim().split('\n').at(-1)).toBe('error: interrupted');
      if (isNode20) expect([130, undefined]).toContain(result.exitCode);
      else expect(result.exitCode).toBe(130);
    });
  }

  it('batch with requests on the wire whose images cannot be written (the disk hangs): the grace for them, then the end, bounded', async () => {
    const { config, work } = prepareRun();
    writeFileSync(join(work, 'rows.csv'), `lat,lng\n${Array.from({ length: 8 }, (_, i) => `${i + 1},${i + 2}`).join('\n')}\n`);
    // Every image's temp file: its creation hangs, so the rows in flight never finish.
    const injected = injectFsFault({ under: join(work, 'out'), fault: 'stuck', kinds: ['write'], scratch });
    sandbox.setFaults({ latencyMs: 500 });
    const child = execa('node', [BIN, 'batch', join(work, 'rows.csv'), '--resolution', 'HD', '--output-template', join(work, 'out', '{row}.jpg'), '--manifest', join(work, 'manifest.jsonl'), '--concurrency', '2'], {
      env: cliEnv(config, { ...sandbox.env(), ...injected.env }),
      extendEnv: false,
      cwd: work,
      reject: false,
      timeout: 90_000,
      forceKillAfterDelay: false,
    });
    const stderr = stderrSoFar(child);
    await until(() => injected.strikes().length > 0, 'a stuck write', 30_000);
    const sentAt = Date.now();
    child.kill('SIGTERM');
    await until(() => /SIGTERM: finishing \d+ requests? in flight \(at most 30s\)/.test(stderr()), 'the notice of the grace', 10_000);
    const result = await child;
    const took = Date.now() - sentAt;
    // Not before the grace was over (what was in flight was given its time), and not long after it.
    expect(took).toBeGreaterThanOrEqual(29_000);
    expect(took).toBeLessThan(34_000);
    expect(String(result.stderr)).toMatch(/still in flight after 30s: abandoned/);
    if (isNode20) expect([130, undefined]).toContain(result.exitCode);
    else expect(result.exitCode).toBe(130);
  }, 120_000);
});
