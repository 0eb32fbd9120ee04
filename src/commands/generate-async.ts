// `aerial generate-async`: accepted now, delivered later by webhook. Either the
// result goes to the caller's own --callback-url, or --listen catches it with a
// temporary local listener (src/listener.ts) and downloads the signed image.
import type { Command } from 'commander';
import { GenerationFailedError, NetworkError, UsageError } from '../api/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import { formatBytes } from '../bytes.js';
import type { ActionFactory } from '../cli.js';
import type { Context } from '../context.js';
import type { DurationRange } from '../duration.js';
import type { Spinner } from '../io.js';
import { printable } from '../printable.js';
import { VERSION } from '../version.js';
import { defaultOutputName } from './generate.js';
import { addLocationOptions, addSceneOptions, sceneInputFrom } from './scene-options.js';

interface GenerateAsyncOptions {
  callbackUrl?: string;
  listen?: boolean;
  listenHost?: string;
  listenPort?: string;
  publicUrl?: string;
  timeout?: string;
  output?: string;
  force?: boolean;
  /** false with --no-metadata. */
  metadata?: boolean;
  [scene: string]: unknown;
}

const DEFAULT_LISTEN_HOST = '127.0.0.1';
/** How long a callback is waited for: generate-async --timeout and batch --callback-timeout. */
export const DEFAULT_CALLBACK_WAIT = '10m';
/** Bare numbers were milliseconds once: above 10 minutes, one is refused unless it has a unit. */
export const CALLBACK_WAIT_RANGE: DurationRange = { minMs: 1, maxMs: 24 * 3_600_000, bareMaxMs: 600_000 };
/**
 * The help's words for a callback wait, shared with batch --callback-timeout; written
 * out so that --help loads no parser (a test holds them to the range above).
 */
export const CALLBACK_WAIT_HELP = '90s, 10m, 1h; a bare number is seconds, at most 600 (default 10m, up to 24h)';

