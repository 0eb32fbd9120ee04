// End-to-end: bin/aerial.js against the sandbox over real sockets, for
// generate, list, delete and config, and every exit code they can produce.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import { beforeAll, describe, expect, it } from 'vitest';
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

  it('prints {file, bytes, request} with --json', async () => {
    const out = join(home.path, 'json.jpg');
    const result = await cli(['generate', '--at', 'geo:40.6892,-74.0445', '--resolution', 'HD', '--tag', 'harbor', '-o', out, '--json']);
    expect(result.exitCode).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed.file).toBe(out);
    expect(printed.bytes).toBe(statSync(out).size);
    expect(printed.request.coordinates).toEqual({ lat: 40.6892, lng: -74.0445 });
    expect(printed.request.tags).toEqual(['harbor']);
  });

  it('refuses to overwrite without --force, before sending anything', async () => {
    const out = join(home.path, 'taken.jpg');
    writeFileSync(out, 'keep me');
    const refused = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/already exists; pass --force/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
    expect(apiRequests()).toHaveLength(0);

    const forced = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out, '--force']);
    expect(forced.exitCode).toBe(0);
    expect(readFileSync(out).subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
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

  describe('bad input exits 2, names the flag and sends nothing', () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['missing lat', ['--lng', '2'], /--lat is required/],
      ['missing lng', ['--lat', '2'], /--lng is required/],
      ['lat out of range', ['--lat', '90.5', '--lng', '2'], /--lat must be between -90 and 90/],
      ['lng out of range', ['--lat', '1', '--lng', '-180.01'], /--lng must be between -180 and 180/],
      ['lat not a number', ['--lat', 'north', '--lng', '2'], /--lat must be a decimal number/],
      ['swapped coordinates', ['--lat', '-122.42', '--lng', '37.77'], /did you swap --lat and --lng/],
      ['resolution', ['--lat', '1', '--lng', '2', '--resolution', '4K'], /--resolution must be one of HD, FHD, UHD/],
      ['zoom', ['--lat', '1', '--lng', '2', '--zoom', 'Closer'], /--zoom must be one of ExtraLow, Low, Medium, High, ExtraHigh/],
      ['bearing typo', ['--lat', '1', '--lng', '2', '--bearing', 'NorthEats'], /--bearing must be one of .*did you mean NorthEast\?/],
      ['angle', ['--lat', '1', '--lng', '2', '--angle', 'Side'], /--angle must be one of Low, Medium, High, Top/],
      ['weather', ['--lat', '1', '--lng', '2', '--weather', 'Foggy'], /--weather must be one of/],
      ['daytime', ['--lat', '1', '--lng', '2', '--daytime', 'Noon'], /--daytime must be one of Dusk, Day, Dawn, Night/],
      ['aspect ratio', ['--lat', '1', '--lng', '2', '--aspect-ratio', 'Wide'], /--aspect-ratio must be one of Square, Landscape, Portrait, Standard/],
      ['epoch', ['--lat', '1', '--lng', '2', '--epoch', 'Future'], /--epoch must be one of Nowadays, Historical, Ancient/],
      ['eleven tags', ['--lat', '1', '--lng', '2', ...Array.from({ length: 11 }, (_, i) => ['--tag', `t${i}`]).flat()], /--tag may be given at most 10 times; got 11/],
      ['empty prompt', ['--lat', '1', '--lng', '2', '--prompt', ' '], /--prompt must not be empty/],
      ['bad --at', ['--at', '48.85'], /--at must be "LAT,LNG"/],
      ['ambiguous place', ['--at', 'Springfield'], /^error: AmbiguousPlace — --at 'Springfield' names \d+ places: Springfield, Missouri, US \(/],
      ['unknown flag', ['--lat', '1', '--lng', '2', '--zooom', 'High'], /unknown option '--zooom'/],
    ];
    it.each(cases)('%s', async (_name, args, message) => {
      const out = join(home.path, 'never.jpg');
      const result = await cli(['generate', ...args, '-o', out]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')[0]).toMatch(/^error: /);
      expect(result.stdout).toBe('');
      expect(existsSync(out)).toBe(false);
      expect(apiRequests()).toHaveLength(0);
    });

    it('reports the failure as one JSON line with --json', async () => {
      const result = await cli(['generate', '--lat', '1', '--lng', '2', '--zoom', 'Hihg', '--json']);
      expect(result.exitCode).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ status: null, error: 'UsageError', exitCode: 2 });
      expect(apiRequests()).toHaveLength(0);
    });
  });
});

