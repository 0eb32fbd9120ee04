// `aerial sandbox`: runs the bundled GenAerial-compatible server in the
// foreground until Ctrl-C. Loaded at every CLI start, so the server itself is
// imported only when the command runs.
import type { Command } from 'commander';
import { UsageError } from '../../lifecycle/errors.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { parseFraction, parseWholeNumber } from '../../input/flags.js';
import type { SandboxOptions } from '../../sandbox/server.js';

interface SandboxCommandOptions {
  port: string;
  host: string;
  dataDir?: string;
  credits?: string;
  key?: string;
  latency?: string;
  failRate?: string;
  rateLimit?: string;
  dropRate?: string;
  webhookFail?: string;
  seed?: string;
}

/** The flags, checked and typed: what startSandbox receives (besides the data dir default). */
export type SandboxFlags = Required<Pick<SandboxOptions, 'port' | 'host'>> &
  Partial<Pick<SandboxOptions, 'dataDir' | 'credits' | 'key' | 'latencyMs' | 'failRate' | 'rateLimit' | 'dropRate' | 'webhookFail' | 'seed'>>;

/**
 * --latency: bare numbers were milliseconds once, so above 30 one is refused unless it
 * has a unit (an old `--latency 500` cannot mean minutes); the most is the sandbox's
 * MAX_LATENCY_MS. Written out so that --help loads no parser (a test holds it to both).
 */
export const LATENCY_BARE_MAX_MS = 30_000;
export const LATENCY_HELP = 'send no API answer (nor webhook) sooner than this: 250ms, 2s; a bare number is seconds, at most 30 (up to 10m)';

export const registration: CommandRegistration = { name: 'sandbox', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('run the bundled local GenAerial-compatible server (no real credits, fault knobs for tests)')
    .option('--port <n>', 'port to listen on; 0 picks a free one', '4010')
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('--data-dir <dir>', 'where accounts and images persist (default: $XDG_DATA_HOME/aerial/sandbox, ~/.local/share/aerial/sandbox)')
    .option('--credits <n>', 'set the default account\'s credits (a new account starts with 1000)')
    .option('--key <key>', 'use this API key for the default account (created if new)')
    .option('--latency <duration>', LATENCY_HELP)
    .option('--fail-rate <0..1>', 'share of generations that fail with ErrorGeneratingImage')
    .option('--rate-limit <n>', 'requests per second per account before 429 with Retry-After')
    .option('--drop-rate <0..1>', 'share of API requests whose connection is reset')
    .option('--webhook-fail <n>', 'the first n webhook delivery attempts fail (then retries get through)')
    .option('--seed <n>', 'seed for the random fault decisions (same seed, same faults)')
    .addHelpText(
      'after',
      `
Prices (credits per image): HD 1, FHD 2, UHD 4.
Test endpoints (no key needed): GET/DELETE /__sandbox/requests, GET /__sandbox/webhooks,
POST /__sandbox/accounts {credits, key?}, GET /__sandbox/accounts/<key>.

Examples:
  $ aerial sandbox
  $ aerial sandbox --port 0 --json          # prints {"url":…,"port":…,"key":…,"dataDir":…}
  $ aerial list --sandbox                   # uses the same data dir in-process
  $ aerial sandbox reset                    # deletes every account and image in it`,
    )
    .action(action<SandboxCommandOptions>(runSandbox));
  command
    .command('reset')
    .description("empty the sandbox's data directory: every account and image")
    .option('--data-dir <dir>', 'the data directory to empty (default: the one aerial sandbox uses)')
    .addHelpText(
      'after',
      `
A sandbox serving the directory must be stopped first (exit 2 while it runs).

Examples:
  $ aerial sandbox reset
  $ aerial sandbox reset --data-dir ./sandbox-data`,
    )
    .action(action<{ dataDir?: string }>(runSandboxReset));
}

/** The data directory a sandbox command works on: --data-dir, else the default one (moved there from the config directory once). */
async function sandboxDataDir(ctx: Context, given: string | undefined): Promise<string> {
  const [{ defaultSandboxDir, moveOldSandboxData }, { resolve }] = await Promise.all([import('../../config/config.js'), import('node:path')]);
  if (given !== undefined) {
    if (given.trim() === '') throw new UsageError('--data-dir must not be empty');
    return resolve(given);
  }
  const moved = await moveOldSandboxData(ctx.env);
  if (moved) ctx.io.info(`Moved the sandbox's data from ${moved} to ${defaultSandboxDir(ctx.env)}`);
  return resolve(defaultSandboxDir(ctx.env));
}

/** `aerial sandbox reset`: the sandbox's state and images removed, under the lock its writes take. */
async function runSandboxReset(ctx: Context, options: { dataDir?: string }): Promise<void> {
  const dataDir = await sandboxDataDir(ctx, options.dataDir);
  const { runningSandbox } = await import('../../sandbox/advert.js');
  const running = await runningSandbox(dataDir);
  // It would go on with what it holds in memory, and write it back.
  if (running) throw new UsageError(`the sandbox at ${running.url} (pid ${running.pid}) serves ${dataDir}: stop it first`, 'AlreadyRunning');
  const { resetSandboxData } = await import('../../sandbox/server.js');
  const removed = await resetSandboxData(dataDir);
  if (removed === undefined) {
    ctx.io.info(`Nothing to reset: ${dataDir} holds no sandbox data`);
    return;
  }
  ctx.io.success(`Emptied ${dataDir} (${removed.images} image${removed.images === 1 ? '' : 's'}, ${removed.accounts} account${removed.accounts === 1 ? '' : 's'})`);
}

