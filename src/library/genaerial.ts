// The client the library publishes: a thin face over the one the CLI's
// commands use (src/api/client.ts), made by the same factory (openClient) from
// the same settings, with the same image path into memory or to a file
// (image-download.ts, jpeg-file.ts), the same paging walk (pages.ts) and the
// same webhook listener (src/webhook/). It never writes to a terminal and never
// ends the process: every failure is a thrown error (errors.ts).
import { access } from 'node:fs/promises';
import type { GenAerialClient } from '../api/client.js';
import { InvalidInputError } from '../api/errors.js';
import { MemorySink } from '../api/memory-sink.js';
import type { Network, NetworkSetup } from '../api/network.js';
import { walkPages } from '../api/pages.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../api/retry.js';
import type { AsyncAccepted as WireAccepted, GenerationRequest, Page, WebhookSuccess } from '../api/schema.js';
import { VERSION } from '../bundle/version.js';
import { apiKeyProblem, readConfig, resolveSettings } from '../config/config.js';
import { validateBaseUrl } from '../input/flags.js';
import { UsageError } from '../process/errors.js';
import { ENUM_FIELDS, sceneSpec, type EnumSpec } from '../scene/vocabulary.js';
import type {
  AsyncAccepted,
  AsyncImage,
  CallbackSuccess,
  CallOptions,
  FileOptions,
  GenAerialOptions,
  ImagePage,
  ImageRecord,
  ImageRequest,
  ListenOptions,
  ListOptions,
  RetryOptions,
  SavedImage,
  WaitOptions,
} from './types.js';

/** As `generate-async --timeout`'s default. */
const DEFAULT_CALLBACK_WAIT_MS = 600_000;

// The public types are the client's, written out: these stop compiling if the two part.
const publicPage = (page: Page): ImagePage => page;
const publicAccepted = (accepted: WireAccepted): AsyncAccepted => accepted;
const publicCallback = (payload: WebhookSuccess): CallbackSuccess => payload;

/** The request on the wire: the vocabulary's default for each scene setting left out. */
function wireRequest(request: ImageRequest): GenerationRequest {
  const body: Record<string, unknown> = { ...request };
  for (const field of ENUM_FIELDS) body[field] ??= (sceneSpec(field) as EnumSpec).default;
  body.tags ??= [];
  return body as GenerationRequest;
}

function retryPolicy(options: RetryOptions | undefined): RetryPolicy {
  const base = DEFAULT_RETRY_POLICY;
  if (!options) return base;
  return {
    ...base,
    ...(options.rateLimitedAttempts !== undefined && { rateLimitedAttempts: options.rateLimitedAttempts }),
    ...(options.serverErrors !== undefined && { serverErrors: options.serverErrors }),
    ...(options.retryUnsafe !== undefined && { retryUnsafe: options.retryUnsafe }),
    ...(options.firstDelayMs !== undefined && { firstDelayMs: options.firstDelayMs }),
    ...(options.maxDelayMs !== undefined && { maxDelayMs: options.maxDelayMs }),
    ...(options.maxRetryAfterMs !== undefined && { maxRetryAfterMs: options.maxRetryAfterMs }),
    attempts: { ...base.attempts, ...options.attempts },
  };
}

/**
 * Waits for the webhooks of async generations: the listener `generate-async
 * --listen` and `batch --async` use. Give `callbackUrl` to generateAsync, then
 * wait for its requestId; close it when done.
 */
export class CallbackListener {
  /** @internal */
  constructor(
    private readonly listener: import('../webhook/listener.js').WebhookListener,
    private readonly redact: (text: string) => string,
  ) {}

  /** The URL the service must call: x-callback-url of generateAsync. */
  get callbackUrl(): string {
    return this.listener.callbackUrl;
  }

  /**
   * The success payload of `requestId`'s callback (even one that came before
   * this call). Rejects with GenerationFailedError for an error payload, and
   * with a NetworkError coded 'Timeout' when none came in time.
   */
  async waitFor(requestId: string, options: WaitOptions = {}): Promise<CallbackSuccess> {
    const { waitForCallback } = await import('../webhook/async-generation.js');
    const signal = options.signal ?? new AbortController().signal;
    return publicCallback(await waitForCallback(this.listener, requestId, options.timeoutMs ?? DEFAULT_CALLBACK_WAIT_MS, signal, this.redact));
  }

