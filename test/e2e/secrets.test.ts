// Secret hygiene, end to end. One recognisable key is used by every command
// (from the config file, the environment and the --api-key flag), with
// --verbose, --json, failures, a server that echoes the key back, and an
// unexpected error that prints a stack. The key (or its middle) must show up in
// no stdout or stderr (runCli checks every run), and in no file the CLI leaves
// behind (config dir, working dir, TMPDIR, HOME) except the config file itself,
// which must be mode 0600; so must the batch manifest.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, assertNoSecrets, cliEnv, registerSecret, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { answer, answerJson, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const KEY = 'sk_test_LEAKCANARY_1234567890';
/** The key's middle: a partial or re-encoded leak still shows it. */
const FRAGMENT = 'LEAKCANARY';
registerSecret(KEY);
registerSecret(FRAGMENT);

let sandbox: TestSandbox;
let hostile: HostileServer;
let root: ReturnType<typeof tempDir>;
let dirs: { config: string; work: string; tmp: string; home: string };
/** Every run of the file, for the checks that look across all of them. */
const runs: Array<{ args: string[]; result: CliResult }> = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({ key: KEY, credits: 10_000 });
  hostile = await startHostileServer();
  root = tempDir('aerial-secrets-');
  dirs = { config: join(root.path, 'config'), work: join(root.path, 'work'), tmp: join(root.path, 'tmp'), home: join(root.path, 'home') };
  for (const dir of Object.values(dirs)) mkdirSync(dir);
});
afterAll(async () => {
  await sandbox.close();
  await hostile.close();
  root.remove();
});

