// 'aerial/sandbox': the bundled sandbox as a test fixture, for a user's own
// test suite. A deliberate face over src/sandbox/server.ts (what `aerial
// sandbox` and every `--sandbox` run start): in this process, on a free
// loopback port, over a private temporary data directory unless one is given,
// never the user's own sandbox directory. It writes nothing to a terminal.
import { rm } from 'node:fs/promises';
import { makePrivateTempDirectory } from '../files/atomic-file.js';
import { startSandbox as startServer, type DeliveryAttempt, type FaultSettings, type RequestLogEntry, type ScriptAnswer, type ScriptMatch } from '../sandbox/server.js';

export interface SandboxOptions {
  /** Where images and accounts are kept; default a new temporary directory, removed by close(). */
  dataDir?: string;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind; default 0, a free one. */
  port?: number;
  /** The API key of the default account; default a new random one. */
  apiKey?: string;
  /** Credits of the default account; default 1000. A generation costs HD 1, FHD 2, UHD 4; too few get 402 InsufficientCredits. */
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
  /** A scripted answer (use()) answered it, or shaped the sandbox's answer. */
  scripted?: true;
  durationMs: number;
}

/** Which requests a scripted answer is for (use()). */
export interface SandboxMatch {
  /** GET, POST, DELETE… in any case; default any. */
  method?: string;
  /**
   * The path, without the query: exact (`/api/external/v1/image-generation`),
   * with `*` for any characters (`/api/external/v1/image-generation/*`, the
   * temporary image URLs `/__sandbox/images/*`), or a RegExp; default any
   * path of the API or of a temporary image URL.
   */
  path?: string | RegExp;
  /** How many matching requests it answers: a whole number from 1, or Infinity; default 1. */
  times?: number;
}

/** What they get (use()). */
export interface SandboxAnswer {
  /**
   * Answer with this status instead of the sandbox's own answer (nothing is
   * charged or stored). A 4xx or 5xx comes with the service's error body
   * (`{status, error, message}`; for a temporary image URL, S3's XML) unless
   * `body` is given. Without a status the sandbox answers as usual, shaped by
   * the rest.
   */
  status?: number;
  /** Headers added to the answer (replacing its own of the same name), such as `{ 'retry-after': '0' }`. */
  headers?: Record<string, string>;
  /** The body of a `status` answer: a string, bytes, or any other value sent as JSON. */
  body?: unknown;
  /** Wait this many milliseconds before handling the request. */
  delayMs?: number;
  /** Reset the connection before anything is read or answered: the client sees a network error. */
  drop?: boolean;
  /** Send the headers and this many bytes of the body (its full length announced), then close the connection. */
  truncateAfterBytes?: number;
  /** Never finish: send nothing (or the headers and `truncateAfterBytes` bytes) and hold the connection until the client gives up, reset() or close(). */
  stall?: boolean;
}

/** One attempt at delivering an async generation's result to its x-callback-url. */
export interface SandboxWebhookDelivery {
  requestId: string;
  /** The x-callback-url. */
  url: string;
  /** From 1; a failed attempt is tried again, with a doubling wait, 6 times in all. */
  attempt: number;
  /** ISO 8601, on the sandbox's clock. */
  time: string;
  /** Which payload: the success one (signedUrl…) or the error one (errorCode…). */
  kind: 'success' | 'error';
  /** delivered: the receiver answered 2xx; failed: an error or another status; skipped: withheld by webhookFail. */
  outcome: 'delivered' | 'failed' | 'skipped';
  /** The receiver's status, when it answered. */
  status?: number;
  detail?: string;
  /** On the last attempt, when every attempt failed. */
  gaveUp?: boolean;
  /** What was posted (or, skipped, would have been), as the spec's Events give it. */
  payload:
    | { requestId: string; signedUrl: string; generatedImageId: string; creditsUsed: number }
    | { requestId: string; errorCode: string; errorMessage: string };
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
  /** Changes fault knobs from now on; those not named stay. A knob that does not exist, or a value out of range, throws naming it. */
  setFaults(patch: Partial<SandboxFaults>): void;
  /**
   * Scripts the answer of the next matching request(s): `match` says which
   * (`{ method, path, times }`), `answer` what they get (`{ status, headers,
   * body, delayMs, drop, truncateAfterBytes, stall }`). Scripts are used in
   * the order they were added, each for `times` requests (default 1); a
   * request no script matches is answered as the service would. A field that
   * does not exist or a value out of range throws naming it.
   */
  use(match: SandboxMatch, answer: SandboxAnswer): void;
  /** Moves the sandbox's clock on by `ms`: new images' createdAt, the 2-hour life of listed URLs and the rate limit follow it. */
  advanceTime(ms: number): void;
  /** Every attempt at delivering a webhook since the start (or the last reset), oldest first. */
  webhookDeliveries(): SandboxWebhookDelivery[];
  /**
   * Back to the start: requests in flight ended, no image in any history
   * (their files removed too, in a `dataDir` of yours as well), the accounts
   * and credits as they were at the start, the request log and webhook
   * deliveries cleared, every script gone, the knobs as they were started
   * (their fault decisions replayed from the seed), the clock undone.
   */
  reset(): Promise<void>;
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
const publicDelivery = (attempt: DeliveryAttempt): SandboxWebhookDelivery => attempt;
const serverMatch = (match: SandboxMatch): ScriptMatch => match;
const serverAnswer = (answer: SandboxAnswer): ScriptAnswer => answer;

const OPTIONS: ReadonlyArray<keyof SandboxOptions> = [
  'dataDir',
  'host',
  'port',
  'apiKey',
  'credits',
  'latencyMs',
  'failRate',
  'dropRate',
  'rateLimit',
  'webhookFail',
  'seed',
  'renderThreads',
  'onWarning',
];

/** Starts a sandbox in this process (docs/library.md); close() it when done. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  if (options === null || typeof options !== 'object') throw new TypeError(`startSandbox takes an object of options; got ${options === null ? 'null' : typeof options}`);
  const unknown = Object.keys(options).find((name) => !(OPTIONS as string[]).includes(name));
  if (unknown !== undefined) throw new TypeError(`${JSON.stringify(unknown)} is not an option of startSandbox; it takes ${OPTIONS.join(', ')}`);
  const ownDir = options.dataDir === undefined ? makePrivateTempDirectory('aerial-sandbox-') : undefined;
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
    use: (match, answer) => running.use(serverMatch(match), serverAnswer(answer)),
    advanceTime: (ms) => running.advanceTime(ms),
    webhookDeliveries: () => running.webhookAttempts().map(publicDelivery),
    reset: () => running.reset(),
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