  /** Frees the port; waits still open end with an error. */
  close(): Promise<void> {
    return this.listener.close();
  }
}

/**
 * A client of the GenAerial v1 API (docs/library.md). Settings not given are
 * read as the CLI reads them (environment, then the config file). Nothing is
 * checked or opened until the first call; a bad setting makes that call fail.
 */
export class GenAerial {
  private readonly options: GenAerialOptions;
  private opened?: Promise<{ client: GenAerialClient; network: Network }>;
  private closed = false;

  constructor(options: GenAerialOptions = {}) {
    this.options = { ...options };
  }

  /** Generates an image (the synchronous endpoint) and gives its JPEG bytes, checked as they arrived. */
  async generate(request: ImageRequest, options: CallOptions = {}): Promise<Uint8Array> {
    const client = await this.client();
    const sink = new MemorySink();
    await client.generateInto(wireRequest(request), sink, { signal: options.signal });
    return sink.bytes;
  }

  /**
   * Generates an image and streams it to `path`, through a temporary file
   * beside it that is moved into place once the whole JPEG has arrived and
   * checked: a failure never leaves half an image under the name.
   */
  async generateToFile(request: ImageRequest, path: string, options: FileOptions = {}): Promise<SavedImage> {
    await this.refuseExisting(path, options);
    const client = await this.client();
    const { JpegFileDestination, saveImage } = await import('../files/jpeg-file.js');
    return saveImage(new JpegFileDestination(path, { force: Boolean(options.overwrite) }), (sink) => client.generateInto(wireRequest(request), sink, { signal: options.signal }));
  }

  /** Asks for a generation through the async endpoint; the service then calls `callbackUrl` (see listen()). */
  async generateAsync(request: ImageRequest, options: CallOptions & { callbackUrl: string }): Promise<AsyncAccepted> {
    const client = await this.client();
    return publicAccepted(await client.generateAsync(wireRequest(request), options.callbackUrl, { signal: options.signal }));
  }

  /** Starts a webhook listener for generateAsync's callbacks (loopback, a free port, unless told otherwise). */
  async listen(options: ListenOptions = {}): Promise<CallbackListener> {
    const client = await this.client();
    const { WebhookListener } = await import('../webhook/listener.js');
    const listener = await WebhookListener.start({ host: options.host, port: options.port, publicUrl: options.publicUrl });
    return new CallbackListener(listener, client.redact);
  }

  /**
   * An async generation from end to end, as `generate-async --listen`: a
   * listener of its own, the request (sent again under the retry policy where
   * that cannot charge twice), the callback, and the image downloaded from it.
   */
  async generateViaWebhook(request: ImageRequest, options: ListenOptions & WaitOptions = {}): Promise<AsyncImage> {
    const client = await this.client();
    const [{ WebhookListener }, { generateViaWebhook }] = await Promise.all([import('../webhook/listener.js'), import('../webhook/async-generation.js')]);
    const listener = await WebhookListener.start({ host: options.host, port: options.port, publicUrl: options.publicUrl });
    try {
      const signal = options.signal ?? new AbortController().signal;
      const generated = await generateViaWebhook(client, listener, wireRequest(request), { signal, timeoutMs: options.timeoutMs ?? DEFAULT_CALLBACK_WAIT_MS });
      return { ...publicCallback(generated), image: await this.download(generated.signedUrl, options) };
    } finally {
      await listener.close();
    }
  }

  /** Downloads an image from a temporary URL (a record's `url`, a callback's `signedUrl`); the key is never sent with it. */
  async download(url: string, options: CallOptions = {}): Promise<Uint8Array> {
    const client = await this.client();
    const sink = new MemorySink();
    await client.downloadInto(url, sink, { signal: options.signal });
    return sink.bytes;
  }

