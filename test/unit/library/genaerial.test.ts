// The library's client (src/library/genaerial.ts) against the sandbox fixture
// over real sockets: settings read as the CLI reads them, bad settings refused
// before anything is sent, typed errors, files written whole or not at all, the
// whole history walked, the retry policy as an option, and nothing written to
// the terminal.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GenAerialClient } from '../../../src/api/client.js';
import {
  ApiError,
  GenAerial,
  InvalidInputError,
  NotFound,
  RequestError,
  Unauthorized,
  ValidationFailed,
  type ImageRequest,
  type RequestTrace,
} from '../../../src/library/index.js';
import { startSandbox, type Sandbox } from '../../../src/library/sandbox.js';

let sandbox: Sandbox;
const work = mkdtempSync(join(tmpdir(), 'aerial-library-unit-'));
const config = join(work, 'config');
const clients: GenAerial[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ renderThreads: 0, credits: 50 });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  sandbox.clearRequests();
});
afterAll(async () => {
  await sandbox.close();
  rmSync(work, { recursive: true, force: true });
});

/** A client whose environment holds only `env` and a config directory of its own. */
function client(env: Record<string, string> = {}, options: ConstructorParameters<typeof GenAerial>[0] = {}): GenAerial {
  const made = new GenAerial({ env: { AERIAL_CONFIG_DIR: config, ...env }, ...options });
  clients.push(made);
  return made;
}
const atSandbox = () => ({ AERIAL_API_KEY: sandbox.apiKey, AERIAL_BASE_URL: sandbox.url });
const tokyo: ImageRequest = { coordinates: { lat: 35.6586, lng: 139.7454 }, resolution: 'HD' };

