// A one-node Slurm cluster on loopback, for running the docs/ci Slurm
// examples as Slurm runs them: munged with a key and socket of its own,
// slurmctld and slurmd on free ports, every file they write (state, spool,
// logs, pid files) in one temp dir, found through SLURM_CONF. Nothing of the
// machine's Slurm or munge is read or touched, so it runs beside them, and
// beside another such cluster.
//
// stop() cancels what is still queued and ends every process of the cluster:
// the three daemons it started, and what they forked (slurmctld's
// slurmscriptd, slurmd's slurmstepd and the jobs' own processes), found by the
// cluster's own SLURM_CONF in their environment.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from './cli.js';
import { available, command, type SystemTool } from './system-tools.js';

/** On the PATH: sbatch wants a cluster's configuration before it answers even --version. */
function onPath(name: string, install: string): SystemTool {
  return { name, install, present: () => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', name], { stdio: 'ignore' }).status === 0 };
}

const SLURM_TOOLS: SystemTool[] = [
  command('slurmctld', ['-V'], 'apt-get install slurm-wlm'),
  command('slurmd', ['-V'], 'apt-get install slurm-wlm'),
  onPath('sbatch', 'apt-get install slurm-wlm'),
  command('munged', ['--version'], 'apt-get install munge'),
  command('mungekey', ['--version'], 'apt-get install munge'),
  {
    name: 'root',
    install: 'run the tests as root: slurmd starts each job as the user who submitted it, and munged runs as root only with --force',
    present: () => process.getuid?.() === 0,
  },
];

/** Whether a cluster can be started here; each missing piece is noted (or, in CI, an error). */
export function slurmAvailable(): boolean {
  return SLURM_TOOLS.map((tool) => available(tool)).every(Boolean);
}

export interface SlurmCluster {
  /** The cluster's slurm.conf. */
  conf: string;
  /** Environment a Slurm command (sbatch, squeue) needs to reach this cluster. */
  env: { SLURM_CONF: string };
  /** The daemons' logs, for a failure's message. */
  logs(): string;
  stop(): Promise<void>;
}

/** Slots of the one node: four, so an array of four runs at once, as on four nodes. */
const CPUS = 4;

/**
 * A port the OS gave out a moment ago and took back: a candidate for a daemon
 * that takes its port from slurm.conf. Another process may bind it first; the
 * daemon then cannot, ends, and the cluster starts again on fresh ones
 * (startSlurmCluster).
 */
async function candidatePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What slurmctld and slurmd log (as they end, fatal) when their port is bound already. */
const PORT_TAKEN = /Address already in use/;

/** A cluster's start that ended because a daemon's port was taken meanwhile. */
class PortTaken extends Error {}

/** The pids of live processes whose environment holds `entry`: the cluster's, by its SLURM_CONF. */
function processesWith(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry)) pids.push(Number(name));
    } catch {
      // Ended meanwhile, or not ours to read.
    }
  }
  return pids;
}

