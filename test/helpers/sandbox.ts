// Starts the sandbox in-process for a test: a free port, a fresh temp data dir,
// deterministic faults, short webhook retries. close() stops it and removes the dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { GenerationRequest } from '../../src/api/schema.js';
import { API_PATH } from '../../src/api/spec.js';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { registerSecret, tempDir } from './cli.js';

type TempDir = ReturnType<typeof tempDir>;

export { API_PATH };

export interface TestSandbox extends RunningSandbox {
  /** The default account's key (same as defaultKey). */
  key: string;
  /** `url` + path, e.g. api('/async'). */
  api(path?: string): string;
  /** Environment for running bin/aerial.js against this sandbox. */
  env(): Record<string, string>;
  /** Stops the server; the data dir is removed unless keepDataDir was set. */
  close(): Promise<void>;
}

export interface TestSandboxOptions extends Partial<SandboxOptions> {
  /** Keep the data dir after close (e.g. to restart on it); the caller removes it. */
  keepDataDir?: boolean;
}

export function tempDataDir(prefix = 'aerial-sandbox-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestSandbox(options: TestSandboxOptions = {}): Promise<TestSandbox> {
  const { keepDataDir, ...rest } = options;
  const ownsDir = rest.dataDir === undefined;
  const dataDir = rest.dataDir ?? tempDataDir();
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 1,
      closeGraceMs: 0,
      ...rest,
      webhook: { firstRetryDelayMs: 20, timeoutMs: 2_000, ...rest.webhook },
      dataDir,
    });
  } catch (error) {
    if (ownsDir && !keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    ...sandbox,
    key: sandbox.defaultKey,
    api: (path = '') => `${sandbox.url}${API_PATH}${path}`,
    env: () => ({ AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.defaultKey }),
    async close() {
      await sandbox.close();
      if (ownsDir && !keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A clock the test moves by hand: createdAt, URL expiry and rate limits follow it. */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(start = Date.parse('2030-01-01T00:00:00.000Z')): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (ms) => {
      current = ms;
    },
  };
}

/** A valid wire-form generation request (HD by default: cheap to render and to charge). */
export function generationRequest(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    coordinates: { lat: 48.8584, lng: 2.2945 },
    resolution: 'HD',
    zoom: 'Medium',
    bearing: 'North',
    angle: 'High',
    weather: 'Sunny',
    daytime: 'Day',
    aspectRatio: 'Landscape',
    epoch: 'Nowadays',
    tags: [],
    ...overrides,
  };
}

/** The frame header of a JPEG: enough to prove an image is real, baseline, and of the implied size. */
export interface JpegInfo {
  baseline: boolean;
  width: number;
  height: number;
}

export function jpegInfo(bytes: Uint8Array): JpegInfo {
  const data = Buffer.from(bytes);
  if (data[0] !== 0xff || data[1] !== 0xd8) throw new Error('not a JPEG: no SOI marker');
  let offset = 2;
  while (offset + 4 <= data.length) {
    if (data[offset] !== 0xff) throw new Error(`not a JPEG: expected a marker at ${offset}`);
    const marker = data[offset + 1]!;
    const length = data.readUInt16BE(offset + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { baseline: marker === 0xc0, height: data.readUInt16BE(offset + 5), width: data.readUInt16BE(offset + 7) };
    }
    offset += 2 + length;
  }
  throw new Error('not a JPEG: no frame header');
}

/**
 * The usual end-to-end file setup: one sandbox and one temporary home for the
 * whole file, its key registered as a secret, and faults and the request log
 * reset before each test. `onStart` hands both to the file's own variables.
 */
export function useSandboxPerFile(
  onStart: (sandbox: TestSandbox, home: TempDir) => void,
  options: TestSandboxOptions & { homePrefix?: string } = {},
): void {
  const { homePrefix, ...sandboxOptions } = options;
  let sandbox: TestSandbox | undefined;
  let home: TempDir | undefined;
  beforeAll(async () => {
    home = tempDir(homePrefix);
    sandbox = await startTestSandbox(sandboxOptions);
    registerSecret(sandbox.key);
    onStart(sandbox, home);
  });
  afterAll(async () => {
    await sandbox?.close();
    home?.remove();
  });
  beforeEach(() => {
    sandbox!.clearRequests();
    sandbox!.setFaults({ failRate: 0, latencyMs: 0, dropRate: 0, webhookFail: 0, rateLimit: undefined });
  });
}

/**
 * For end-to-end files whose tests each want a sandbox of their own (fresh
 * history, their own options): the returned function starts one, registers its
 * key as a secret, and the sandbox is closed after the test.
 */
export function useSandboxPerTest(): (options?: TestSandboxOptions) => Promise<TestSandbox> {
  const started: TestSandbox[] = [];
  afterEach(async () => {
    while (started.length) await started.pop()!.close();
  });
  return async (options = {}) => {
    const sandbox = await startTestSandbox(options);
    registerSecret(sandbox.key);
    started.push(sandbox);
    return sandbox;
  };
}