describe('exit codes from the service', () => {
  it('3 for a wrong key', async () => {
    const wrongKey = 'sbx_wrong_key_for_test_0001';
    registerSecret(wrongKey);
    const result = await cli(['list'], { env: { AERIAL_API_KEY: wrongKey } });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/^error: Unauthorized — /);
  });

  it('4 when the account has too few credits, and nothing is written', async () => {
    const poor = await sandbox.createAccount({ credits: 1 });
    registerSecret(poor.key);
    const out = join(home.path, 'poor.jpg');
    const result = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'UHD', '-o', out], { env: { AERIAL_API_KEY: poor.key } });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(/InsufficientCredits/);
    expect(existsSync(out)).toBe(false);
    expect(await sandbox.credits(poor.key)).toBe(1);
  });

  it('5 when deleting an unknown id', async () => {
    const result = await cli(['delete', 'no-such-image', '--yes']);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/NotFound/);
  });

  it('6 when generation fails, leaving no file', async () => {
    sandbox.setFaults({ failRate: 1 });
    const out = join(home.path, 'failed.jpg');
    const result = await cli(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out]);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/ErrorGeneratingImage/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(home.path).filter((f) => f.endsWith('.part'))).toEqual([]);
  });

  it('7 when the service cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await cli(['list'], { env: { AERIAL_BASE_URL: `http://127.0.0.1:${port}` } });
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toMatch(new RegExp(`^error: could not connect to 127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED; 3 attempts in \\d+(\\.\\d)?s\\)\n$`));
  });

  it('8 when still rate limited after the retries', async () => {
    const limited = await sandbox.createAccount({ credits: 10 });
    registerSecret(limited.key);
    sandbox.setFaults({ rateLimit: 0.01 });
    const as = { env: { AERIAL_API_KEY: limited.key, AERIAL_MAX_RETRY_AFTER: '0.05' } };
    expect((await cli(['list', '--json'], as)).exitCode).toBe(0);
    const result = await cli(['list', '--json'], as);
    expect(result.exitCode).toBe(8);
    expect(JSON.parse(result.stderr.trim())).toMatchObject({ status: 429, exitCode: 8 });
    // The first answer and three retries, each refused.
    expect(apiRequests().filter((r) => r.status === 429)).toHaveLength(4);
  });

  it('2 for the service\'s own ValidationFailed', async () => {
    const result = await cli(['list', '--sort', 'colour,asc']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/ValidationFailed/);
  });

  it('2 for a refusal the contract does not list (418), never 1', async () => {
    const teapot: Server = createServer((_req, res) => res.writeHead(418, { 'content-type': 'text/plain' }).end("I'm a teapot"));
    await new Promise<void>((resolve) => teapot.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(teapot.address() as AddressInfo).port}`;
      const result = await cli(['list'], { env: { AERIAL_BASE_URL: url } });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/^error: Http418 — I'm a teapot\n$/);
    } finally {
      teapot.close();
    }
  });
});

describe('list', () => {
  let account: { key: string };
  const listEnv = () => ({ env: { AERIAL_API_KEY: account.key } });

  beforeAll(async () => {
    account = await sandbox.createAccount({ credits: 500 });
    registerSecret(account.key);
    for (let i = 0; i < 5; i++) {
      const result = await cli(['generate', '--lat', String(10 + i), '--lng', String(20 + i), '--resolution', 'HD', '-o', join(home.path, `list-${i}.jpg`)], listEnv());
      expect(result.exitCode).toBe(0);
    }
  });

  it('prints the API page object with --json', async () => {
    const result = await cli(['list', '--json', '--size', '2'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse(result.stdout));
    expect(page).toMatchObject({ totalElements: 5, totalPages: 3, page: 0, size: 2 });
    expect(page.content).toHaveLength(2);
    expect(page.content[0]!.coordinates).toEqual({ latitude: 14, longitude: 24 });
    expect(result.stderr).toBe('');
  });

  it('walks every page with --all, and honours --sort', async () => {
    const result = await cli(['list', '--all', '--size', '2', '--sort', 'createdAt,asc', '--json'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse(result.stdout));
    expect(page.content.map((r) => r.coordinates.latitude)).toEqual([10, 11, 12, 13, 14]);
    expect(apiRequests().filter((r) => r.method === 'GET')).toHaveLength(3);
  });

  it('piped, prints one tab-separated line per image (the terminal table: list-output.test.ts)', async () => {
    const result = await cli(['list'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse((await cli(['list', '--json'], listEnv())).stdout));
    expect(result.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0])).toEqual(page.content.map((record) => record.id));
    expect(result.stdout).toContain('\tHD\t12\t22\n');
    expect(result.stdout).not.toMatch(/\u001b\[/);
    expect(result.stderr).toBe('Page 0, the only one (5 images)\n');
  });

  it('never shows another account\'s images', async () => {
    const other = await sandbox.createAccount({ credits: 10 });
    registerSecret(other.key);
    const result = await cli(['list', '--json'], { env: { AERIAL_API_KEY: other.key } });
    expect(JSON.parse(result.stdout)).toMatchObject({ totalElements: 0, content: [] });
  });

  it('refuses bad paging values before sending', async () => {
    for (const args of [['--size', '0'], ['--page', '-1'], ['--size', 'ten'], ['--sort', 'createdAt,sideways']]) {
      const result = await cli(['list', ...args], listEnv());
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(new RegExp(args[0]!));
    }
    expect(apiRequests()).toHaveLength(0);
  });
});

describe('delete', () => {
  let account: { key: string };
  const as = () => ({ env: { AERIAL_API_KEY: account.key } });
  async function ids(): Promise<string[]> {
    return pageSchema().parse(JSON.parse((await cli(['list', '--json'], as())).stdout)).content.map((r) => r.id);
  }

  beforeAll(async () => {
    account = await sandbox.createAccount({ credits: 100 });
    registerSecret(account.key);
    for (let i = 0; i < 3; i++) {
      await cli(['generate', '--lat', '1', '--lng', String(i), '--resolution', 'HD', '-o', join(home.path, `del-${i}.jpg`)], as());
    }
  });

  it('refuses without a terminal and without --yes, sending nothing', async () => {
    const [first] = await ids();
    sandbox.clearRequests();
    const result = await cli(['delete', first!], as());
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/pass --yes/);
    expect(apiRequests()).toHaveLength(0);
  });

  it('deletes with --yes, printing the ids it deleted', async () => {
    const [first, second, third] = await ids();
    const result = await cli(['delete', first!, second!, '--yes'], as());
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([first, second]);
    expect(await ids()).toEqual([third]);
  });

  it('cannot delete another account\'s image (404, exit 5)', async () => {
    const [mine] = await ids();
    const other = await sandbox.createAccount({ credits: 1 });
    registerSecret(other.key);
    const result = await cli(['delete', mine!, '--yes'], { env: { AERIAL_API_KEY: other.key } });
    expect(result.exitCode).toBe(5);
    expect(await ids()).toEqual([mine]);
  });
});

describe('config', () => {
  it('sets, gets, lists with sources, and unsets values per profile', async () => {
    const dir = tempDir();
    const run = (args: string[], extra: Record<string, string> = {}, input?: string) =>
      runCli(args, { configDir: dir.path, env: extra, input });
    try {
      expect((await run(['config', 'set', 'base-url', sandbox.url])).exitCode).toBe(0);
      expect((await run(['config', 'set', 'defaults.zoom', 'high'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'])).stdout).toBe('High\n');
      const keySet = await run(['config', 'set', 'api-key'], {}, `${sandbox.defaultKey}\n`);
      expect(keySet.exitCode).toBe(0);
      expect(keySet.stderr).toMatch(/Set api-key = sbx_/);

      const file = (await run(['config', 'path'])).stdout.trim();
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default.apiKey).toBe(sandbox.defaultKey);

      const listed = JSON.parse((await run(['config', 'list', '--json'], { AERIAL_BASE_URL: 'http://env.example' })).stdout);
      expect(listed['base-url']).toEqual({ value: 'http://env.example', source: 'env' });
      expect(listed['defaults.zoom']).toEqual({ value: 'High', source: 'profile' });
      expect(listed['defaults.weather']).toEqual({ value: 'Sunny', source: 'default' });
      expect(listed['api-key'].source).toBe('profile');

      // The stored settings are what a plain command uses.
      const generated = await run(['generate', '--lat', '3', '--lng', '4', '--resolution', 'HD', '-o', join(dir.path, 'cfg.jpg'), '--json']);
      expect(generated.exitCode).toBe(0);
      expect(JSON.parse(generated.stdout).request.zoom).toBe('High');

      expect((await run(['config', 'set', 'defaults.zoom', 'Low', '--profile', 'work'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'], { AERIAL_PROFILE: 'work' })).stdout).toBe('Low\n');
      expect((await run(['config', 'unset', 'defaults.zoom'])).exitCode).toBe(0);
      expect((await run(['config', 'get', 'defaults.zoom'])).stdout).toBe('Medium\n');
      const bad = await run(['config', 'set', 'defaults.zoom', 'Hihg']);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(/did you mean High\?/);
    } finally {
      dir.remove();
    }
  });

  it('names a missing key, with where to get one for the public service, and suggests the sandbox', async () => {
    const dir = tempDir();
    try {
      // Nothing configured: the public service is the default, and it needs a key; nothing is sent.
      const noKey = await runCli(['list'], { configDir: dir.path });
      // No key is an authentication failure (exit 3), as a refused key is.
      expect(noKey.exitCode).toBe(3);
      expect(noKey.stderr).toBe(
        "error: no API key (sign up at genaerial.com for one): set AERIAL_API_KEY, run 'aerial init' or 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox\n",
      );
      const noKeyHere = await runCli(['list'], { configDir: dir.path, env: { AERIAL_BASE_URL: sandbox.url } });
      expect(noKeyHere.exitCode).toBe(3);
      expect(noKeyHere.stderr).toMatch(/^error: no API key: set AERIAL_API_KEY/);
    } finally {
      dir.remove();
    }
  });
});

describe('output rules', () => {
  it('traces requests with --verbose, never the key', async () => {
    const result = await cli(['list', '--verbose', '--json']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/→ GET http:\/\/127\.0\.0\.1:\d+\/api\/external\/v1\/image-generation 200 \d+ms/);
    expect(result.stderr).not.toContain(sandbox.defaultKey);
  });

  it('colours only when asked to off a terminal', async () => {
    const plain = await cli(['delete', 'x']);
    expect(plain.stderr).not.toMatch(/\u001b\[/);
    const forced = await cli(['delete', 'x'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stderr).toMatch(/\u001b\[31merror:/);
    const vetoed = await cli(['delete', 'x'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(vetoed.stderr).not.toMatch(/\u001b\[/);
  });

  it('--quiet leaves only data', async () => {
    const out = join(home.path, 'quiet.jpg');
    const result = await cli(['generate', '--lat', '5', '--lng', '5', '--resolution', 'HD', '-o', out, '--quiet']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    expect(result.stderr).toBe('');
  });

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
