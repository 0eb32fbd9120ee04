// The data directory: state survives restarts, several sandboxes may share it,
// abandoned locks and crash leftovers are recovered from, and a process killed
// mid-write never leaves it corrupt.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_PRICE } from '../../../src/api/enums.js';
import { defaultSandboxDir } from '../../../src/config/config.js';
import { generationRequest, manualClock, startTestSandbox, tempDataDir, type TestSandbox } from '../../helpers/sandbox.js';
import { bundleForNode, projectScratchDir } from '../worker-scripts.js';

const dirs: string[] = [];
const running: TestSandbox[] = [];

function dataDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return dir;
}

async function open(dir: string, options: Parameters<typeof startTestSandbox>[0] = {}): Promise<TestSandbox> {
  const sb = await startTestSandbox({ dataDir: dir, ...options });
  running.push(sb);
  return sb;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((sb) => sb.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function generate(sb: TestSandbox, key = sb.key): Promise<string> {
  const res = await fetch(sb.api(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(generationRequest()),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return res.headers.get('x-sandbox-image-id')!;
}

async function listIds(sb: TestSandbox, key = sb.key): Promise<{ ids: string[]; urls: string[] }> {
  const res = await fetch(`${sb.api()}?size=100`, { headers: { 'x-api-key': key } });
  const page = (await res.json()) as { content: Array<{ id: string; url: string }> };
  return { ids: page.content.map((r) => r.id), urls: page.content.map((r) => r.url) };
}

describe('the data directory', () => {
  it('defaults to $XDG_DATA_HOME/aerial/sandbox, not under the config directory', () => {
    expect(defaultSandboxDir({ AERIAL_CONFIG_DIR: '/tmp/aerial-config', XDG_DATA_HOME: '/tmp/data' })).toBe('/tmp/data/aerial/sandbox');
    expect(defaultSandboxDir({ HOME: '/home/someone' })).toBe('/home/someone/.local/share/aerial/sandbox');
    // A relative XDG_DATA_HOME is ignored, as the XDG rules say.
    expect(defaultSandboxDir({ HOME: '/home/someone', XDG_DATA_HOME: 'data' })).toBe('/home/someone/.local/share/aerial/sandbox');
  });

  it('keeps the default key, credits, images and URL secret across a restart', async () => {
    const dir = dataDir();
    const first = await open(dir);
    const kept = await generate(first);
    const deleted = await generate(first);
    expect((await fetch(first.api(`/${deleted}`), { method: 'DELETE', headers: { 'x-api-key': first.key } })).status).toBe(200);
    const before = await listIds(first);
    await first.close();

    const second = await open(dir);
    expect(second.key).toBe(first.key);
    expect(await second.credits(second.key)).toBe(1000 - 2 * SANDBOX_PRICE.HD);
    const after = await listIds(second);
    expect(after.ids).toEqual([kept]);
    expect(existsSync(join(dir, 'images', `${kept}.jpg`))).toBe(true);
    expect(existsSync(join(dir, 'images', `${deleted}.jpg`))).toBe(false);
    // A URL signed before the restart still verifies (the secret is in the data dir); only the port changed.
    const oldUrl = new URL(before.urls[0]!);
    oldUrl.port = String(second.port);
    expect((await fetch(oldUrl)).status).toBe(200);
  });

  it('writes state.json and images with mode 0600 inside a 0700 directory', async () => {
    const dir = dataDir();
    const sb = await open(dir);
    const id = await generate(sb);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toMatchObject({ version: 1 });
    if (process.platform !== 'win32') {
      expect(statSync(join(dir, 'state.json')).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'images', `${id}.jpg`)).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'images')).mode & 0o777).toBe(0o700);
    }
  });

  it('--credits sets the balance and --key makes a key the default, remembered for later starts', async () => {
    const dir = dataDir();
    await (await open(dir)).close();
    const fixed = await open(dir, { key: 'sbx_fixed-key-for-tests', credits: 3 });
    expect(fixed.key).toBe('sbx_fixed-key-for-tests');
    expect(await fixed.credits(fixed.key)).toBe(3);
    await fixed.close();
    const later = await open(dir);
    expect(later.key).toBe('sbx_fixed-key-for-tests');
    expect(await later.credits(later.key)).toBe(3);
    await later.close();
    const topped = await open(dir, { credits: 50 });
    expect(await topped.credits('sbx_fixed-key-for-tests')).toBe(50);
  });

  it('lets two sandboxes share one directory without losing an update', async () => {
    const dir = dataDir();
    const a = await open(dir);
    const b = await open(dir);
    expect(b.key).toBe(a.key);
    await Promise.all(Array.from({ length: 16 }, (_, i) => generate(i % 2 ? a : b)));
    expect(await a.credits(a.key)).toBe(1000 - 16 * SANDBOX_PRICE.HD);
    expect(await b.credits(b.key)).toBe(1000 - 16 * SANDBOX_PRICE.HD);
    expect((await listIds(a)).ids).toHaveLength(16);
    expect((await listIds(b)).ids).toEqual((await listIds(a)).ids);
    // An account made through one is usable through the other.
    const other = await a.createAccount({ credits: 4 });
    await generate(b, other.key);
    expect(await a.credits(other.key)).toBe(3);
  });

  it('takes over a lock left by a dead process and a stale unreadable one', async () => {
    const dir = dataDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'state.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), token: 'dead' }));
    // Renewed an hour ahead: never stale while the sandbox would wait for it, so only seeing its holder gone takes it.
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(join(dir, 'state.lock'), ahead, ahead);
    const sb = await open(dir);
    await generate(sb);

    writeFileSync(join(dir, 'state.lock'), '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'state.lock'), old, old);
    await generate(sb);
    expect(existsSync(join(dir, 'state.lock'))).toBe(false);
  });

  it('sweeps old temp and orphan files at start, and moves an unreadable state aside', async () => {
    const dir = dataDir();
    await (await open(dir)).close();
    const old = new Date(Date.now() - 5 * 60_000);
    const leftovers = [join(dir, '.state.json.999.abcdef.tmp'), join(dir, 'images', 'orphan-image.jpg'), join(dir, 'images', '.x.jpg.1.ff.tmp')];
    for (const path of leftovers) {
      writeFileSync(path, 'partial');
      utimesSync(path, old, old);
    }
    const young = join(dir, 'images', 'being-written.jpg');
    writeFileSync(young, 'in progress elsewhere');
    await (await open(dir)).close();
    expect(leftovers.filter((path) => existsSync(path))).toEqual([]);
    expect(existsSync(young)).toBe(true);

    writeFileSync(join(dir, 'state.json'), '{"version":1,"accounts":[');
    const warnings: string[] = [];
    const fresh = await open(dir, { onWarning: (message) => warnings.push(message) });
    expect(warnings.join('\n')).toMatch(/unreadable.*moved it to/);
    expect(readdirSync(dir).some((name) => name.startsWith('state.json.corrupt-'))).toBe(true);
    await generate(fresh);
  });

  it('forgets unlisted async images (saveImage:false) at the first start after their URLs expired', async () => {
    const dir = dataDir();
    const clock = manualClock();
    const sb = await open(dir, { now: clock.now, webhook: { attempts: 1 } });
    const res = await fetch(sb.api('/async'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': sb.key, 'x-callback-url': 'http://127.0.0.1:9/hook' },
      body: JSON.stringify(generationRequest({ saveImage: false })),
    });
    expect(res.status).toBe(202);
    await sb.idle();
    const stateOf = () => JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { images: Array<{ id: string; inHistory: boolean }> };
    const [image] = stateOf().images;
    expect(image).toMatchObject({ inHistory: false });
    await sb.close();

    clock.advance(60 * 60 * 1000);
    await (await open(dir, { now: clock.now })).close();
    expect(stateOf().images).toHaveLength(1);
    clock.advance(60 * 60 * 1000 + 1000);
    await (await open(dir, { now: clock.now })).close();
    expect(stateOf().images).toEqual([]);
    expect(existsSync(join(dir, 'images', `${image!.id}.jpg`))).toBe(false);
  });

  it('refuses a state file from a newer version instead of overwriting it', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ version: 99 }));
    await expect(startTestSandbox({ dataDir: dir })).rejects.toThrow(/newer aerial/);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toEqual({ version: 99 });
  });
});

