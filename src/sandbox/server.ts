// The bundled GenAerial-compatible sandbox: a node:http server on loopback that
// implements the v1 API over a persistent data directory, with fault knobs and
// a request log for tests. `aerial sandbox` runs it in the foreground; every
// command's `--sandbox` starts one in-process on a free port and closes it after.
//
// This file starts and stops it; the rest of the CLI imports this file and
// faults.ts (the fault knobs, whose limits the `sandbox` command checks). Its
// parts: server/ (the routes, the data directory, accounts, signed URLs,
// webhooks and the logs), render/ (the pictures, on worker threads), world/
// (the Earth's data the pictures are drawn from); build-outputs/built-files.ts finds
// the files the build writes beside the bundle for server/ and world/.
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  creditsProblem,
  DEFAULT_CREDITS,
  findAccountByKey,
  keyProblem,
  newAccount,
  newApiKey,
  type StoredAccount,
} from './server/accounts.js';
import { API_BASE_PATH, handleApi } from './server/api-routes.js';
import type { Exchange, ExchangeNotes, SandboxApp } from './server/app.js';
import { BackgroundWork } from './server/background.js';
import { handleControl, isControlPath, isLoggedPath } from './server/control-routes.js';
import { checkFaultPatch, Faults, NO_FAULTS, type FaultSettings } from './faults.js';
import { SceneRenderer } from './server/generation.js';
import { HttpError, notFound, queryObject, sendError } from './server/http-io.js';
import { bundledRenderWorker, DEFAULT_RENDER_THREADS, RenderPool, RUNNING_FROM_SOURCES } from './render/pool.js';
import { RequestLog, type RequestLogEntry } from './server/request-log.js';
import { playScript } from './server/scripted-answer.js';
import { isScriptablePath, ScriptedAnswers, type ScriptAnswer, type ScriptMatch } from './server/scripts.js';
import { dropExpiredUnlisted, SandboxStore, type SandboxState } from './server/store.js';
import { DEFAULT_WEBHOOK_POLICY, WebhookSender, type DeliveryAttempt, type WebhookPolicy } from './server/webhooks.js';

export { API_BASE_PATH } from './server/api-routes.js';
export { DEFAULT_CREDITS } from './server/accounts.js';
export { resetSandboxData } from './server/store.js';
export type { RequestLogEntry } from './server/request-log.js';
export type { DeliveryAttempt } from './server/webhooks.js';
export type { FaultSettings } from './faults.js';
export type { ScriptAnswer, ScriptMatch } from './server/scripts.js';

export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = '127.0.0.1';

