// Every example in the README, in the manual (docs/**/*.md) and in each
// command's --help, run as pasted: by bash, on a real pseudo-terminal of 80
// columns, against a sandbox, with the placeholders filled as "Examples are
// meant to be pasted" (docs/commands/README.md) says. An example written in
// several places (the README's tour repeats the manual's) runs once. Each example runs on its own, in a fresh copy of a working directory
// that holds the files the examples read (places.csv, tokyo.jpg, the shards'
// manifests…), a home directory of its own, and a config whose default and
// `work` profiles point at the sandbox with a fresh account holding three
// images. An example passes when it exits 0 (a server, once ready, is stopped
// with Ctrl-C and exits 130).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { globSync } from 'tinyglobby';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/main.js';
import { BIN, registerSecret, ROOT, runCli, tempDir } from '../helpers/cli.js';
import { KEYS, plain, ptyAvailable, spawnShellInPty } from '../helpers/pty.js';
import { API_PATH, generationRequest, useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';
import { available, command } from '../helpers/system-tools.js';

interface Example {
  /** Where it is written: "README.md:57", "docs/commands/batch.md:12" or "aerial config set --help". */
  source: string;
  line: string;
}

/** The example id placeholders, and which image of the history (newest first) each stands for. */
const ID_PLACEHOLDERS: Array<[placeholder: string, image: number]> = [
  ['0f8c2b1e', 0],
  ['7d41a9c3', 1],
];

/**
 * The lines not run (matched without their comment): the project's own npm
 * and node scripts (the checkout is built already: `npm ci && …` runs what
 * follows; the bench and the OpenAPI proxy have tests of their own), packing
 * and installing the package (test/heavy/installed-package.test.ts does that,
 * into a temporary prefix), other vendors' CLIs (aws, Slurm's sbatch, ngrok, cloudflared), a
 * `<placeholder>` for something only the reader has (a tunnel's name, a key
 * printed elsewhere), and a session on fixed local ports: a server started in
 * the background (`&`) and the commands that reach one at 127.0.0.1:4010 or
 * :4020.
 */
const NOT_RUN =
  /^npm (ci|test|run test:(quick|all)|run bench|pack)$|^npm run build && node (bench|scripts)\/|^node (bench|scripts)\/|^npm install --global \S+\.tgz$|^aws |^array=\$\(aws |^(array=\$\()?sbatch |^(ngrok|cloudflared) |<[a-z][a-z -]*>|&$|127\.0\.0\.1:40[12]0/;

/** A line of shell without its trailing comment (a `#` after white space, outside quotes). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"') index++;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '\\') index++;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1]!))) return line.slice(0, index).trimEnd();
  }
  return line;
}

function notRun(example: Example): boolean {
  return NOT_RUN.test(withoutComment(example.line));
}

/** Lines of shell with `\` continuations joined, comment-only lines dropped. */
function commandLines(lines: string[]): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trimEnd()} `;
      continue;
    }
    out.push(pending + line);
    pending = '';
  }
  return out;
}

/** The pages whose shell blocks are examples: the README, then the manual. */
const PAGES = ['README.md', ...globSync('docs/**/*.md', { cwd: ROOT }).sort()];

/** The lines of every block marked as shell (```sh, ```bash, ```shell) of `page`. */
function pageExamples(page: string): Example[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const examples: Example[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[index]!)) continue;
    const start = index + 1;
    let end = start;
    while (lines[end] !== '```') end++;
    for (const line of commandLines(lines.slice(start, end))) examples.push({ source: `${page}:${start}`, line });
    index = end;
  }
  return examples;
}

function documentExamples(): Example[] {
  return PAGES.flatMap(pageExamples);
}

function commandPaths(command: Command, path: string[] = []): string[][] {
  return command.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => [[...path, sub.name()], ...commandPaths(sub, [...path, sub.name()])]);
}