export async function parseSandboxFlags(options: SandboxCommandOptions): Promise<SandboxFlags> {
  const host = options.host.trim();
  if (!host) throw new UsageError('--host must not be empty');
  let rateLimit: number | undefined;
  if (options.rateLimit !== undefined) {
    rateLimit = Number(options.rateLimit.trim());
    if (options.rateLimit.trim() === '' || !Number.isFinite(rateLimit) || rateLimit <= 0 || rateLimit > 1_000_000) {
      throw new UsageError(`--rate-limit must be a number of requests per second above 0; got '${options.rateLimit}'`);
    }
  }
  const key = options.key;
  if (key !== undefined && (key.length < 8 || key.length > 256 || !/^[\x21-\x7e]+$/.test(key))) {
    throw new UsageError('--key must be 8 to 256 visible ASCII characters without spaces');
  }
  if (options.dataDir !== undefined && options.dataDir.trim() === '') throw new UsageError('--data-dir must not be empty');
  return {
    port: parseWholeNumber(options.port, '--port', 0, 65535)!,
    host,
    dataDir: options.dataDir,
    credits: parseWholeNumber(options.credits, '--credits', 0, 1_000_000_000),
    key,
    latencyMs: await parseLatency(options.latency),
    failRate: parseFraction(options.failRate, '--fail-rate'),
    rateLimit,
    dropRate: parseFraction(options.dropRate, '--drop-rate'),
    webhookFail: parseWholeNumber(options.webhookFail, '--webhook-fail', 0, 1_000_000),
    seed: parseWholeNumber(options.seed, '--seed', 0, 2 ** 32 - 1),
  };
}

async function parseLatency(raw: string | undefined): Promise<number | undefined> {
  if (raw === undefined) return undefined;
  const [{ parseDuration }, { MAX_LATENCY_MS }] = await Promise.all([import('../../input/duration.js'), import('../../sandbox/faults.js')]);
  return parseDuration(raw, '--latency', { minMs: 0, maxMs: MAX_LATENCY_MS, bareMaxMs: LATENCY_BARE_MAX_MS });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export async function runSandbox(ctx: Context, options: SandboxCommandOptions): Promise<void> {
  const flags = await parseSandboxFlags(options);
  const { startSandbox } = await import('../../sandbox/server.js');
  const dataDir = await sandboxDataDir(ctx, flags.dataDir);
  const { io } = ctx;

  let sandbox;
  try {
    sandbox = await startSandbox({
      ...flags,
      dataDir,
      // Ready means ready: the first requests find the render threads started and compiled.
      warmUp: true,
      onWarning: (message) => io.warn(message),
      onRequest: (entry) => {
        const who = entry.keyId ? ` ${entry.keyId}` : '';
        const status = entry.dropped ? 'dropped' : entry.status === null ? 'closed' : String(entry.status);
        io.info(io.style.dim(`${entry.method} ${entry.path} ${status}${entry.error ? ` ${entry.error}` : ''} ${entry.durationMs}ms${who}`));
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${flags.port} on ${flags.host} is already in use; pick another with --port (0 picks a free one)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UsageError(`cannot listen on --host ${flags.host}: no such local address`);
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
  ctx.onCleanup(() => sandbox.close());
  // --sandbox commands on the same data reach this one while it runs (sandbox/advert.ts).
  const { advertiseSandbox } = await import('../../sandbox/advert.js');
  const withdraw = await advertiseSandbox(dataDir, { url: sandbox.url, key: sandbox.defaultKey });
  ctx.onCleanup(withdraw);

  if (io.json) {
    io.out(JSON.stringify({ url: sandbox.url, port: sandbox.port, key: sandbox.defaultKey, dataDir }));
  } else {
    io.out(`url: ${sandbox.url}`);
    io.out(`key: ${sandbox.defaultKey}`);
  }
  const credits = await sandbox.credits(sandbox.defaultKey);
  const { formatDuration } = await import('../../input/duration.js');
  const latency = flags.latencyMs ? `; latency ${formatDuration(flags.latencyMs)}` : '';
  io.info(`Sandbox serving GenAerial v1 at ${sandbox.url} (data: ${dataDir}; ${credits} credit${credits === 1 ? '' : 's'}${latency}; fault seed ${sandbox.seed})`);
  if (!isLoopback(flags.host)) io.warn(`--host ${flags.host} exposes the sandbox beyond this machine; its test endpoints need no key`);
  io.info(`Try: AERIAL_BASE_URL=${sandbox.url} AERIAL_API_KEY=<key above> aerial list   (Ctrl-C stops)`);

  await untilAborted(ctx.signal);
  io.info('Stopping the sandbox…');
  await withdraw();
  await sandbox.close();
}
