// End-to-end: bin/aerial.js against the sandbox over real sockets, for
// generate, list, delete and config: a smoke test of each, the JPEG on a pipe,
// an exit code as the shell sees it, and --sandbox's history between runs.
// What the commands print and refuse, and the exit code of every answer, are
// tested in-process: test/unit/commands/{generate,delete,config}.test.ts,
// test/unit/commands/list/listing.test.ts, test/unit/cli/exit-codes.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import { describe, expect, it } from 'vitest';
import { generationRequestSchema, pageSchema } from '../../src/api/schema.js';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let env: Record<string, string>;

function cli(args: string[], extra: { env?: Record<string, string | undefined>; input?: string } = {}) {
  return runCli(args, { configDir: home.path, env: { ...env, ...extra.env }, input: extra.input });
}

function apiRequests() {
  return sandbox.requests().filter((entry) => entry.path.startsWith('/api/'));
}

useSandboxPerFile(
  (started, tempHome) => {
    sandbox = started;
    home = tempHome;
    env = sandbox.env();
  },
  { seed: 7 },
);

describe('generate', () => {
  it('streams a JPEG of the requested size to --output and prints its path', async () => {
    const out = join(home.path, 'eiffel.jpg');
    const result = await cli(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'hd', '--bearing', 'NE', '-o', out]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    const image = jpeg.decode(readFileSync(out), { useTArray: true });
    expect([image.width, image.height]).toEqual([1280, 720]);
    const [sent] = apiRequests();
    expect(sent?.method).toBe('POST');
    expect(generationRequestSchema().parse(sent?.body)).toMatchObject({
      coordinates: { lat: 48.8584, lng: 2.2945 },
      resolution: 'HD',
      bearing: 'NorthEast',
      tags: [],
    });
    expect(readdirSync(home.path).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('writes the JPEG to stdout with -o - when stdout is not a terminal', async () => {
    const result = await runCli(['generate', '--lat', '10', '--lng', '20', '--resolution', 'HD', '-o', '-'], {
      configDir: home.path,
      env,
      encoding: 'buffer',
    });
    expect(result.exitCode).toBe(0);
    expect(apiRequests()).toHaveLength(1);
  });
});

describe('exit codes as the shell sees them', () => {
  it('2 for a usage error: one line naming the flag and the help, nothing on stdout', async () => {
    const result = await cli(['list', '--sizee', '3']);
    expect(result).toEqual({ exitCode: 2, stdout: '', stderr: "error: unknown option '--sizee' (did you mean --size?); see 'aerial list --help'\n" });
  });

  it('3 for a wrong key', async () => {
    const wrongKey = 'sbx_wrong_key_for_test_0001';
    registerSecret(wrongKey);
    const result = await cli(['list'], { env: { AERIAL_API_KEY: wrongKey } });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/^error: Unauthorized — /);
  });
});

describe('list, delete and config (smoke: in-process tests in test/unit/commands/)', () => {
  it('list --json prints the page of the images generated, and delete --yes removes one', async () => {
    const account = await sandbox.createAccount({ credits: 10 });
    registerSecret(account.key);
    const as = { env: { AERIAL_API_KEY: account.key } };
    expect((await cli(['generate', '--lat', '10', '--lng', '20', '--resolution', 'HD', '-o', join(home.path, 'listed.jpg')], as)).exitCode).toBe(0);
    const listed = await cli(['list', '--json'], as);
    expect(listed.exitCode).toBe(0);
    expect(listed.stderr).toBe('');
    const page = pageSchema().parse(JSON.parse(listed.stdout));
    expect(page.content.map((record) => record.coordinates)).toEqual([{ latitude: 10, longitude: 20 }]);
    const deleted = await cli(['delete', page.content[0]!.id, '--yes'], as);
    expect(deleted.exitCode).toBe(0);
    expect(deleted.stdout).toBe(`${page.content[0]!.id}\n`);
    expect(JSON.parse((await cli(['list', '--json'], as)).stdout)).toMatchObject({ totalElements: 0, content: [] });
  });

  it('config set stores a value that config get and a plain command read back', async () => {
    const dir = tempDir();
    try {
      expect((await runCli(['config', 'set', 'defaults.zoom', 'high'], { configDir: dir.path })).exitCode).toBe(0);
      expect((await runCli(['config', 'get', 'defaults.zoom'], { configDir: dir.path })).stdout).toBe('High\n');
      const generated = await runCli(['generate', '--lat', '3', '--lng', '4', '--resolution', 'HD', '-o', join(dir.path, 'cfg.jpg'), '--json'], { configDir: dir.path, env });
      expect(generated.exitCode).toBe(0);
      expect(JSON.parse(generated.stdout).request.zoom).toBe('High');
    } finally {
      dir.remove();
    }
  });
});

describe('output rules', () => {
  it('--sandbox runs in-process and keeps history between runs', async () => {
    const dir = tempDir();
    try {
      const made = await runCli(['generate', '--sandbox', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', join(dir.path, 'e.jpg')], { configDir: dir.path });
      expect(made.exitCode).toBe(0);
      const listed = await runCli(['list', '--sandbox', '--json'], { configDir: dir.path });
      expect(listed.exitCode).toBe(0);
      expect(JSON.parse(listed.stdout).content[0].coordinates).toEqual({ latitude: 48.8584, longitude: 2.2945 });
    } finally {
      dir.remove();
    }
  });
});
