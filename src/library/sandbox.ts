// 'aerial/sandbox': the bundled sandbox as a test fixture, for a user's own
// test suite. A deliberate face over src/sandbox/server.ts (what `aerial
// sandbox` and every `--sandbox` run start): in this process, on a free
// loopback port, over a private temporary data directory unless one is given,
// never the user's own sandbox directory. It writes nothing to a terminal.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox as startServer, type FaultSettings, type RequestLogEntry } from '../sandbox/server.js';

export interface SandboxOptions {
  /** Where images and accounts are kept; default a new temporary directory, removed by close(). */
  dataDir?: string;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind; default 0, a free one. */
  port?: number;
  /** The API key of the default account; default a new random one. */
  apiKey?: string;
  /** Credits of the default account; default 100. Each generation costs one; 0 gets 402 InsufficientCredits. */
  credits?: number;
  /** Least time before each answer and webhook, in milliseconds (0 to 600000). */
  latencyMs?: number;
  /** Share of generations that fail with ErrorGeneratingImage (0 to 1). */
  failRate?: number;
  /** Share of requests whose connection is reset before anything is done (0 to 1). */
  dropRate?: number;
  /** Requests per second per account, beyond which the answer is 429 with Retry-After; default unlimited. */
  rateLimit?: number;
  /** The first n webhook deliveries fail (they are retried, as the service's are). */
  webhookFail?: number;
  /** Seeds the fault decisions, so a run's faults can be replayed; default random (see `seed`). */
  seed?: number;
  /** Render threads; default min(2, CPUs). 0 renders on the main thread. */
  renderThreads?: number;
  /** Told of what the sandbox would warn about (a missing render script, a damaged data file). */
  onWarning?: (message: string) => void;
}

/** The fault knobs, as they are now. */
export interface SandboxFaults {
  latencyMs: number;
  failRate: number;
  dropRate: number;
  /** Undefined: unlimited. */
  rateLimit?: number;
  webhookFail: number;
}

/** One request the sandbox answered (or dropped). The key itself is never logged: its account's id is. */
export interface SandboxRequest {
  seq: number;
  /** ISO 8601. */
  time: string;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** Null when the connection was dropped or closed before an answer. */
  status: number | null;
  /** The error code of an error answer (ValidationFailed, InsufficientCredits, …). */
  error?: string;
  keyId: string | null;
  /** The parsed JSON body of a generation request. */
  body?: unknown;
  callbackUrl?: string;
  requestId?: string;
  imageId?: string;
  dropped?: boolean;
  durationMs: number;
}

export interface Sandbox {
  /** The base URL: pass it as GenAerial's baseUrl (or AERIAL_BASE_URL). */
  readonly url: string;
  /** The default account's API key. */
  readonly apiKey: string;
  readonly port: number;
  readonly dataDir: string;
  /** The seed of the fault decisions. */
  readonly seed: number;
  /** Every request answered since the start (or the last clearRequests), oldest first. */
  requests(): SandboxRequest[];
  clearRequests(): void;
  faults(): SandboxFaults;
  /** Changes fault knobs from now on; those not named stay. */
  setFaults(patch: Partial<SandboxFaults>): void;
  /** Credits left on the account of `apiKey` (default: the default account's); undefined for an unknown key. */
  credits(apiKey?: string): Promise<number | undefined>;
  /** Another account, with its own key, credits and history. */
  createAccount(options?: { credits?: number; apiKey?: string }): Promise<{ apiKey: string; credits: number }>;
  /** Resolves once no async generation or webhook delivery is pending. */
  idle(): Promise<void>;
  /** Stops the server, ends its connections and removes the temporary data directory it made. */
  close(): Promise<void>;
}

// The published types are the server's, written out: these stop compiling if the two part.
const publicFaults = (faults: FaultSettings): SandboxFaults => faults;
const publicRequest = ({ apiKeyHeader: _header, via: _via, ...entry }: RequestLogEntry): SandboxRequest => entry;

/** Starts a sandbox in this process (docs/library.md); close() it when done. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const ownDir = options.dataDir === undefined ? await mkdtemp(join(tmpdir(), 'aerial-sandbox-')) : undefined;
  const dataDir = options.dataDir ?? ownDir!;
  let server;
  try {
    server = await startServer({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      dataDir,
      key: options.apiKey,
      credits: options.credits,
      latencyMs: options.latencyMs,
      failRate: options.failRate,
      dropRate: options.dropRate,
      rateLimit: options.rateLimit,
      webhookFail: options.webhookFail,
      seed: options.seed,
      renderThreads: options.renderThreads,
      onWarning: options.onWarning,
    });
  } catch (error) {
    if (ownDir) await rm(ownDir, { recursive: true, force: true });
    throw error;
  }
  const running = server;
  let closing: Promise<void> | undefined;
  return {
    url: running.url,
    apiKey: running.defaultKey,
    port: running.port,
    dataDir,
    seed: running.seed,
    requests: () => running.requests().map(publicRequest),
    clearRequests: () => running.clearRequests(),
    faults: () => publicFaults(running.faults()),
    setFaults: (patch) => running.setFaults(patch),
    credits: (apiKey = running.defaultKey) => running.credits(apiKey),
    createAccount: async ({ credits, apiKey } = {}) => {
      const account = await running.createAccount({ credits, key: apiKey });
      return { apiKey: account.key, credits: account.credits };
    },
    idle: () => running.idle(),
    close: () =>
      (closing ??= (async () => {
        await running.close();
        if (ownDir) await rm(ownDir, { recursive: true, force: true });
      })()),
  };
}
