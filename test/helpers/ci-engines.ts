// Reads the CI examples of docs/ci/ as their engines read them, and says what
// each engine would run: the shard commands, exactly as written, with the
// variables the engine sets for each copy; how the shards' files reach the
// job that checks them; and that job's command.
//
// What is not run is the engine's own plumbing: checkout, installing aerial,
// uploading and downloading artifacts (copied here as the engine would lay
// them out), mounting the shared volume (a directory here).
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from './cli.js';

export const CI_DIR = join(ROOT, 'docs', 'ci');

/** One process an engine starts: its argv (run in the job's working directory) and the variables it sets. */
export interface EngineCommand {
  argv: string[];
  env: Record<string, string>;
}

/** Values the test stands in for: the engine's secrets, by the name the file uses. */
export interface Secrets {
  apiKey: string;
}

export interface EnginePlan {
  name: string;
  shards: EngineCommand[];
  /**
   * 'runners': each shard on a machine of its own (its own checkout), its
   * files passed on as artifacts; 'volume': every shard and the status job on
   * one shared volume.
   */
  layout: 'runners' | 'volume';
  /** For 'runners': moves shard `index`'s artifacts from its directory to where the status job finds them. */
  collect?(shardDir: string, index: number, statusDir: string, artifactsDir: string): void;
  status: EngineCommand;
}

function read(name: string): string {
  return readFileSync(join(CI_DIR, name), 'utf8');
}

type Json = Record<string, any>;

// ---------------------------------------------------------------------------
// GitHub Actions

/** `${{ expression }}` with the contexts a matrix job knows; anything else is a failure of the example. */
function githubExpand(text: string, contexts: Record<string, string>): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    if (!(expression in contexts)) throw new Error(`GitHub expression \${{ ${expression} }} is not one the example test knows`);
    return contexts[expression]!;
  });
}

function githubEnv(env: Json | undefined, contexts: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env ?? {}).map(([name, value]) => [name, githubExpand(String(value), contexts)]));
}

/** GitHub's `bash` on Linux: `bash --noprofile --norc -eo pipefail {0}`. */
const githubShell = (script: string) => ['bash', '--noprofile', '--norc', '-eo', 'pipefail', '-c', script];

const runsAerial = (step: Json, status: boolean) => typeof step.run === 'string' && /\baerial batch\b/.test(step.run) && /\bbatch status\b/.test(step.run) === status;

export function githubActions(secrets: Secrets): EnginePlan {
  const workflow = parse(read('github-actions.yml')) as Json;
  const jobs = Object.entries(workflow.jobs as Json);
  const [shardJobName, shardJob] = jobs.find(([, job]) => job.steps.some((step: Json) => runsAerial(step, false)))!;
  const [, statusJob] = jobs.find(([, job]) => job.steps.some((step: Json) => runsAerial(step, true)))!;
  if (![statusJob.needs].flat().includes(shardJobName)) throw new Error('the status job does not wait for the shards (needs)');
  const matrix = shardJob.strategy.matrix as Json;
  if (Object.keys(matrix).join() !== 'shard') throw new Error(`the example's matrix should have only a shard dimension; has ${Object.keys(matrix).join(', ')}`);
  const values = matrix.shard as unknown[];
  const base = { 'secrets.AERIAL_API_KEY': secrets.apiKey };
  const contextsOf = (index: number) => ({
    ...base,
    'matrix.shard': String(values[index]),
    'strategy.job-index': String(index),
    'strategy.job-total': String(values.length),
  });
  const shardStep = shardJob.steps.find((step: Json) => runsAerial(step, false));
  const upload = shardJob.steps.find((step: Json) => String(step.uses ?? '').startsWith('actions/upload-artifact@'));
  const download = statusJob.steps.find((step: Json) => String(step.uses ?? '').startsWith('actions/download-artifact@'));
  const statusStep = statusJob.steps.find((step: Json) => runsAerial(step, true));
  return {
    name: 'GitHub Actions',
    layout: 'runners',
    shards: values.map((_, index) => {
      const contexts = contextsOf(index);
      return {
        argv: githubShell(githubExpand(shardStep.run, contexts)),
        env: { ...githubEnv(workflow.env, contexts), ...githubEnv(shardJob.env, contexts), ...githubEnv(shardStep.env, contexts) },
      };
    }),
    collect(shardDir, index, statusDir, artifactsDir) {
      // upload-artifact: one path, a directory, is stored from inside it.
      const contexts = contextsOf(index);
      const name = githubExpand(upload.with.name, contexts);
      const path = githubExpand(upload.with.path, contexts);
      if (/\n/.test(path.trim()) || !statSync(join(shardDir, path)).isDirectory()) throw new Error(`the test lays out only a single-directory artifact; got ${path}`);
      cpSync(join(shardDir, path), join(artifactsDir, name), { recursive: true });
      // download-artifact: each artifact the pattern matches in a directory of its name under `path`.
      const pattern = new RegExp(`^${String(download.with.pattern).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
      if (!pattern.test(name)) throw new Error(`download-artifact's pattern ${download.with.pattern} does not match ${name}`);
      if (download.with['merge-multiple']) throw new Error('the test lays out downloads without merge-multiple');
      cpSync(join(artifactsDir, name), join(statusDir, download.with.path, name), { recursive: true });
    },
    status: { argv: githubShell(githubExpand(statusStep.run, base)), env: { ...githubEnv(workflow.env, base), ...githubEnv(statusJob.env, base), ...githubEnv(statusStep.env, base) } },
  };
}

// ---------------------------------------------------------------------------
// GitLab CI

/** GitLab runs a job's script lines in one shell, stopping at the first that fails. */
const gitlabShell = (script: string[] | string) => ['bash', '-e', '-c', [script].flat().join('\n')];

function gitlabVariables(variables: Json | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(variables ?? {}).map(([name, value]) => [name, String(typeof value === 'object' ? value.value : value)]));
}