function runQuietly(file: string, args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(file, args, { env, encoding: 'utf8', timeout: 10_000 });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`;
}

export async function startSlurmCluster(): Promise<SlurmCluster> {
  for (let tries = 0; ; tries++) {
    try {
      return await startOnce();
    } catch (error) {
      if (!(error instanceof PortTaken) || tries >= 4) throw error;
    }
  }
}

async function startOnce(): Promise<SlurmCluster> {
  const dir = tempDir('aerial-slurm-');
  const path = (...parts: string[]) => join(dir.path, ...parts);
  for (const sub of ['munge', 'state', 'spool', 'log']) mkdirSync(path(sub), { mode: 0o700 });
  const conf = path('slurm.conf');
  const slurmEnv = { SLURM_CONF: conf };
  const env = { ...process.env, ...slurmEnv };
  const confEntry = `SLURM_CONF=${conf}`;
  const daemons: ChildProcess[] = [];
  const logFiles = ['munged.log', 'slurmctld.log', 'slurmd.log'].map((name) => path('log', name));

  const logs = () =>
    logFiles
      .filter((file) => existsSync(file))
      .map((file) => `--- ${file}\n${readFileSync(file, 'utf8').split('\n').slice(-40).join('\n')}`)
      .join('\n');

  const daemon = (file: string, args: string[], log: string) => {
    const out = openSync(log, 'a');
    const child = spawn(file, args, { env, stdio: ['ignore', out, out] });
    closeSync(out);
    child.on('error', () => {});
    daemons.push(child);
    return child;
  };

  const stop = async () => {
    // Jobs first, while slurmd is there to end their steps.
    const jobs = () => runQuietly('squeue', ['--noheader', '--format=%i'], env).split(/\s+/).filter((id) => /^\d+(_\d+)?$/.test(id));
    const queued = jobs();
    if (queued.length > 0) {
      runQuietly('scancel', queued, env);
      const cancelled = Date.now() + 3_000;
      while (Date.now() < cancelled && jobs().length > 0) await sleep(100);
    }
    for (const child of daemons) if (child.exitCode === null) child.kill('SIGTERM');
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (daemons.some((child) => child.exitCode === null && child.signalCode === null) || processesWith(confEntry).length > 0)) {
      await sleep(100);
    }
    for (const pid of processesWith(confEntry)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    for (const child of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    dir.remove();
  };

  try {
    const socket = path('munge', 'munged.socket');
    const keyed = spawnSync('mungekey', ['--create', `--keyfile=${path('munge', 'munge.key')}`], { env, encoding: 'utf8' });
    if (keyed.status !== 0) throw new Error(`mungekey failed: ${keyed.stderr}`);
    daemon(
      'munged',
      [
        '--foreground',
        '--force',
        `--socket=${socket}`,
        `--key-file=${path('munge', 'munge.key')}`,
        `--pid-file=${path('munge', 'munged.pid')}`,
        `--log-file=${path('log', 'munged.log')}`,
        `--seed-file=${path('munge', 'munged.seed')}`,
      ],
      path('log', 'munged.out'),
    );
    await until(() => existsSync(socket), 'munged to open its socket');

    const [controllerPort, nodePort] = [await candidatePort(), await candidatePort()];
    writeFileSync(path('plugstack.conf'), '');
    writeFileSync(
      conf,
      [
        'ClusterName=aerialtest',
        'SlurmctldHost=localhost',
        `SlurmctldPort=${controllerPort}`,
        `SlurmdPort=${nodePort}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${socket}`,
        'MpiDefault=none',
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'ReturnToService=2',
        // The node's slots as written here, not as counted on this machine: the shards wait on the network, not the CPU.
        'SlurmdParameters=config_overrides',
        'KillWait=2',
        // sbatch --wait polls every 2 s only while MinJobAge is at most 4 (it waits 2, 8, then 32 s with the default 300).
        // Finished jobs are then forgotten after a few seconds, which sbatch --wait, polling that often, never misses.
        'MinJobAge=4',
        `StateSaveLocation=${path('state')}`,
        `SlurmdSpoolDir=${path('spool')}`,
        `SlurmctldPidFile=${path('slurmctld.pid')}`,
        `SlurmdPidFile=${path('slurmd.pid')}`,
        `SlurmctldLogFile=${path('log', 'slurmctld.log')}`,
        `SlurmdLogFile=${path('log', 'slurmd.log')}`,
        `PlugStackConfig=${path('plugstack.conf')}`,
        `NodeName=localhost NodeAddr=127.0.0.1 CPUs=${CPUS} Sockets=1 CoresPerSocket=${CPUS} ThreadsPerCore=1 State=UNKNOWN`,
        'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
        '',
      ].join('\n'),
    );
    daemon('slurmctld', ['-D', '-i'], path('log', 'slurmctld.out'));
    daemon('slurmd', ['-D', '-N', 'localhost'], path('log', 'slurmd.out'));
    await until(() => {
      // A daemon that ended will not come back: no need to wait the whole timeout.
      const ended = daemons.find((child) => child.exitCode !== null || child.signalCode !== null);
      if (ended) throw new Error(`${ended.spawnfile} ended (${ended.exitCode ?? ended.signalCode}) before the node came up`);
      return /^idle\b/m.test(runQuietly('sinfo', ['--noheader', '--format=%t'], env));
    }, 'the node to come up idle');
  } catch (error) {
    const written = `${logs()}\n${['slurmctld.out', 'slurmd.out'].map((name) => (existsSync(path('log', name)) ? readFileSync(path('log', name), 'utf8') : '')).join('\n')}`;
    const message = `${(error as Error).message}\n${logs()}`;
    await stop();
    throw PORT_TAKEN.test(written) ? new PortTaken(message) : new Error(message);
  }
  return { conf, env: slurmEnv, logs, stop };
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
