// `batch --async`: each row is sent to the async endpoint with the callback
// URL of one shared webhook listener, and its image is downloaded from the
// signedUrl of its callback (src/webhook/async-generation.ts, as for
// `generate-async --listen`).
import type { GenAerialClient } from '../../api/client.js';
import { FileError, RequestError } from '../../api/errors.js';
import { CliError, FileSystemError, GeneratedImageDownloadError, UsageError } from '../../lifecycle/errors.js';
import type { ListenPlan } from '../../webhook/async-generation.js';
import type { Context } from '../../cli/context.js';
import type { JpegFileOptions } from '../../files/jpeg-file.js';
import type { Job, RowProducer } from '../../batch/row-runner.js';

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
export async function parseAsyncFlags(flags: AsyncFlags): Promise<ListenPlan | undefined> {
  if (!flags.async) {
    const stray = ASYNC_ONLY.find(([key]) => flags[key] !== undefined);
    if (stray) throw new UsageError(`${stray[1]} only applies with --async`);
    return undefined;
  }
  const { planListener } = await import('../../webhook/async-generation.js');
  return planListener({
    host: flags.listenHost,
    port: flags.listenPort,
    publicUrl: flags.publicUrl === undefined ? undefined : { value: flags.publicUrl, flag: '--public-url' },
    wait: { value: flags.callbackTimeout, flag: '--callback-timeout' },
  });
}

export interface AsyncProducerOptions {
  client: GenAerialClient;
  setup: ListenPlan;
  fileOptions: (job: Job) => JpegFileOptions;
}

export async function asyncProducer(ctx: Context, options: AsyncProducerOptions): Promise<RowProducer> {
  const { client, setup } = options;
  const [webhook, { JpegFileDestination, saveImage }] = await Promise.all([import('../../webhook/async-generation.js'), import('../../files/jpeg-file.js')]);
  const listener = await webhook.startListener(setup, (line) => ctx.io.debug(line));
  ctx.onCleanup(() => listener.close());
  ctx.io.info(`Listening for callbacks on ${setup.host}:${listener.port}${setup.publicUrl ? ' (through --public-url)' : ''}`);

  return async (job, retry, signal, notes) => {
    const generated = await webhook.generateViaWebhook(client, listener, job.plan.request, {
      signal,
      timeoutMs: setup.timeoutMs,
      retry,
      onAccepted: (requestId) => (notes.requestId = requestId),
    });
    notes.imageId = generated.generatedImageId;
    // From here the image exists: a failed download is retried as a download (the client's), never as a new generation.
    const destination = new JpegFileDestination(job.plan.target, options.fileOptions(job));
    try {
      return await saveImage(destination, (sink) => client.downloadInto(generated.signedUrl, sink, { signal }));
    } catch (error) {
      if (signal.aborted || error instanceof FileSystemError || error instanceof FileError || !(error instanceof RequestError || error instanceof CliError)) throw error;
      throw new GeneratedImageDownloadError(error);
    }
  };
}