export function gitlabCi(secrets: Secrets): EnginePlan {
  const pipeline = parse(read('gitlab-ci.yml')) as Json;
  const reserved = new Set(['stages', 'default', 'variables', 'include', 'workflow', 'image', 'services', 'before_script', 'after_script', 'cache']);
  const jobs = Object.entries(pipeline).filter(([name, job]) => !reserved.has(name) && !name.startsWith('.') && job && typeof job === 'object');
  const [, shardJob] = jobs.find(([, job]) => typeof job.parallel === 'number')!;
  const [, statusJob] = jobs.find(([, job]) => [job.script].flat().some((line: string) => /\bbatch status\b/.test(line)))!;
  const stages = pipeline.stages as string[];
  if (!(stages.indexOf(statusJob.stage) > stages.indexOf(shardJob.stage))) throw new Error('the status job does not run in a later stage than the shards');
  // A masked CI/CD variable of the project.
  const projectVariables = { AERIAL_API_KEY: secrets.apiKey };
  const total = shardJob.parallel as number;
  return {
    name: 'GitLab CI',
    layout: 'runners',
    shards: Array.from({ length: total }, (_, index) => ({
      argv: gitlabShell(shardJob.script),
      env: {
        ...gitlabVariables(pipeline.variables),
        ...gitlabVariables(shardJob.variables),
        ...projectVariables,
        CI: 'true',
        GITLAB_CI: 'true',
        CI_NODE_INDEX: String(index + 1),
        CI_NODE_TOTAL: String(total),
      },
    })),
    collect(shardDir, _index, statusDir) {
      // Jobs of a later stage get every earlier job's artifacts, unpacked at their paths in the project directory.
      for (const path of shardJob.artifacts.paths as string[]) {
        const from = join(shardDir, path);
        if (!existsSync(from)) continue;
        for (const file of filesUnder(from)) {
          const to = join(statusDir, path, relative(from, file));
          // GitLab would overwrite it, and one shard's record would be lost.
          if (existsSync(to)) throw new Error(`two jobs' artifacts hold ${relative(statusDir, to)}`);
          cpSync(file, to);
        }
      }
    },
    status: { argv: gitlabShell(statusJob.script), env: { ...gitlabVariables(pipeline.variables), ...gitlabVariables(statusJob.variables), ...projectVariables, CI: 'true', GITLAB_CI: 'true' } },
  };
}

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

// ---------------------------------------------------------------------------
// Kubernetes