/** Runs the CLI with only the isolated dirs; the key comes from wherever `env` (or the config file) says. */
async function aerial(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  const result = await runCli(args, {
    configDir: dirs.config,
    cwd: dirs.work,
    input,
    timeout: 60_000,
    env: { TMPDIR: dirs.tmp, HOME: dirs.home, XDG_CONFIG_HOME: join(dirs.home, '.config'), ...env },
  });
  runs.push({ args, result });
  return result;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const TRACE = /^→ (GET|POST|DELETE) https?:\/\/\S+ (\d{3}|failed)\b/;

/** --verbose adds trace lines; none of them may carry a header, let alone the key. */
function expectCleanTrace(result: CliResult): void {
  const traces = result.stderr.split('\n').filter((line) => line.startsWith('→ '));
  expect(traces.length, result.stderr).toBeGreaterThan(0);
  for (const line of traces) expect(line).toMatch(TRACE);
  expect(result.stderr.toLowerCase()).not.toContain('x-api-key');
}

describe('the API key never leaks', () => {
  it('config: set from stdin and as an argument, shown only masked by get and list; the file is 0600', async () => {
    expect((await aerial(['config', 'set', 'base-url', sandbox.url])).exitCode).toBe(0);
    const set = await aerial(['config', 'set', 'api-key'], {}, `${KEY}\n`);
    expect(set.exitCode).toBe(0);
    expect(set.stderr).toContain('sk_t…90');

    const configFile = join(dirs.config, 'config.json');
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(configFile, 'utf8')).toContain(KEY);

    const get = await aerial(['config', 'get', 'api-key']);
    expect(get.stdout).toBe('sk_t…90 (29 chars)\n');
    const getJson = await aerial(['config', 'get', 'api-key', '--json']);
    expect(JSON.parse(getJson.stdout)).toMatchObject({ key: 'api-key', value: 'sk_t…90 (29 chars)', source: 'profile' });
    const list = await aerial(['config', 'list', '--verbose']);
    expect(list.stdout).toMatch(/api-key\s+sk_t…90 \(29 chars\)\s+\(profile\)/);
    const listJson = await aerial(['config', 'list', '--json']);
    expect(JSON.parse(listJson.stdout)['api-key']).toEqual({ value: 'sk_t…90 (29 chars)', source: 'profile' });
    // From the environment and the flag too, still masked.
    expect((await aerial(['config', 'get', 'api-key'], { AERIAL_API_KEY: KEY })).stdout).toBe('sk_t…90 (29 chars)\n');
    expect((await aerial(['config', 'list', '--api-key', KEY])).stdout).toMatch(/sk_t…90 \(29 chars\)\s+\(flag\)/);
    expect((await aerial(['config', 'path'])).stdout).toBe(`${configFile}\n`);
    // Set again as an argument (the shell-history warning only shows on a terminal): same file, same mode.
    expect((await aerial(['config', 'set', 'api-key', KEY])).exitCode).toBe(0);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
  });

  it('every command, with --verbose and --json, successes and failures, key from the config file', async () => {
    const generate = ['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '--aspect-ratio', 'Square'];
    const a = await aerial([...generate, '-o', 'a.jpg', '--verbose']);
    expect(a.exitCode, a.stderr).toBe(0);
    expectCleanTrace(a);
    expect((await aerial([...generate, '-o', 'b.jpg', '--json', '--verbose'])).exitCode).toBe(0);
    // The image bytes themselves (EXIF, XMP) go through stdout here, and are checked like any output.
    const piped = await aerial([...generate, '--tag', 'piped', '-o', '-', '--verbose']);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout.length).toBeGreaterThan(1000);

    const accepted = await aerial(['generate-async', ...generate.slice(1), '--callback-url', 'http://127.0.0.1:9/hook', '--json', '--verbose']);
    expect(accepted.exitCode, accepted.stderr).toBe(0);
    expectCleanTrace(accepted);
    const listened = await aerial(['generate-async', ...generate.slice(1), '--listen', '--listen-host', '127.0.0.1', '-o', 'c.jpg', '--timeout', '30s', '--verbose']);
    expect(listened.exitCode, listened.stderr).toBe(0);
    expectCleanTrace(listened);

    const list = await aerial(['list', '--verbose']);
    expect(list.exitCode).toBe(0);
    expectCleanTrace(list);
    const listJson = await aerial(['list', '--json', '--all', '--verbose']);
    expect(listJson.exitCode).toBe(0);
    const ids = (JSON.parse(listJson.stdout) as { content: Array<{ id: string }> }).content.map((r) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);

    const exported = await aerial(['export', 'exported', '--verbose']);
    expect(exported.exitCode, exported.stderr).toBe(0);
    expectCleanTrace(exported);

    writeFileSync(join(dirs.work, 'rows.csv'), 'lat,lng,resolution,aspect_ratio\n40.6892,-74.0445,HD,Square\n51.5007,-0.1246,HD,Square\n');
    const batch = await aerial(['batch', 'rows.csv', '--output-template', 'batch/{row}.jpg', '--verbose', '--json']);
    expect(batch.exitCode, batch.stderr).toBe(0);
    const manifests = filesUnder(dirs.work).filter((f) => f.endsWith('manifest.jsonl'));
    expect(manifests.length).toBe(1);
    expect(statSync(manifests[0]!).mode & 0o777).toBe(0o600);

    const deleted = await aerial(['delete', ids[0]!, '--yes', '--verbose']);
    expect(deleted.exitCode).toBe(0);
    expectCleanTrace(deleted);
    const missing = await aerial(['delete', 'img_does_not_exist', '--yes', '--json', '--verbose']);
    expect(missing.exitCode).toBe(5);
    expectCleanTrace(missing);

    // The key from the environment and from the flag, over the config's.
    expect((await aerial(['list', '--size', '1', '--verbose'], { AERIAL_API_KEY: KEY })).exitCode).toBe(0);
    expect((await aerial(['list', '--size', '1', '--api-key', KEY, '--verbose', '--json'])).exitCode).toBe(0);
    // The in-process sandbox, while the configured key is the canary.
    expect((await aerial(['list', '--sandbox', '--verbose'])).exitCode).toBe(0);

    // Usage errors, with --json and --verbose.
    expect((await aerial([...generate, '--zoom', 'Sideways', '--verbose', '--json'])).exitCode).toBe(2);
    expect((await aerial(['list', '--size', '0', '--verbose'])).exitCode).toBe(2);
    expect((await aerial(['delete', ids[1]!])).exitCode).toBe(2);
    expect((await aerial(['init'])).exitCode).toBe(2);
    expect((await aerial(['completion', 'bash'])).exitCode).toBe(0);
    // Unreachable service, with retries traced.
    const refused = await aerial(['list', '--verbose'], { AERIAL_BASE_URL: 'http://127.0.0.1:9' });
    expect(refused.exitCode).toBe(7);
    expectCleanTrace(refused);

    // Nothing so far even tried to print the key: the redaction safety net never had to act.
    for (const { args, result } of runs) {
      if (args.includes('-o') && args.includes('-')) continue; // binary JPEG on stdout
      expect(`${result.stdout}${result.stderr}`, `aerial ${args.join(' ')}`).not.toContain('***');
    }
  }, 120_000); // About 20 commands, each a process of its own.

  it('a server that echoes the key back in error bodies, titles, codes and redirects: redacted everywhere', async () => {
    const env = { AERIAL_BASE_URL: hostile.url };
    const cases = [
      answer(401, `invalid api key ${KEY}`, 'text/plain'),
      answerJson(500, { status: 500, error: 'ErrorGeneratingImage', message: `failed for key=${KEY}` }),
      answerJson(400, { status: 400, error: KEY, message: 'the code is the key' }),
      answer(502, `<html><head><title>bad key ${KEY}</title></head></html>`, 'text/html'),
      answer(302, undefined, undefined, { location: `https://evil.example/collect?key=${KEY}` }),
    ];
    for (const responder of cases) {
      hostile.respond(responder);
      for (const extra of [['--verbose'], ['--json', '--verbose']]) {
        const result = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'echo.jpg', ...extra], env);
        expect(result.exitCode).toBeGreaterThanOrEqual(2);
        expect(result.stderr).toContain('***');
      }
    }
    // Every one of those requests carried the key to the configured host, and only there.
    expect(hostile.requests.every((r) => r.headers['x-api-key'] === KEY)).toBe(true);
  });

  it('an unexpected error prints its stack with --verbose, and the stack holds no key', async () => {
    // -o - into a descriptor open only for reading: EBADF while streaming is a genuine, unplanned
    // I/O failure (exit 1). (A full disk is the user's to fix: exit 2, no stack.)
    const readOnlyPath = join(dirs.work, 'read-only-stdout');
    writeFileSync(readOnlyPath, '');
    const readOnly = openSync(readOnlyPath, 'r');
    const child = spawn(process.execPath, [BIN, 'generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '--aspect-ratio', 'Square', '-o', '-', '--verbose'], {
      env: cliEnv(dirs.config, { TMPDIR: dirs.tmp, HOME: dirs.home, AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: KEY }),
      cwd: dirs.work,
      stdio: ['ignore', readOnly, 'pipe'],
      timeout: 30_000,
    });
    closeSync(readOnly);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [exitCode] = (await once(child, 'close')) as [number];
    const result = { exitCode, stderr };
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^error: unexpected: .*EBADF/m);
    expect(result.stderr).toMatch(/^\s+at /m);
    assertNoSecrets(result.stderr, 'the stack of an unexpected error');
  });

  it('a key with a trailing newline (a common CI secret) works; one with whitespace inside is refused before sending', async () => {
    hostile.reset();
    hostile.respond(answerJson(200, { content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 }));
    const trailing = await aerial(['list', '--verbose'], { AERIAL_BASE_URL: hostile.url, AERIAL_API_KEY: `${KEY}\n` });
    expect(trailing.exitCode, trailing.stderr).toBe(0);
    expect(hostile.requests.map((r) => r.headers['x-api-key'])).toEqual([KEY]);
    hostile.reset();
    const inside = await aerial(['list', '--verbose'], { AERIAL_BASE_URL: hostile.url, AERIAL_API_KEY: `${KEY} extra` });
    expect(inside.exitCode).toBe(2);
    expect(inside.stderr).toMatch(/^error: the API key in AERIAL_API_KEY contains a space \(U\+0020\) at character \d+ of \d+; a key is printable ASCII without spaces: set it again without that\n$/);
    expect(hostile.requests).toEqual([]);
  });

  it('no file the CLI left behind holds the key, except the 0600 config file', () => {
    const files = Object.values(dirs).flatMap(filesUnder);
    const configFile = join(dirs.config, 'config.json');
    // The scan sees what the runs above produced: images, the manifest, the export index, the in-process sandbox's state.
    expect(files).toContain(configFile);
    expect(files.filter((f) => f.endsWith('.jpg')).length).toBeGreaterThanOrEqual(6);
    expect(files.some((f) => f.endsWith('index.jsonl'))).toBe(true);
    const holding = files.filter((file) => {
      const bytes = readFileSync(file);
      return bytes.includes(KEY) || bytes.includes(FRAGMENT) || bytes.includes(Buffer.from(KEY).toString('base64'));
    });
    expect(holding.map((f) => relative(root.path, f))).toEqual(['config/config.json']);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    // No half-written leftovers either.
    expect(files.filter((f) => f.endsWith('.part'))).toEqual([]);
  });
});