/** The examples of every help page, as `aerial … --help` prints them to a pipe (80 columns). */
function helpExamples(): Example[] {
  const examples: Example[] = [];
  for (const path of [[], ...commandPaths(buildProgram())]) {
    const help = execFileSync(process.execPath, [BIN, ...path, '--help'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const section = help.split('\nExamples:\n')[1];
    if (section === undefined) continue;
    const end = section.split('\n').findIndex((line) => !line.startsWith('  '));
    const block = section.split('\n').slice(0, end === -1 ? undefined : end);
    // A line of a long example ends in `\`; a comment too long for its line is put on the next line alone.
    const lines = block.map((line) => line.replace(/^ {2}\$ /, '').trim());
    for (const line of commandLines(lines)) examples.push({ source: ['aerial', ...path, '--help'].join(' '), line });
  }
  return examples;
}

/**
 * What the terminal is asked, and the keys typed in answer, each once (a prompt
 * is drawn again at every key typed into it): the confirmation,
 * the hidden key prompt, and init's and generate's questions (Enter takes the
 * preselected choice).
 */
function answersFor(line: string, key: string, sandboxUrl: string): Array<[RegExp, string]> {
  const answers: Array<[RegExp, string]> = [[/permanently\? \(y\/N\)/, `y${KEYS.enter}`], [/\? API key(?! \()/, `${key}${KEYS.enter}`]];
  // A fresh config directory: init starts from the public service; the sandbox is the third choice, a URL of one's own.
  if (/AERIAL_CONFIG_DIR=\S+ aerial init/.test(line)) {
    answers.push([/Another URL…[\s\S]*?⏎ select/, `${KEYS.down}${KEYS.down}${KEYS.enter}`], [/Service base URL/, `${sandboxUrl}${KEYS.enter}`]);
  } else {
    answers.push([/Another URL…[\s\S]*?⏎ select/, KEYS.enter], [/Service base URL \(.*\)/, KEYS.enter]);
  }
  answers.push(
    [/API key \(hidden; leave empty to keep the current one\)/, KEYS.enter],
    [/API key \(hidden\)/, `${key}${KEYS.enter}`],
    [/Choose default scene settings now\?/, KEYS.enter],
    [/Location \(latitude,longitude, a geo: URI, or a place such as "Paris, FR"\)/, `48.8584,2.2945${KEYS.enter}`],
    ...['Resolution', 'Zoom', 'Camera faces', 'Camera angle', 'Weather', 'Time of day', 'Aspect ratio', 'Epoch'].map(
      (prompt): [RegExp, string] => [new RegExp(`\\? ${prompt}[\\s\\S]*?⏎ select`), KEYS.enter],
    ),
    [/Save as \(/, KEYS.enter],
    // A server says where it serves once it is ready; Ctrl-C stops it.
    [/Sandbox serving GenAerial v1 at/, KEYS.ctrlC],
  );
  return answers;
}

let sandbox: TestSandbox;
useSandboxPerFile((started) => {
  sandbox = started;
});

let base: ReturnType<typeof tempDir>;

/** One image generated straight through the API, for the history of `key`. */
async function generateFor(key: string, lng: number): Promise<void> {
  const response = await fetch(`${sandbox.url}${API_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(generationRequest({ coordinates: { lat: 40.6892, lng }, resolution: 'HD' })),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

async function idsOf(key: string): Promise<string[]> {
  const response = await fetch(`${sandbox.url}${API_PATH}?page=0&size=10&sort=createdAt,desc`, { headers: { 'x-api-key': key } });
  const page = (await response.json()) as { content: Array<{ id: string }> };
  return page.content.map((record) => record.id);
}

beforeAll(async () => {
  // The files the README says the reader has: batch files, an image, images under out/, and the shards' manifests.
  base = tempDir('aerial-examples-');
  const work = join(base.path, 'work');
  mkdirSync(work);
  mkdirSync(join(base.path, 'config'));
  writeFileSync(join(work, 'places.csv'), 'lat,lng,zoom\n40.6892,-74.0445,High\n48.8584,2.2945,\n27.1751,78.0421,Low\n');
  writeFileSync(join(work, 'places.jsonl'), '{"lat":40.6892,"lng":-74.0445}\n{"lat":48.8584,"lng":2.2945,"zoom":"High"}\n');
  const account = await sandbox.createAccount({ credits: 1000 });
  registerSecret(account.key);
  const scratch = join(base.path, 'scratch');
  mkdirSync(scratch);
  writeFileSync(join(scratch, 'places.csv'), readFileSync(join(work, 'places.csv')));
  const env = { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: account.key };
  for (const shard of [1, 2]) {
    const run = await runCli(['batch', 'places.csv', '--shard', `${shard}/2`, '--manifest', `m${shard}.jsonl`], { configDir: join(base.path, 'config'), cwd: scratch, env });
    expect(run.exitCode, run.stderr).toBe(0);
    copyFileSync(join(scratch, `m${shard}.jsonl`), join(work, `m${shard}.jsonl`));
    for (const dir of ['shards', 'manifests']) {
      mkdirSync(join(work, dir, `shard-${shard}`), { recursive: true });
      copyFileSync(join(scratch, `m${shard}.jsonl`), join(work, dir, `shard-${shard}`, 'aerial-batch-manifest.jsonl'));
    }
  }
  const tokyo = await runCli(['generate', '--lat', '35.6586', '--lng', '139.7454', '--resolution', 'HD', '-o', join(work, 'tokyo.jpg')], { configDir: join(base.path, 'config'), env });
  expect(tokyo.exitCode, tokyo.stderr).toBe(0);
  mkdirSync(join(work, 'out'));
  for (const name of ['1.jpg', '2.jpg']) copyFileSync(join(work, 'tokyo.jpg'), join(work, 'out', name));
  // `aerial` on the PATH, as `npm link` puts it, and ./bin/aerial.js for the first example of all.
  mkdirSync(join(base.path, 'path'));
  symlinkSync(BIN, join(base.path, 'path', 'aerial'));
}, 120_000);

afterAll(() => base?.remove());

let workspaces = 0;

/** A fresh working directory, home and config (default and work profiles, a new account with three images). */
async function workspace(): Promise<{ dir: string; home: string; configDir: string; key: string; ids: string[] }> {
  const dir = join(base.path, `example-${++workspaces}`);
  cpSync(join(base.path, 'work'), dir, { recursive: true });
  symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
  const home = join(dir, '.home');
  const configDir = join(dir, '.config-aerial');
  mkdirSync(home);
  mkdirSync(configDir);
  const { key } = await sandbox.createAccount({ credits: 1000 });
  registerSecret(key);
  for (const lng of [1, 2, 3]) await generateFor(key, lng);
  const profile = { baseUrl: sandbox.url, apiKey: key };
  writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles: { default: profile, work: profile } }, null, 2), { mode: 0o600 });
  chmodSync(join(configDir, 'config.json'), 0o600);
  return { dir, home, configDir, key, ids: await idsOf(key) };
}

/** Whether `line` starts a sandbox that serves until Ctrl-C (`aerial sandbox reset` ends by itself). */
function servesSandbox(line: string): boolean {
  return /^aerial sandbox( |$)/.test(line) && !/^aerial sandbox reset\b/.test(line);
}

/**
 * A sandbox example on a free port instead of the one it names or the default
 * (4010): a sandbox the reader already has running there must not fail the
 * suite, nor another run of it. The one change made to a line as pasted.
 */
function onFreePort(line: string): string {
  const port = /(^|\s)--port(?:=|\s+)\d+/;
  return port.test(line) ? line.replace(port, '$1--port 0') : line.replace(/^aerial sandbox\b/, 'aerial sandbox --port 0');
}

/** Runs one example line on a pseudo-terminal in a fresh workspace; the exit code and what the terminal showed. */
async function run(example: Example): Promise<{ exitCode: number | null; screen: string; line: string }> {
  const ws = await workspace();
  let line = example.line.replace(/^npm ci && /, '');
  for (const [placeholder, image] of ID_PLACEHOLDERS) line = line.replaceAll(placeholder, ws.ids[image]!.slice(0, 8));
  if (servesSandbox(line)) line = onFreePort(line);
  const answers = answersFor(line, ws.key, sandbox.url);
  const session = spawnShellInPty(line, {
    configDir: ws.configDir,
    cwd: ws.dir,
    columns: 80,
    rows: 40,
    timeoutMs: 60_000,
    env: {
      HOME: ws.home,
      XDG_CONFIG_HOME: join(ws.home, '.config'),
      XDG_DATA_HOME: join(ws.home, '.local', 'share'),
      XDG_CACHE_HOME: join(ws.home, '.cache'),
      XDG_STATE_HOME: join(ws.home, '.local', 'state'),
      PATH: [join(base.path, 'path'), dirname(process.execPath), process.env.PATH].join(':'),
      // What a key placeholder stands for, and what a CI runner (GitLab's, runner 2 of 4) sets.
      GENAERIAL_KEY: ws.key,
      KEY: ws.key,
      CI_NODE_INDEX: '2',
      CI_NODE_TOTAL: '4',
      AERIAL_CONFIG_DIR: ws.configDir,
    },
  });
  let mark = 0;
  let done = false;
  const exited = session.exited.finally(() => (done = true));
  while (!done) {
    const fresh = session.screen.slice(mark);
    const found = answers
      .map(([pattern, keys], index) => ({ match: pattern.exec(fresh), keys, index }))
      .filter((answer) => answer.match)
      .sort((a, b) => a.match!.index - b.match!.index)[0];
    if (found) {
      mark += found.match!.index + found.match![0].length;
      answers.splice(found.index, 1);
      // Let the prompt start listening before the keys arrive.
      await new Promise((resolve) => setTimeout(resolve, 80));
      session.write(found.keys);
    }
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  const { exitCode, output } = await exited;
  return { exitCode, screen: plain(output), line };
}

/** The first of the examples that are one command, comments and spacing aside. */
function once(examples: Example[]): Example[] {
  const seen = new Set<string>();
  return examples.filter((example) => {
    const command = withoutComment(example.line).replace(/\s+/g, ' ');
    if (seen.has(command)) return false;
    seen.add(command);
    return true;
  });
}

const examples = [...documentExamples(), ...helpExamples()];
const runnable = once(examples.filter((example) => !notRun(example)));

describe('the examples are found', () => {
  it('in the README, in the manual and in every help page', () => {
    expect(pageExamples('README.md').length).toBeGreaterThan(20);
    expect(documentExamples().length).toBeGreaterThan(60);
    expect(new Set(documentExamples().map((example) => example.source.split(':')[0])).size).toBeGreaterThan(12);
    expect(helpExamples().length).toBeGreaterThan(50);
    expect(new Set(helpExamples().map((example) => example.source)).size).toBeGreaterThan(15);
  });

  it('and only these are not run: the project\'s own npm and node scripts, other vendors\' CLIs, what only the reader has, and a session on fixed ports', () => {
    const skipped = examples.filter(notRun).map((example) => example.line);
    expect(skipped).toEqual([
      // README.md
      expect.stringMatching(/^npm install --global aerial-[\d.]+\.tgz /),
      'npm test',
      // docs/development.md
      'npm ci            # installs and builds (the esbuild bundle in dist/)',
      expect.stringMatching(/^npm run test:quick +# build, then the unit project/),
      expect.stringMatching(/^npm test +# build, typecheck, the unit and e2e projects/),
      expect.stringMatching(/^npm run test:all +# build, typecheck, every project/),
      expect.stringMatching(/^npm run bench +# start-up \(on Node 22, 24, 26/),
      expect.stringMatching(/^npm pack +# the tarball users install/),
      // docs/sandbox.md: the OpenAPI document and its proxy, on fixed ports; the sandbox's bench
      expect.stringMatching(/^curl -s http:\/\/127\.0\.0\.1:4010\/openapi\.json /),
      expect.stringMatching(/^aerial sandbox --port 4010 & /),
      expect.stringMatching(/^node scripts\/openapi-proxy\.mjs --upstream http:\/\/127\.0\.0\.1:4010 .* &$/),
      expect.stringMatching(/^AERIAL_BASE_URL=http:\/\/127\.0\.0\.1:4020 aerial generate /),
      expect.stringMatching(/^node scripts\/openapi-proxy\.mjs --upstream https:\/\/api\.genaerial\.com .* &$/),
      'AERIAL_BASE_URL=http://127.0.0.1:4020 aerial list --json',
      ...Array(2).fill(expect.stringMatching(/^npm run build && node bench\/sandbox-throughput\.mjs/)),
      // docs/scale-out.md
      ...Array(4).fill(expect.stringMatching(/^(aws|array=\$\(aws) /)),
      expect.stringMatching(/^array=\$\(sbatch --parsable /),
      expect.stringMatching(/^sbatch --dependency=afterany:/),
      // docs/webhooks.md: tunnels, and a key another terminal printed
      expect.stringContaining('--public-url https://<id>.ngrok-free.app -o westminster.jpg'),
      'ngrok http 127.0.0.1:8787',
      expect.stringContaining('--public-url https://<id>.ngrok-free.app -o liberty.jpg'),
      'cloudflared tunnel --url http://127.0.0.1:8787',
      expect.stringContaining('--public-url https://<random-words>.trycloudflare.com'),
      expect.stringContaining('AERIAL_API_KEY=<key it printed>'),
      // aerial generate-async --help
      expect.stringContaining('--public-url https://<your-subdomain>.ngrok-free.app'),
    ]);
  });
});

describe.skipIf(!ptyAvailable() || !available(command('jq', ['--version'], 'apt-get install jq')))('every example runs when pasted', () => {
  for (const example of runnable) {
    it(`${example.source}: ${example.line}`, async () => {
      const { exitCode, screen, line } = await run(example);
      const server = servesSandbox(line);
      expect(exitCode, `${line}\n${screen.slice(-3000)}`).toBe(server ? 130 : 0);
      // Served where the OS chose, whatever port the example names.
      if (server) expect(screen).toMatch(/127\.0\.0\.1:(?!4010\b)\d+/);
    }, 90_000);
  }
});