/** Kubernetes expands $(VAR) in command and args from the container's variables; $$ escapes. */
function kubernetesExpand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name?: string) => (match === '$$' ? '$' : name! in env ? env[name!]! : match));
}

function containerCommand(container: Json, env: Record<string, string>, secrets: Secrets): EngineCommand {
  const vars: Record<string, string> = { ...env };
  for (const entry of (container.env ?? []) as Json[]) {
    if (entry.value !== undefined) vars[entry.name] = String(entry.value);
    else if (entry.valueFrom?.secretKeyRef?.key === 'api-key') vars[entry.name] = secrets.apiKey;
    else throw new Error(`the test knows no value for ${entry.name}`);
  }
  if (!container.command && !container.args) throw new Error('the example relies on the image entrypoint: the test cannot run it');
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map((arg: string) => kubernetesExpand(String(arg), vars));
  return { argv, env: vars };
}

export function kubernetes(secrets: Secrets): EnginePlan {
  const documents = parseAllDocuments(read('kubernetes-indexed-job.yaml')).map((document) => document.toJS() as Json);
  const job = documents.find((document) => document.kind === 'Job' && document.spec.completionMode === 'Indexed')!;
  const statusJob = parse(read('kubernetes-status-job.yaml')) as Json;
  const completions = job.spec.completions as number;
  const [container] = job.spec.template.spec.containers as Json[];
  const [statusContainer] = statusJob.spec.template.spec.containers as Json[];
  for (const c of [container!, statusContainer!]) {
    // Every path in the commands is relative to the working directory, the shared volume's mount.
    const mounts = (c.volumeMounts as Json[]).map((mount) => mount.mountPath);
    if (!mounts.includes(c.workingDir)) throw new Error(`workingDir ${c.workingDir} is not the shared volume's mount (${mounts.join(', ')})`);
  }
  return {
    name: 'Kubernetes Indexed Job',
    layout: 'volume',
    shards: Array.from({ length: completions }, (_, index) => containerCommand(container!, { JOB_COMPLETION_INDEX: String(index) }, secrets)),
    status: containerCommand(statusContainer!, {}, secrets),
  };
}

// ---------------------------------------------------------------------------
// AWS Batch

function awsContainerCommand(definition: Json, env: Record<string, string>, secrets: Secrets): EngineCommand {
  const properties = definition.containerProperties as Json;
  const vars: Record<string, string> = { ...env };
  for (const entry of (properties.environment ?? []) as Json[]) vars[entry.name] = String(entry.value);
  for (const entry of (properties.secrets ?? []) as Json[]) {
    if (entry.name !== 'AERIAL_API_KEY') throw new Error(`the test knows no value for the secret ${entry.name}`);
    vars[entry.name] = secrets.apiKey;
  }
  return { argv: properties.command as string[], env: vars };
}

/** The WORKDIR of docs/ci/Dockerfile: where the image starts, and where the examples mount their volume. */
export function imageWorkdir(): string {
  const line = read('Dockerfile').split('\n').filter((text) => /^WORKDIR\s/.test(text)).pop();
  return line!.replace(/^WORKDIR\s+/, '').trim();
}

export function awsBatch(secrets: Secrets): EnginePlan {
  const definition = JSON.parse(read('aws-batch-job-definition.json')) as Json;
  const submit = JSON.parse(read('aws-batch-submit-job.json')) as Json;
  const statusDefinition = JSON.parse(read('aws-batch-status-job-definition.json')) as Json;
  if (submit.jobDefinition !== definition.jobDefinitionName) throw new Error('the submitted job is not the shard job definition');
  for (const d of [definition, statusDefinition]) {
    const mounts = (d.containerProperties.mountPoints as Json[]).map((mount) => mount.containerPath);
    if (!mounts.includes(imageWorkdir())) throw new Error(`${d.jobDefinitionName} does not mount its volume at the image's WORKDIR ${imageWorkdir()}`);
  }
  const size = submit.arrayProperties.size as number;
  return {
    name: 'AWS Batch array job',
    layout: 'volume',
    shards: Array.from({ length: size }, (_, index) =>
      awsContainerCommand(definition, { AWS_BATCH_JOB_ARRAY_INDEX: String(index) }, secrets),
    ),
    status: awsContainerCommand(statusDefinition, {}, secrets),
  };
}