  /** One page of the history. */
  async list(options: ListOptions = {}, call: CallOptions = {}): Promise<ImagePage> {
    const client = await this.client();
    const sort = options.sort === undefined ? undefined : [options.sort].flat();
    return publicPage(await client.list({ page: options.page, size: options.size, sort }, { signal: call.signal }));
  }

  /**
   * Every image of the history, page by page as `list --all` walks it: each
   * image once, and a PagingError (a BadResponseError) should the service's
   * pages contradict themselves.
   */
  async *images(options: Omit<ListOptions, 'page'> & CallOptions = {}): AsyncGenerator<ImageRecord> {
    const client = await this.client();
    const sort = options.sort === undefined ? undefined : [options.sort].flat();
    for await (const { fresh } of walkPages((page) => client.list({ page, size: options.size, sort }, { signal: options.signal }))) {
      yield* fresh;
    }
  }

  /** Deletes an image of the history; a NotFound error when there is none with that id. */
  async delete(id: string, options: CallOptions = {}): Promise<void> {
    const { checkImageId } = await import('../api/client.js');
    checkImageId(id);
    const client = await this.client();
    await client.delete(id, { signal: options.signal });
  }

  /** Closes the connections; the client cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const opened = await this.opened?.catch(() => undefined);
    await opened?.network.dispatcher.close();
  }

  private async refuseExisting(path: string, options: FileOptions): Promise<void> {
    if (options.overwrite) return;
    const exists = await access(path).then(
      () => true,
      () => false,
    );
    if (exists) throw new InvalidInputError(`${path} already exists; pass { overwrite: true } to replace it`);
  }

  private client(): Promise<GenAerialClient> {
    if (this.closed) return Promise.reject(new InvalidInputError('this GenAerial client is closed'));
    this.opened ??= this.open();
    return this.opened.then(({ client }) => client);
  }

  private async open(): Promise<{ client: GenAerialClient; network: Network }> {
    const options = this.options;
    const env = { ...(options.env ?? process.env) };
    if (options.timeoutMs !== undefined) env.AERIAL_TIMEOUT_MS = String(options.timeoutMs);
    let setup: NetworkSetup | undefined;
    const { openClient } = await import('../api/client.js');
    const client = await openClient(env, {
      connections: options.connections,
      onNetwork: (opened) => (setup = opened),
      endpoint: () => endpointOf(options, env),
      retry: retryPolicy(options.retry),
      onTrace: options.onRequest && ((trace) => options.onRequest!({ ...trace })),
      userAgent: options.userAgent ?? `aerial-library/${VERSION}`,
    }).catch(async (error: unknown) => {
      await setup?.network.dispatcher.close();
      throw error;
    });
    return { client, network: setup!.network };
  }
}

/** The base URL and key, from the options, else the environment and the config file as the CLI resolves them. */
function endpointOf(options: GenAerialOptions, env: Record<string, string | undefined>): { baseUrl: string; apiKey: string } {
  try {
    return settingsOf(options, env);
  } catch (error) {
    // The CLI's words for a bad setting, as the library's own error: a library call has no exit code.
    if (error instanceof UsageError) throw new InvalidInputError(error.message);
    throw error;
  }
}

function settingsOf(options: GenAerialOptions, env: Record<string, string | undefined>): { baseUrl: string; apiKey: string } {
  let apiKey = options.apiKey;
  let baseUrl = options.baseUrl;
  if (apiKey === undefined || baseUrl === undefined) {
    const settings = resolveSettings({ apiKey, baseUrl, profile: options.profile }, env, readConfig(env));
    apiKey = settings.apiKey.value;
    baseUrl = settings.baseUrl.value;
  }
  const key = apiKey?.trim() ?? '';
  if (!key) throw new InvalidInputError('no API key: pass { apiKey }, or set AERIAL_API_KEY');
  const problem = apiKeyProblem(key);
  if (problem) throw new InvalidInputError(`the API key contains ${problem}; a key is printable ASCII without spaces`);
  return { baseUrl: validateBaseUrl(baseUrl, 'baseUrl'), apiKey: key };
}