export function register(program: Command, action: ActionFactory): void {
  const command = program
    .command('generate-async')
    .helpGroup('Images:')
    .description('start a generation whose result is POSTed to a webhook (or caught here with --listen)');
  addLocationOptions(command);
  addSceneOptions(command);
  command
    .option('--callback-url <url>', 'absolute http(s) URL that receives the result callback; with --listen, the URL advertised to the service (same as --public-url)')
    .option('--listen', 'catch the callback with a temporary local listener and download the image')
    .option('--listen-host <host>', `address the listener binds (default ${DEFAULT_LISTEN_HOST}; 0.0.0.0 for every interface)`)
    .option('--listen-port <port>', 'port the listener binds (default 0: a free port)')
    .option('--public-url <url>', 'URL the service calls to reach the listener, e.g. your ngrok or cloudflared tunnel; a secret token path is appended')
    .option('--timeout <duration>', `how long --listen waits for the callback: ${CALLBACK_WAIT_HELP}`)
    .option('-o, --output <file>', 'with --listen: where to save the JPEG (default aerial-LAT_LNG-TIME.jpg)')
    .option('-f, --force', 'with --listen: overwrite the output file if it exists')
    .option('--no-metadata', 'with --listen: save the bytes exactly as received (no GPS EXIF, no AI-generated note)')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial generate-async --lat 40.6892 --lng -74.0445 --callback-url https://hooks.example.com/aerial
  $ aerial generate-async --sandbox --at "51.5007,-0.1246" --listen -o westminster.jpg
  $ aerial generate-async --at "51.5007,-0.1246" --listen --listen-port 8787 \\
      --public-url https://<your-subdomain>.ngrok-free.app -o westminster.jpg

With --listen, aerial binds ${DEFAULT_LISTEN_HOST} on a free port, sends the request with a
callback URL ending in a random token, waits up to --timeout for the result, then
downloads the image (the API key is never sent with the download). Callbacks without
the token, or for another request, are answered 404/400 and ignored.

The real service cannot reach 127.0.0.1: expose the listener with a tunnel and pass
its public address as --public-url (or --callback-url; with --listen both mean
"advertise this URL, listen locally"):
  ngrok http 8787
    → --listen-port 8787 --public-url https://<id>.ngrok-free.app
  cloudflared tunnel --url http://127.0.0.1:8787
    → --listen-port 8787 --public-url https://<words>.trycloudflare.com
On timeout (exit 7) the request id is printed; the image may still arrive in your
history: aerial list. More: docs/webhooks.md`,
    )
    .action(action<GenerateAsyncOptions>(runGenerateAsync));
}

/** A callback wait (--timeout, --callback-timeout) in milliseconds. */
export async function parseCallbackWait(raw: string | undefined, flag: string): Promise<number> {
  const { parseDuration } = await import('../duration.js');
  return parseDuration(raw ?? DEFAULT_CALLBACK_WAIT, flag, CALLBACK_WAIT_RANGE);
}

export interface ListenPlan {
  host: string;
  port: number;
  publicUrl?: string;
  timeoutMs: number;
}

/** Checks every --listen flag before anything is bound or sent. */
async function planListener(options: GenerateAsyncOptions): Promise<ListenPlan> {
  const { parsePort, validateCallbackUrl } = await import('../flags.js');
  if (options.callbackUrl !== undefined && options.publicUrl !== undefined) {
    throw new UsageError('--callback-url and --public-url mean the same with --listen (the URL the service calls); pass one');
  }
  const advertised = options.publicUrl ?? options.callbackUrl;
  const flag = options.publicUrl !== undefined ? '--public-url' : '--callback-url';
  const host = options.listenHost?.trim() ?? DEFAULT_LISTEN_HOST;
  if (host === '') throw new UsageError('--listen-host must be an address or host name such as 127.0.0.1');
  return {
    host,
    port: parsePort(options.listenPort, '--listen-port'),
    publicUrl: advertised === undefined ? undefined : validateCallbackUrl(advertised, flag),
    timeoutMs: await parseCallbackWait(options.timeout, '--timeout'),
  };
}

const LISTEN_ONLY_FLAGS = [
  ['listenHost', '--listen-host'],
  ['listenPort', '--listen-port'],
  ['publicUrl', '--public-url'],
  ['timeout', '--timeout'],
  ['output', '--output'],
  ['force', '--force'],
] as const;

export async function runGenerateAsync(ctx: Context, options: GenerateAsyncOptions): Promise<void> {
  if (!options.listen) {
    const stray = LISTEN_ONLY_FLAGS.find(([key]) => options[key] !== undefined);
    if (stray) throw new UsageError(`${stray[1]} only applies with --listen (which waits for the callback and saves the image)`);
    if (options.metadata === false) throw new UsageError('--no-metadata only applies with --listen (which saves the image)');
  }
  const plan = options.listen ? await planListener(options) : undefined;
  const { buildGenerationRequest } = await import('../request.js');
  const request = buildGenerationRequest(sceneInputFrom(options), ctx.settings().sceneDefaults);
  if (plan) return listenAndDownload(ctx, request, plan, options);

  const { validateCallbackUrl } = await import('../flags.js');
  const callbackUrl = validateCallbackUrl(options.callbackUrl);
  const client = await ctx.client();
  const accepted = await client.generateAsync(request, callbackUrl, { signal: ctx.signal });
  if (ctx.io.json) {
    ctx.io.outJson({ requestId: accepted.requestId, status: accepted.status });
    return;
  }
  ctx.io.success(`Accepted: the result will be POSTed to ${callbackUrl}`);
  ctx.io.out(accepted.requestId);
}

/** No callback in time: exit 7, with the request id so the image can still be found later. */
export class CallbackTimeoutError extends NetworkError {
  /** `waited`: how long, as formatDuration() writes it. */
  constructor(readonly requestId: string, waited: string) {
    super(
      `no callback for request ${requestId} within ${waited}; it may still finish — look for it later with 'aerial list'`,
      'Timeout',
    );
  }

  override toJSON() {
    return { ...super.toJSON(), requestId: this.requestId };
  }
}

/** The error payload: exit 6 with its errorCode and errorMessage, and the request id for scripts. */
export class AsyncGenerationFailedError extends GenerationFailedError {
  constructor(readonly requestId: string, errorCode: string, errorMessage: string) {
    super(errorCode, `${errorMessage} (request ${requestId})`);
  }

  override toJSON() {
    return { ...super.toJSON(), requestId: this.requestId };
  }
}

/** A spinner whose first ending wins, so a stop() on the way out leaves a failure line standing. */
function endsOnce(spinner: Spinner): Spinner {
  let ended = false;
  const ending =
    (end: (text?: string) => void) =>
    (text?: string): void => {
      if (ended) return;
      ended = true;
      end(text);
    };
  return {
    update: (text) => {
      if (!ended) spinner.update(text);
    },
    succeed: ending((text) => spinner.succeed(text)),
    fail: ending((text) => spinner.fail(text)),
    stop: ending(() => spinner.stop()),
  };
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Binds the listener of --listen (and of `batch --async`), its events traced with
 * --verbose; a refused bind is a usage error naming the flag.
 */
export async function startListener(ctx: Context, plan: Pick<ListenPlan, 'host' | 'port' | 'publicUrl'>) {
  const { WebhookListener } = await import('../listener.js');
  try {
    return await WebhookListener.start({
      host: plan.host,
      port: plan.port,
      publicUrl: plan.publicUrl,
      onEvent: (event) => {
        const about = event.requestId === undefined ? event.reason : `${event.reason}, request ${event.requestId}`;
        if (event.outcome === 'rejected') ctx.io.debug(`listener: ignored ${event.method} (${event.status}, ${about})`);
        else if (event.outcome === 'duplicate') ctx.io.debug(`listener: ignored a repeated delivery (${about})`);
        else ctx.io.debug(`listener: ${event.outcome} a callback (${about})`);
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`--listen-port ${plan.port} is already in use on ${plan.host}; pick another or leave it out for a free one`);
    if (code === 'EACCES') throw new UsageError(`--listen-port ${plan.port} needs privileges on ${plan.host}; pick a port above 1023`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EINVAL') {
      throw new UsageError(`--listen-host ${plan.host} is not an address of this machine (try 127.0.0.1 or 0.0.0.0)`);
    }
    throw error;
  }
}

async function listenAndDownload(ctx: Context, request: GenerationRequest, plan: ListenPlan, options: GenerateAsyncOptions): Promise<void> {
  if (options.output === '-') throw new UsageError('--output - is not supported by generate-async; name a file');
  const { checkOutputPath, openSpecialOutput, saveJpeg } = await import('../jpeg-file.js');
  const { formatDuration } = await import('../duration.js');
  const { lat, lng } = request.coordinates;
  // Checked before anything is sent: a refused target must not cost credits.
  const target = await checkOutputPath(options.output ?? defaultOutputName(lat, lng), Boolean(options.force));
  // A device or FIFO is opened now too: a FIFO waits for its reader before anything is paid for.
  const special = target.special ? await openSpecialOutput(target, '--output', ctx.signal, (message) => ctx.io.info(message)) : undefined;
  if (special) ctx.onCleanup(() => void special.destroy());
  const client = await ctx.client();

  const listener = await startListener(ctx, plan);
  ctx.onCleanup(() => listener.close());
  const shownUrl = listener.callbackUrl.replace(listener.token, '<token>');
  ctx.io.debug(`listener: listening at ${listener.localUrl}`);
  ctx.io.info(`Listening on ${plan.host}:${listener.port}${plan.publicUrl ? `, advertised as ${shownUrl}` : ''}`);
  if (!plan.publicUrl && isLoopbackHost(new URL(listener.callbackUrl).hostname) && !isLoopbackHost(new URL(client.baseUrl).hostname)) {
    ctx.io.warn(`${new URL(client.baseUrl).host} cannot reach ${shownUrl}; expose the listener with a tunnel and pass --public-url (see --help)`);
  }

  const started = Date.now();
  const accepted = await client.generateAsync(request, listener.callbackUrl, { signal: ctx.signal });
  const { requestId } = accepted;
  listener.expectOnly(requestId);
  ctx.io.info(`Accepted request ${printable(requestId, 80)}; waiting up to ${formatDuration(plan.timeoutMs)} for the callback`);

  const waitingText = () => `Waiting for the callback of ${printable(requestId, 80)}… ${Math.round((Date.now() - started) / 1000)}s`;
  const spinner = endsOnce(await ctx.io.spinner(waitingText()));
  const tick = setInterval(() => spinner.update(waitingText()), 1000);
  try {
    let payload;
    const { startDeadline } = await import('../deadline.js');
    const deadline = startDeadline(plan.timeoutMs, ctx.signal);
    try {
      payload = await listener.waitFor(requestId, deadline.signal);
    } catch (error) {
      if (!deadline.expired) {
        spinner.stop();
        if (ctx.signal.aborted) ctx.io.info(`Request ${printable(requestId, 80)} may still finish; look for it later with 'aerial list'`);
        throw error;
      }
      spinner.fail(`No callback after ${formatDuration(plan.timeoutMs)}`);
      throw new CallbackTimeoutError(requestId, formatDuration(plan.timeoutMs));
    } finally {
      deadline.clear();
    }

    const { isSuccessPayload } = await import('../listener.js');
    if (!isSuccessPayload(payload)) {
      spinner.fail('Generation failed');
      throw new AsyncGenerationFailedError(requestId, payload.errorCode, payload.errorMessage);
    }
    spinner.update(`Downloading image ${printable(payload.generatedImageId, 80)}…`);
    const metadata = options.metadata === false ? undefined : await import('../metadata.js');
    const metadataOf = { request, software: `aerial ${VERSION}` };
    const image = await client.fetchImage(payload.signedUrl, { signal: ctx.signal });
    const written = await saveJpeg(image.body, target, special, {
      force: Boolean(options.force),
      signal: ctx.signal,
      expectedLength: image.contentLength,
      metadata: metadata?.metadataWriters(metadataOf),
    });
    await listener.close();
    const fileBytes = written.bytes;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    spinner.succeed(`Saved ${target.path} (${formatBytes(fileBytes)}, ${payload.creditsUsed} credit${payload.creditsUsed === 1 ? '' : 's'}, ${seconds}s)`);
    const result = { requestId, generatedImageId: payload.generatedImageId, creditsUsed: payload.creditsUsed, file: target.path };
    if (ctx.io.json) ctx.io.outJson(result);
    else ctx.io.out(target.path);
  } catch (error) {
    spinner.stop();
    throw error;
  } finally {
    clearInterval(tick);
  }
}
