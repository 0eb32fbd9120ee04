// 'aerial/sandbox' (src/library/sandbox.ts): the sandbox as a test fixture, in
// this process over real sockets: a private data directory unless told, the
// fault knobs, the request log, accounts, and nothing left behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { API_PATH } from '../../../src/api/spec.js';
import { GenAerial, InsufficientCredits, RateLimited, ServerError } from '../../../src/library/index.js';
import { startSandbox, type Sandbox } from '../../../src/library/sandbox.js';

const running: Sandbox[] = [];
const clients: GenAerial[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(running.splice(0).map((sandbox) => sandbox.close()));
});

async function fixture(options: Parameters<typeof startSandbox>[0] = {}): Promise<{ sandbox: Sandbox; client: GenAerial }> {
  const sandbox = await startSandbox({ renderThreads: 0, ...options });
  running.push(sandbox);
  const client = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, env: {}, retry: { rateLimitedAttempts: 1 } });
  clients.push(client);
  return { sandbox, client };
}

const paris = { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD' } as const;

describe('startSandbox', () => {
  it('serves on a free loopback port, over a temporary directory of its own that close() removes', async () => {
    const sandbox = await startSandbox({ renderThreads: 0 });
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.port).toBeGreaterThan(0);
    expect(sandbox.dataDir.startsWith(tmpdir())).toBe(true);
    expect(existsSync(sandbox.dataDir)).toBe(true);
    const other = await startSandbox({ renderThreads: 0 });
    expect(other.port).not.toBe(sandbox.port);
    expect(other.dataDir).not.toBe(sandbox.dataDir);
    await Promise.all([sandbox.close(), other.close()]);
    expect(existsSync(sandbox.dataDir)).toBe(false);
    await sandbox.close();
  });

  it('keeps a data directory it was given', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aerial-fixture-'));
    try {
      const sandbox = await startSandbox({ renderThreads: 0, dataDir, apiKey: 'sk_fixture_key_0001' });
      expect(sandbox.apiKey).toBe('sk_fixture_key_0001');
      await sandbox.close();
      expect(readdirSync(dataDir).length).toBeGreaterThan(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('logs the requests it answered, without the key', async () => {
    const { sandbox, client } = await fixture();
    await client.generate(paris);
    await client.list({ size: 5 });
    const log = sandbox.requests();
    expect(log.map((entry) => [entry.method, entry.path, entry.status])).toEqual([
      ['POST', API_PATH, 200],
      ['GET', API_PATH, 200],
    ]);
    expect(log[1]!.query).toEqual({ size: '5' });
    expect(JSON.stringify(log)).not.toContain(sandbox.apiKey);
    sandbox.clearRequests();
    expect(sandbox.requests()).toEqual([]);
  });

  it('turns its fault knobs: credits, failures, rate limit, latency', async () => {
    const { sandbox, client } = await fixture({ credits: 1, latencyMs: 150 });
    expect(sandbox.faults()).toMatchObject({ latencyMs: 150, failRate: 0, dropRate: 0, webhookFail: 0 });
    const started = Date.now();
    await client.generate(paris);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await sandbox.credits()).toBe(0);
    await expect(client.generate(paris)).rejects.toBeInstanceOf(InsufficientCredits);

    const account = await sandbox.createAccount({ credits: 5 });
    const other = new GenAerial({ apiKey: account.apiKey, baseUrl: sandbox.url, env: {}, retry: { rateLimitedAttempts: 1 } });
    clients.push(other);
    sandbox.setFaults({ latencyMs: 0, failRate: 1 });
    await expect(other.generate(paris)).rejects.toMatchObject({ constructor: ServerError, status: 500, code: 'ErrorGeneratingImage' });
    sandbox.setFaults({ failRate: 0, rateLimit: 1 });
    const answers = await Promise.allSettled([other.list(), other.list(), other.list()]);
    expect(answers.some((answer) => answer.status === 'rejected' && answer.reason instanceof RateLimited && answer.reason.retryAfterSeconds! >= 1)).toBe(true);
    expect(await sandbox.credits(account.apiKey)).toBe(5);
  });

  it('refuses a knob out of range, naming it, and leaves no directory behind', async () => {
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('aerial-sandbox-')).length;
    await expect(startSandbox({ failRate: 2 })).rejects.toThrow(/failRate must be between 0 and 1/);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('aerial-sandbox-')).length).toBe(before);
  });
});
