// `batch --async`: each row is sent to the async endpoint with the callback
// URL of one shared webhook listener (src/listener.ts, the one behind
// `generate-async --listen`), and its image is downloaded from
// the signedUrl of its callback.
import { CliError, ExitCode, GenerationFailedError, NetworkError, UsageError } from '../api/errors.js';
import type { GenAerialClient } from '../api/client.js';
import type { Context } from '../context.js';
import { startDeadline } from '../deadline.js';
import { formatDuration } from '../duration.js';
import type { WrittenJpeg } from '../jpeg-file.js';
import type { Readable } from 'node:stream';
import type { Job, RowProducer } from './row-runner.js';
import { isSuccessPayload } from '../listener.js';
import { decide, type RetryPolicy } from './retry.js';

export interface AsyncSetup {
  host: string;
  port: number;
  publicUrl?: string;
  timeoutMs: number;
}

export interface AsyncFlags {
  async?: boolean;
  listenHost?: string;
  listenPort?: string;
  publicUrl?: string;
  callbackTimeout?: string;
}

const ASYNC_ONLY: Array<[keyof AsyncFlags, string]> = [
  ['listenHost', '--listen-host'],
  ['listenPort', '--listen-port'],
  ['publicUrl', '--public-url'],
  ['callbackTimeout', '--callback-timeout'],
];

/** Checks the listener flags before anything is bound or sent; undefined without --async. */
export async function parseAsyncFlags(flags: AsyncFlags): Promise<AsyncSetup | undefined> {
  if (!flags.async) {
    const stray = ASYNC_ONLY.find(([key]) => flags[key] !== undefined);
    if (stray) throw new UsageError(`${stray[1]} only applies with --async`);
    return undefined;
  }
  const { parseCallbackWait } = await import('../commands/generate-async.js');
  const { parsePort, validateCallbackUrl } = await import('../flags.js');
  const host = flags.listenHost?.trim() ?? '127.0.0.1';
  if (host === '') throw new UsageError('--listen-host must be an address or host name such as 127.0.0.1');
  return {
    host,
    port: parsePort(flags.listenPort, '--listen-port'),
    publicUrl: flags.publicUrl === undefined ? undefined : validateCallbackUrl(flags.publicUrl, '--public-url'),
    timeoutMs: await parseCallbackWait(flags.callbackTimeout, '--callback-timeout'),
  };
}

export interface AsyncProducerOptions {
  client: GenAerialClient;
  setup: AsyncSetup;
  policy: RetryPolicy;
  write: (body: Readable, job: Job, contentLength: number | undefined, signal: AbortSignal) => Promise<WrittenJpeg>;
}

export async function asyncProducer(ctx: Context, options: AsyncProducerOptions): Promise<RowProducer> {
  const { client, setup, policy } = options;
  const { startListener } = await import('../commands/generate-async.js');
  const listener = await startListener(ctx, setup);
  ctx.onCleanup(() => listener.close());
  ctx.io.info(`Listening for callbacks on ${setup.host}:${listener.port}${setup.publicUrl ? ' (through --public-url)' : ''}`);

  return async (job, attempt, signal) => {
    const accepted = await client.generateAsync(job.plan.request, listener.callbackUrl, { signal });
    attempt.requestId = accepted.requestId;
    let payload;
    const deadline = startDeadline(setup.timeoutMs, signal);
    try {
      payload = await listener.waitFor(accepted.requestId, deadline.signal);
    } catch (error) {
      if (!deadline.expired) throw error;
      // Accepted but never heard of again: it may still be generated, and charged.
      throw new NetworkError(`no callback for request ${accepted.requestId} within ${formatDuration(setup.timeoutMs)}`, 'CallbackTimeout', true);
    } finally {
      deadline.clear();
    }
    if (!isSuccessPayload(payload)) throw new GenerationFailedError(payload.errorCode, `${payload.errorMessage} (request ${accepted.requestId})`);
    const { signedUrl } = payload;

    // From here the image exists: a failed download is retried as a download, never as a new generation.
    attempt.phase = 'response';
    for (let retry = 0; ; retry++) {
      try {
        const image = await client.fetchImage(signedUrl, { signal });
        return await options.write(image.body, job, image.contentLength, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        const decision = decide(error, 'response', retry, { ...policy, retryUnsafe: true });
        if (decision.action !== 'retry') {
          // A refused signed URL says nothing about the API key: the row fails, the batch goes on.
          const failure = decision.error;
          throw new CliError(`downloading the generated image failed: ${failure.message}`, failure instanceof NetworkError ? ExitCode.Network : ExitCode.Server, failure.code);
        }
        const { sleep } = await import('../api/client.js');
        await sleep(decision.delayMs, signal);
      }
    }
  };
}