describe('GenAerial', () => {
  it('reads its settings as the CLI does: the environment, then the config file', async () => {
    expect((await client(atSandbox()).list()).page).toBe(0);
    mkdirSync(config, { recursive: true });
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { work: { apiKey: sandbox.apiKey, baseUrl: sandbox.url } } }), { mode: 0o600 });
    expect((await client({ AERIAL_PROFILE: 'work' }).list()).page).toBe(0);
    expect((await client({}, { profile: 'work' }).list()).page).toBe(0);
    expect(sandbox.requests()).toHaveLength(3);
  });

  it('sends the vocabulary defaults for the scene settings left out, as the CLI', async () => {
    await client(atSandbox()).generate({ coordinates: { lat: 1, lng: 2 }, zoom: 'High' });
    expect(sandbox.requests()[0]!.body).toEqual({
      coordinates: { lat: 1, lng: 2 },
      resolution: 'FHD',
      zoom: 'High',
      bearing: 'North',
      angle: 'High',
      weather: 'Sunny',
      daytime: 'Day',
      aspectRatio: 'Landscape',
      epoch: 'Nowadays',
      tags: [],
    });
  });

  it('refuses a missing key, a bad base URL or a bad proxy with InvalidInputError, sending nothing', async () => {
    await expect(client({ AERIAL_BASE_URL: sandbox.url }).list()).rejects.toThrow(new InvalidInputError('no API key: pass { apiKey }, or set AERIAL_API_KEY'));
    await expect(client({}, { apiKey: 'k', baseUrl: 'ftp://x' }).list()).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client({ ...atSandbox(), HTTPS_PROXY: 'not a url' }).list()).rejects.toThrow(/HTTPS_PROXY/);
    await expect(client(atSandbox(), { timeoutMs: 0 }).list()).rejects.toThrow(/AERIAL_TIMEOUT_MS/);
    await expect(client(atSandbox()).delete('..')).rejects.toBeInstanceOf(InvalidInputError);
    expect(sandbox.requests()).toEqual([]);
  });

  it('throws typed errors carrying status and code, never the key', async () => {
    const lib = client(atSandbox());
    // Refused before sending, as the CLI refuses --lat 91 (operations/request.ts); the service would say ValidationFailed.
    const refused = await lib.generate({ coordinates: { lat: 91, lng: 0 } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect(refused).toBeInstanceOf(RequestError);
    expect(refused).toMatchObject({ name: 'InvalidInputError', code: 'InvalidInput', message: 'coordinates.lat must be between -90 and 90; got 91' });
    expect(sandbox.requests()).toEqual([]);
    expect(new ValidationFailed(400, 'ValidationFailed', 'no')).toBeInstanceOf(ApiError);
    await expect(lib.delete('no-such-image')).rejects.toMatchObject({ constructor: NotFound, status: 404, code: 'NotFound' });
    const wrongKey = `${sandbox.apiKey}x`;
    const denied = await client({ AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: wrongKey }).list().catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(Unauthorized);
    expect(JSON.stringify({ ...(denied as object), message: (denied as Error).message, stack: (denied as Error).stack })).not.toContain(wrongKey);
  });

  it('streams an image to a file, never over one already there unless told', async () => {
    const lib = client(atSandbox());
    const path = join(work, 'tokyo.jpg');
    const saved = await lib.generateToFile(tokyo, path);
    expect(saved).toEqual({ path, bytes: readFileSync(path).length });
    expect(readFileSync(path).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    sandbox.clearRequests();
    await expect(lib.generateToFile(tokyo, path)).rejects.toThrow(`${path} already exists; pass { overwrite: true } to replace it`);
    expect(sandbox.requests()).toEqual([]);
    await lib.generateToFile(tokyo, path, { overwrite: true });
    await expect(lib.generateToFile({ coordinates: { lat: 99, lng: 0 } }, join(work, 'refused.jpg'))).rejects.toBeInstanceOf(InvalidInputError);
    expect(existsSync(join(work, 'refused.jpg'))).toBe(false);
  });

  it('walks the whole history, page by page, each image once', async () => {
    const lib = client(atSandbox());
    const total = (await lib.list()).totalElements;
    const ids: string[] = [];
    for await (const image of lib.images({ size: 2 })) ids.push(image.id);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    expect(sandbox.requests().filter((entry) => entry.method === 'GET').length).toBe(1 + Math.ceil(total / 2));
  });

  it('takes the retry policy as an option, and reports each attempt', async () => {
    const traces: RequestTrace[] = [];
    sandbox.setFaults({ dropRate: 1 });
    try {
      const once = client(atSandbox(), { retry: { attempts: { lookup: 1 } }, onRequest: (trace) => traces.push(trace) });
      await expect(once.list()).rejects.toMatchObject({ name: 'NetworkError' });
      expect(sandbox.requests()).toHaveLength(1);
      sandbox.clearRequests();
      const twice = client(atSandbox(), { retry: { attempts: { lookup: 2 }, firstDelayMs: 1, maxDelayMs: 1 } });
      await expect(twice.list()).rejects.toMatchObject({ name: 'NetworkError' });
      expect(sandbox.requests()).toHaveLength(2);
    } finally {
      sandbox.setFaults({ dropRate: 0 });
    }
    expect(traces).toMatchObject([{ method: 'GET', status: 'error', attempt: 1 }]);
    expect(JSON.stringify(traces)).not.toContain(sandbox.apiKey);
  });

  it('catches an async generation through the CLI webhook listener', async () => {
    const lib = client(atSandbox());
    const listener = await lib.listen();
    try {
      const accepted = await lib.generateAsync(tokyo, { callbackUrl: listener.callbackUrl });
      const done = await listener.waitFor(accepted.requestId, { timeoutMs: 30_000 });
      expect(done.requestId).toBe(accepted.requestId);
      expect([...(await lib.download(done.signedUrl)).subarray(0, 2)]).toEqual([0xff, 0xd8]);
    } finally {
      await listener.close();
    }
    const whole = await lib.generateViaWebhook(tokyo, { timeoutMs: 30_000 });
    expect(whole.image.length).toBeGreaterThan(1000);
    expect(whole.creditsUsed).toBe(1);
  });

  it('writes nothing to the terminal and makes its calls through the CLI client', async () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write');
    const made = vi.spyOn(GenAerialClient.prototype, 'list');
    try {
      const lib = client(atSandbox());
      await lib.generate(tokyo);
      await lib.list();
      await lib.generate({ coordinates: { lat: -95, lng: 0 } }).catch(() => undefined);
      expect(made).toHaveBeenCalledTimes(1);
      expect(stdout).not.toHaveBeenCalled();
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('is done once closed', async () => {
    const lib = client(atSandbox());
    await lib.close();
    await expect(lib.list()).rejects.toThrow('this GenAerial client is closed');
  });
});