export interface SandboxOptions {
  host?: string;
  /** 0 picks a free port; the chosen one is in `RunningSandbox.port`. */
  port?: number;
  dataDir: string;
  /** Sets the default account's balance (a new default account starts with DEFAULT_CREDITS). */
  credits?: number;
  /** Makes this key the default account's (created if no account has it). */
  key?: string;
  latencyMs?: number;
  failRate?: number;
  /** Requests per second per account; omitted or 0 means unlimited. */
  rateLimit?: number;
  dropRate?: number;
  webhookFail?: number;
  /** Seeds the fault decisions; random (and reported) when omitted. */
  seed?: number;
  /** The clock for createdAt, URL expiry and rate limiting; tests inject one (advanceTime moves it on). */
  now?: () => number;
  webhook?: Partial<WebhookPolicy>;
  /** How long close() lets pending async work (generation, webhook retries) finish before aborting it. */
  closeGraceMs?: number;
  /** Worker threads that render images (default: min(2, CPU count)); 0 renders on the main thread, which then pauses during each render. */
  renderThreads?: number;
  /**
   * The worker script: default dist/render-worker.js beside the bundle. The
   * TypeScript sources have none, so from them (vitest) the sandbox renders on
   * the main thread unless a test passes a script it built.
   */
  renderWorker?: URL;
  /**
   * Starts the render threads and has each render a tiny frame before
   * startSandbox resolves, so the first requests do not pay for starting them
   * (which moves about 150 ms of a 2-core machine's time before the start).
   * `aerial sandbox` does this; in-process `--sandbox` runs, which render once
   * if at all, do not.
   */
  warmUp?: boolean;
  onWarning?: (message: string) => void;
  /** Serves https with this certificate and key (PEM) instead of http: for trying TLS set-ups, such as a company CA. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Called with each request-log entry as it is recorded (the CLI prints them). */
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface CreatedAccount {
  key: string;
  keyId: string;
  credits: number;
}

export interface RunningSandbox {
  url: string;
  host: string;
  port: number;
  dataDir: string;
  defaultKey: string;
  defaultKeyId: string;
  seed: number;
  /** Worker threads rendering images; 0 when rendering happens on the main thread. */
  renderThreads: number;
  close(): Promise<void>;
  createAccount(options?: { credits?: number; key?: string }): Promise<CreatedAccount>;
  /** Credits left on the account of `key`; undefined for an unknown key. */
  credits(key: string): Promise<number | undefined>;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  webhookAttempts(): DeliveryAttempt[];
  /** Resolves once no async generation or webhook delivery is pending. */
  idle(): Promise<void>;
  faults(): FaultSettings;
  /** Changes fault knobs from now on: a knob that does not exist or a value out of range is an error naming it. */
  setFaults(patch: Partial<FaultSettings>): void;
  /** Queues a scripted answer for matching requests (server/scripts.ts); checked, naming a field at fault. */
  use(match: ScriptMatch, answer: ScriptAnswer): void;
  /** Moves the sandbox's clock on by `ms`: createdAt, the expiry of temporary URLs and the rate limit follow it. */
  advanceTime(ms: number): void;
  /**
   * Back to the start: what is in flight ended, the history emptied (every
   * image and its file), the accounts and their credits as they were at the
   * start, the request log and webhook deliveries cleared, no script, the
   * knobs as started (their random streams from the seed again), the clock
   * back to the injected one.
   */
  reset(): Promise<void>;
}

/** The longest step advanceTime takes at once: ten years. */
const MAX_TIME_STEP_MS = 10 * 365 * 24 * 60 * 60 * 1000;

function checkFaults(options: SandboxOptions): FaultSettings {
  const { latencyMs, failRate, dropRate, rateLimit, webhookFail } = options;
  return { ...NO_FAULTS, ...checkFaultPatch({ latencyMs, failRate, dropRate, rateLimit, webhookFail }) };
}

/** The account whose key `--sandbox` runs use: the persisted default, or the one `key` names. */
function chooseDefaultAccount(state: SandboxState, options: SandboxOptions, nowMs: number): StoredAccount {
  let account =
    options.key !== undefined
      ? findAccountByKey(state.accounts, options.key)
      : state.accounts.find((candidate) => candidate.id === state.defaultAccountId);
  if (!account) {
    account = newAccount(options.key ?? newApiKey(), options.credits ?? DEFAULT_CREDITS, nowMs);
    state.accounts.push(account);
  }
  if (options.credits !== undefined) account.credits = options.credits;
  state.defaultAccountId = account.id;
  return { ...account };
}

/** Opens the data directory, settles the default account, and sweeps what expired or a crash left behind. */
async function openStore(options: SandboxOptions, now: () => number, warn: (message: string) => void): Promise<{ store: SandboxStore; defaultAccount: StoredAccount }> {
  const store = await SandboxStore.open(options.dataDir, { onWarning: warn });
  const { defaultAccount, dropped } = await store.update((state) => ({
    defaultAccount: chooseDefaultAccount(state, options, now()),
    dropped: dropExpiredUnlisted(state, now()),
  }));
  await store.sweepFiles(dropped);
  return { store, defaultAccount };
}

function renderPool(threads: number, script: URL | undefined, warn: (message: string) => void): RenderPool | undefined {
  if (threads === 0) return undefined;
  const chosen = script ?? bundledRenderWorker();
  if (chosen && existsSync(chosen)) return new RenderPool(chosen, threads);
  // The sources have no JavaScript worker to start (expected under vitest); a bundle without one is broken.
  if (chosen || !RUNNING_FROM_SOURCES) {
    const where = chosen ? fileURLToPath(chosen) : 'render-worker.js beside the bundle';
    warn(`the render worker script (${where}) is missing; rendering on the main thread, which pauses the server during each render`);
  }
  return undefined;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const host = options.host ?? DEFAULT_HOST;
  const requestedPort = options.port ?? DEFAULT_PORT;
  if (!Number.isSafeInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new RangeError(`port must be a whole number from 0 to 65535; got ${requestedPort}`);
  }
  if (options.credits !== undefined && creditsProblem(options.credits)) throw new RangeError(`credits ${creditsProblem(options.credits)}`);
  if (options.key !== undefined && keyProblem(options.key)) throw new RangeError(`key ${keyProblem(options.key)}`);
  const faultSettings = checkFaults(options);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a whole number; got ${seed}`);
  // The sandbox's clock: the injected one (or the system's), moved on by advanceTime.
  const clock = options.now ?? Date.now;
  let clockOffset = 0;
  const now = () => clock() + clockOffset;
  const warn = options.onWarning ?? (() => {});

  const renderThreads = options.renderThreads ?? DEFAULT_RENDER_THREADS;
  if (!Number.isSafeInteger(renderThreads) || renderThreads < 0) throw new RangeError(`renderThreads must be a whole number ≥ 0; got ${renderThreads}`);

  const renderer = new SceneRenderer(renderPool(renderThreads, options.renderWorker, warn));
  // The render threads warm up while this thread opens the store and the port; settles with the failure, if any.
  const warmingUp = options.warmUp ? renderer.warmUp().then(() => undefined, (error: unknown) => ({ error })) : undefined;
  const { store, defaultAccount } = await openStore(options, now, warn).catch(async (error: unknown) => {
    await renderer.close();
    throw error;
  });

  const faults = new Faults(faultSettings, seed, now);
  const log = new RequestLog();
  const scripts = new ScriptedAnswers();
  // The accounts as they were at the start, for reset().
  const startAccounts = (await store.snapshot()).accounts.map((account) => ({ ...account }));
  const webhooks = new WebhookSender({ ...DEFAULT_WEBHOOK_POLICY, ...options.webhook }, faults, now);
  const background = new BackgroundWork();
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const answering = new Set<ServerResponse>();

  // node:https (and node:tls) only when asked for: every in-process --sandbox run starts this server.
  const server = options.tls ? (await import('node:https')).createServer({ cert: options.tls.cert, key: options.tls.key }) : createServer();
  const app: SandboxApp = { store, faults, renderer, log, scripts, webhooks, background, now, url: '', warn };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answering.add(res);
    res.once('close', () => answering.delete(res));
    const task = handleExchange(app, req, res, shutdown.signal, options.onRequest);
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  });

  try {
    await listen(server, requestedPort, host);
  } catch (error) {
    await Promise.all([webhooks.close(), renderer.close()]);
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  app.url = `${options.tls ? 'https' : 'http'}://${urlHost(host)}:${port}`;
  const warmUpFailure = await warmingUp;
  if (warmUpFailure) {
    const { error } = warmUpFailure;
    warn(`warming up the renderer failed, so the first request starts it: ${(error as Error)?.message ?? String(error)}`);
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      shutdown.abort();
      server.closeAllConnections();
      await Promise.allSettled([...inFlight]);
      await background.stop(options.closeGraceMs ?? 5_000);
      await Promise.all([webhooks.close(), renderer.close()]);
      await closed;
    })());

  return {
    url: app.url,
    host,
    port,
    dataDir: options.dataDir,
    defaultKey: defaultAccount.key,
    defaultKeyId: defaultAccount.keyId,
    seed,
    renderThreads: renderer.threads,
    close,
    async createAccount({ credits = DEFAULT_CREDITS, key } = {}) {
      if (creditsProblem(credits)) throw new RangeError(`credits ${creditsProblem(credits)}`);
      if (key !== undefined && keyProblem(key)) throw new RangeError(`key ${keyProblem(key)}`);
      const account = await store.update((state) => {
        if (key !== undefined && findAccountByKey(state.accounts, key)) throw new Error('an account with this key already exists');
        const created = newAccount(key ?? newApiKey(), credits, now());
        state.accounts.push(created);
        return { ...created }; // a copy: later updates of the same write must not change what this one answered
      });
      return { key: account.key, keyId: account.keyId, credits: account.credits };
    },
    async credits(key) {
      return findAccountByKey((await store.snapshot()).accounts, key)?.credits;
    },
    requests: () => log.entries(),
    clearRequests: () => void log.clear(),
    webhookAttempts: () => webhooks.attempts(),
    idle: () => background.idle(),
    faults: () => faults.current(),
    setFaults: (patch) => faults.change(patch),
    use: (match, answer) => scripts.add(match, answer),
    advanceTime(ms) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIME_STEP_MS) {
        throw new RangeError(`advanceTime(ms) takes milliseconds from 0 to ${MAX_TIME_STEP_MS} (ten years); got ${String(ms)}`);
      }
      clockOffset += ms;
    },
    async reset() {
      scripts.clear();
      // Every exchange in flight (a held one, a delayed one) ends, and its log entry is written, before the log is cleared.
      for (const res of answering) res.destroy();
      await Promise.allSettled([...inFlight]);
      await background.cancel();
      clockOffset = 0;
      faults.restart(faultSettings);
      const removed = await store.update((state) => {
        const ids = state.images.map((image) => image.id);
        state.images = [];
        state.accounts = startAccounts.map((account) => ({ ...account }));
        state.defaultAccountId = defaultAccount.id;
        return ids;
      });
      for (const id of removed) await store.removeImageFile(id);
      log.clear();
      webhooks.clear();
    },
  };
}