describe('a sandbox process killed mid-write', () => {
  it('leaves a consistent data directory: every record has its file, every charge its record', async () => {
    const dir = dataDir();
    // Inside the checkout, so the bundled child finds sharp and the world data to render with.
    const work = projectScratchDir('aerial-sandbox-child-');
    dirs.push(work);
    const script = join(work, 'child.mjs');
    await bundleForNode({ script: `import { startSandbox } from './src/sandbox/server.ts';
          const sb = await startSandbox({ port: 0, dataDir: process.argv[2], seed: 1 });
          process.stdout.write(JSON.stringify({ url: sb.url, key: sb.defaultKey }) + '\\n');` }, script);

    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let text = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]!) as { url: string; key: string });
      });
      child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });

    // Keep it busy writing (16 clients, each sending its next request as soon as
    // the last is answered, so writes overlap and batch up), then kill it
    // without warning while requests are in flight.
    let answered = 0;
    let killed = false;
    let onAnswer: () => void = () => {};
    const enoughAnswered = new Promise<void>((resolve) => (onAnswer = () => ++answered >= 40 && resolve()));
    const client = async (worker: number): Promise<string[]> => {
      const outcomes: string[] = [];
      for (let i = 0; ; i++) {
        const sentBeforeKill = !killed;
        try {
          const res = await fetch(`${url}/api/external/v1/image-generation`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: JSON.stringify(generationRequest({ tags: [String((worker + i) % 2)] })),
          });
          await res.arrayBuffer();
          outcomes.push(res.status === 200 ? 'answered' : `HTTP ${res.status}`);
          onAnswer();
        } catch {
          if (sentBeforeKill) outcomes.push('cut off');
          return outcomes;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, worker) => client(worker));
    await enoughAnswered;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    killed = true;
    child.kill('SIGKILL');
    await exited;
    const outcomes = (await Promise.all(clients)).flat();
    expect(outcomes).toContain('cut off');
    expect(outcomes.filter((outcome) => outcome !== 'answered' && outcome !== 'cut off')).toEqual([]);

    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as {
      accounts: Array<{ key: string; credits: number }>;
      images: Array<{ id: string }>;
    };
    const account = state.accounts.find((a) => a.key === key)!;
    // An answer is sent only once its record is durable.
    expect(state.images.length).toBeGreaterThanOrEqual(outcomes.filter((outcome) => outcome === 'answered').length);
    expect(1000 - account.credits).toBe(state.images.length * SANDBOX_PRICE.HD);
    for (const image of state.images) expect(existsSync(join(dir, 'images', `${image.id}.jpg`))).toBe(true);

    // And the next start simply carries on from there.
    const next = await open(dir);
    expect(next.key).toBe(key);
    expect((await listIds(next)).ids).toHaveLength(state.images.length);
    await generate(next);
  });
});
