// `aerial generate-async`: accepted now, delivered later by webhook. Either the
// result goes to the caller's own --callback-url, or --listen catches it with a
// temporary local listener (src/webhook/listener.ts) and downloads the signed image.
import type { Command } from 'commander';
import { UsageError } from '../../lifecycle/errors.js';
import type { GenerationRequest } from '../../api/schema.js';
import type { ListenPlan } from '../../webhook/async-generation.js';
import { formatBytes } from '../../text/bytes.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { DEFAULT_LISTEN_HOST } from '../../input/flags.js';
import type { Spinner } from '../../terminal/terminal.js';
import { printable } from '../../text/printable.js';
import { VERSION } from '../../build-outputs/version.js';
import { CALLBACK_WAIT_HELP, PREVIEW_HELP } from '../shared/help.js';
import { defaultOutputName, prepareOutput, wantsPreview } from '../shared/saved-image.js';
import { addLocationOptions, addSceneOptions, sceneInputFrom } from '../shared/scene-options.js';

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
  preview?: boolean;
  [scene: string]: unknown;
}

export const registration: CommandRegistration = { name: 'generate-async', register };

function register(command: Command, action: ActionFactory): void {
  command
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
    .option('--timeout <duration>', `how long --listen waits for the callback, ${CALLBACK_WAIT_HELP}`)
    .option('-o, --output <file>', 'with --listen: where to save the JPEG (default aerial-LAT_LNG-TIME.jpg)')
    .option('-f, --force', 'with --listen: overwrite the output file if it exists')
    .option('--no-metadata', 'with --listen: save the bytes exactly as received (no GPS EXIF, no AI-generated note)')
    .option('--preview', `with --listen: ${PREVIEW_HELP}`)
    .option('--no-preview', 'with --listen: do not show the image (when config defaults.preview is true)')
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

/** Checks every --listen flag before anything is bound or sent. */
async function planListen(options: GenerateAsyncOptions): Promise<ListenPlan> {
  if (options.callbackUrl !== undefined && options.publicUrl !== undefined) {
    throw new UsageError('--callback-url and --public-url mean the same with --listen (the URL the service calls); pass one');
  }
  const advertised = options.publicUrl ?? options.callbackUrl;
  const { planListener } = await import('../../webhook/async-generation.js');
  return planListener({
    host: options.listenHost,
    port: options.listenPort,
    publicUrl: advertised === undefined ? undefined : { value: advertised, flag: options.publicUrl !== undefined ? '--public-url' : '--callback-url' },
    wait: { value: options.timeout, flag: '--timeout' },
  });
}

const LISTEN_ONLY_FLAGS = [
  ['listenHost', '--listen-host'],
  ['listenPort', '--listen-port'],
  ['publicUrl', '--public-url'],
  ['timeout', '--timeout'],
  ['output', '--output'],
  ['force', '--force'],
  ['preview', '--preview'],
] as const;

export async function runGenerateAsync(ctx: Context, options: GenerateAsyncOptions): Promise<void> {
  if (!options.listen) {
    const stray = LISTEN_ONLY_FLAGS.find(([key]) => options[key] !== undefined);
    if (stray) throw new UsageError(`${stray[1]} only applies with --listen (which waits for the callback and saves the image)`);
    if (options.metadata === false) throw new UsageError('--no-metadata only applies with --listen (which saves the image)');
  }
  const plan = options.listen ? await planListen(options) : undefined;
  const { buildGenerationRequest, placeNotes } = await import('../../input/scene-request.js');
  const request = buildGenerationRequest(sceneInputFrom(options), ctx.settings().sceneDefaults, undefined, placeNotes((message) => ctx.io.info(message)));
  if (plan) return listenAndDownload(ctx, request, plan, options);

  const { validateCallbackUrl } = await import('../../input/flags.js');
  if (options.callbackUrl === undefined) {
    throw new UsageError('generate-async needs --listen (aerial waits for the result itself and saves the image) or --callback-url <url> (your own receiver gets it)');
  }
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

async function listenAndDownload(ctx: Context, request: GenerationRequest, plan: ListenPlan, options: GenerateAsyncOptions): Promise<void> {
  if (options.output === '-') throw new UsageError('--output - is not supported by generate-async; name a file');
  const [{ saveImageFromUrl }, { formatDuration }, webhook] = await Promise.all([
    import('../../operations/save-image.js'),
    import('../../input/duration.js'),
    import('../../webhook/async-generation.js'),
  ]);
  const { lat, lng } = request.coordinates;
  const rules = { overwrite: Boolean(options.force), label: '--output' };
  // Before anything is sent, a refused target must not cost credits: checked, and a device or FIFO opened (a FIFO waits for its reader).
  const target = await prepareOutput(ctx, options.output ?? defaultOutputName(lat, lng), rules);
  const client = await ctx.client();

  const listener = await webhook.startListener(plan, (line) => ctx.io.debug(line));
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
  ctx.io.info(`Accepted request ${printable(ctx.io.redact(requestId), 80)}; waiting up to ${formatDuration(plan.timeoutMs)} for the callback`);

  const waitingText = () => `Waiting for the callback of ${printable(ctx.io.redact(requestId), 80)}… ${Math.round((Date.now() - started) / 1000)}s`;
  const spinner = endsOnce(await ctx.io.spinner(waitingText()));
  const tick = setInterval(() => spinner.update(waitingText()), 1000);
  try {
    let payload;
    try {
      payload = await webhook.waitForCallback(listener, requestId, plan.timeoutMs, ctx.signal, ctx.io.redact);
    } catch (error) {
      if (error instanceof webhook.CallbackTimeoutError) spinner.fail(`No callback after ${formatDuration(plan.timeoutMs)}`);
      else if (error instanceof webhook.AsyncGenerationFailedError) spinner.fail('Generation failed');
      else {
        spinner.stop();
        if (ctx.signal.aborted) ctx.io.info(`Request ${printable(ctx.io.redact(requestId), 80)} may still finish; look for it later with 'aerial list'`);
      }
      throw error;
    }
    spinner.update(`Downloading image ${printable(ctx.io.redact(payload.generatedImageId), 80)}…`);
    const written = await saveImageFromUrl(client, payload.signedUrl, {
      ...rules,
      request,
      target,
      metadata: options.metadata === false ? false : { software: `aerial ${VERSION}`, redact: ctx.io.redact },
      signal: ctx.signal,
    });
    await listener.close();
    const fileBytes = written.bytes;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    spinner.succeed(`Saved ${target.path} (${formatBytes(fileBytes)}, ${payload.creditsUsed} credit${payload.creditsUsed === 1 ? '' : 's'}, ${seconds}s)`);
    const result = { requestId, generatedImageId: payload.generatedImageId, creditsUsed: payload.creditsUsed, file: target.path };
    if (ctx.io.json) ctx.io.outJson(result);
    else ctx.io.out(target.path);
    if (target.kind === 'file' && wantsPreview(ctx, options.preview)) {
      await import('../../preview/show.js').then((preview) => preview.previewSavedImage(ctx.io, target.path));
    }
  } catch (error) {
    spinner.stop();
    throw error;
  } finally {
    clearInterval(tick);
  }
}