async function handleExchange(
  app: SandboxApp,
  req: IncomingMessage,
  res: ServerResponse,
  shutdown: AbortSignal,
  onRequest: ((entry: RequestLogEntry) => void) | undefined,
): Promise<void> {
  const started = performance.now();
  const time = new Date(app.now()).toISOString();
  const clientGone = new AbortController();
  const notes: ExchangeNotes = { keyId: null };
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://sandbox.invalid');
  } catch {
    url = new URL('http://sandbox.invalid/');
  }
  const ex: Exchange = {
    req,
    res,
    url,
    notes,
    signal: AbortSignal.any([shutdown, clientGone.signal]),
    arrivedAt: started,
    earliestAnswer: Promise.resolve(),
  };

  let closed!: () => void;
  const answered = new Promise<void>((resolve) => (closed = resolve));
  res.once('close', () => {
    closed();
    if (!res.writableFinished) clientGone.abort();
    if (!isLoggedPath(url.pathname)) return;
    const entry = app.log.add({
      time,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryObject(url.searchParams),
      status: res.headersSent && !notes.dropped ? res.statusCode : null,
      ...(notes.error ? { error: notes.error } : {}),
      keyId: notes.keyId,
      ...(req.headers['x-api-key'] !== undefined ? { apiKeyHeader: true as const } : {}),
      ...(notes.body !== undefined ? { body: notes.body } : {}),
      ...(notes.callbackUrl ? { callbackUrl: notes.callbackUrl } : {}),
      ...(notes.requestId ? { requestId: notes.requestId } : {}),
      ...(notes.imageId ? { imageId: notes.imageId } : {}),
      ...(notes.dropped ? { dropped: true } : {}),
      ...(notes.scripted ? { scripted: true as const } : {}),
      ...(req.headers.via ? { via: req.headers.via.slice(0, 200) } : {}),
      durationMs: Math.round(performance.now() - started),
    });
    onRequest?.(entry);
  });

  try {
    const path = url.pathname;
    const script = isScriptablePath(path) ? app.scripts.take(req.method ?? 'GET', path) : undefined;
    if (script) notes.scripted = true;
    if (script && (await playScript(app, ex, script))) {
      // Answered, dropped or held by the script.
    } else if (path === '/api' || path.startsWith('/api/')) await handleApi(app, ex);
    else if (isControlPath(path)) await handleControl(app, ex);
    else throw notFound(`no such endpoint ${path}; the API lives under ${API_BASE_PATH}`);
  } catch (error) {
    await respondWithError(app, ex, error);
  }
  // Done once the answer is (its log entry written): reset() and close() wait for that.
  await answered;
}

async function respondWithError(app: SandboxApp, ex: Exchange, error: unknown): Promise<void> {
  const httpError =
    error instanceof HttpError
      ? error
      : new HttpError(500, 'InternalError', `the sandbox failed unexpectedly: ${(error as Error)?.message ?? String(error)}`);
  if (!(error instanceof HttpError)) app.warn(`${ex.req.method} ${ex.url.pathname}: ${(error as Error)?.stack ?? String(error)}`);
  if (!ex.res.headersSent && !ex.res.destroyed) await ex.earliestAnswer;
  if (ex.res.headersSent || ex.res.destroyed || ex.signal.aborted) {
    ex.res.destroy();
    return;
  }
  ex.notes.error = httpError.code;
  sendError(ex.res, httpError);
}
