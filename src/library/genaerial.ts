// The client the library publishes: a thin face over the one the CLI's
// commands use (src/api/client.ts), made by the same factory (openClient) from
// the same settings, with the same image path into memory or to a file
// (image-download.ts, jpeg-file.ts), the same paging walk (pages.ts) and the
// same webhook listener (src/webhook/). It never writes to a terminal and never
// ends the process: every failure is a thrown error (errors.ts).
import type { GenAerialClient } from '../api/client.js';
import { InvalidInputError, TimeoutError } from '../api/errors.js';
import { MemorySink } from '../api/memory-sink.js';
import type { Network, NetworkSetup } from '../api/network.js';
import { walkPages } from '../api/pages.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../api/retry.js';
import type { AsyncAccepted as WireAccepted, GenerationRequest, Page, WebhookSuccess } from '../api/schema.js';
import { VERSION } from '../build-outputs/version.js';
import { apiKeyProblem, checkProfileName, profileOf, readConfig, resolveSettings } from '../config/config.js';
import { validateBaseUrl } from '../input/flags.js';
import { validateRequest } from '../operations/request.js';
import { publicError, type CallStop } from './errors.js';
import { boolean, checkCallOptions, checkClientOptions, milliseconds, sortOrders, string, wholeNumber } from './options.js';
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
  Resolution,
  RetryOptions,
  SavedImage,
  WaitOptions,
} from './types.js';

/** As `generate-async --timeout`'s default. */
const DEFAULT_CALLBACK_WAIT_MS = 600_000;

// The public types are the client's, written out: these stop compiling if the two part.
// A record's resolution is typed as the spec's three values (the service sends no other).
const publicPage = (page: Page): ImagePage => page as Page & { content: Array<Page['content'][number] & { resolution: Resolution }> };
const publicAccepted = (accepted: WireAccepted): AsyncAccepted => accepted;
const publicCallback = (payload: WebhookSuccess): CallbackSuccess => payload;
const wireRequest = (request: ImageRequest): GenerationRequest => validateRequest(request);

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
 * One call's stop: the caller's signal, and the call's deadline (deadlineMs,
 * its own or the client's) as a signal that aborts with a TimeoutError. The
 * combined signal is what the call runs under; clear() once it is over.
 */
function callStop(options: CallOptions, defaultDeadlineMs: number | undefined): CallStop & { combined?: AbortSignal; clear(): void } {
  const deadlineMs = options.deadlineMs ?? defaultDeadlineMs;
  if (deadlineMs === undefined) return { signal: options.signal, combined: options.signal, clear() {} };
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort(new TimeoutError(`the call did not finish within its deadline of ${deadlineMs} ms (deadlineMs), its retries included`, 'Deadline', true));
  }, deadlineMs);
  const combined = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  return { signal: options.signal, deadline: deadline.signal, combined, clear: () => clearTimeout(timer) };
}

/** A listener's bind refused, in the terms of ListenOptions. */
function listenError(error: unknown, options: ListenOptions): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const host = options.host ?? '127.0.0.1';
  if (code === 'EADDRINUSE') return new InvalidInputError(`port ${options.port} is already in use on ${host}; pick another or leave port out for a free one`, { cause: error });
  if (code === 'EACCES') return new InvalidInputError(`port ${options.port} needs privileges on ${host}; pick a port above 1023`, { cause: error });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EINVAL') {
    return new InvalidInputError(`host ${host} is not an address of this machine (try 127.0.0.1 or 0.0.0.0)`, { cause: error });
  }
  return error;
}

const LISTEN_CHECKS = { host: string, port: wholeNumber(0, 65_535), publicUrl: string };

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
   * this call). Rejects with GenerationFailedError (an AsyncGenerationFailedError)
   * for an error payload, and with a CallbackTimeoutError (a TimeoutError)
   * when none came in time.
   */
  async waitFor(requestId: string, options: WaitOptions = {}): Promise<CallbackSuccess> {
    let stop: ReturnType<typeof callStop> | undefined;
    try {
      checkCallOptions(options, { timeoutMs: milliseconds(1) });
      string(requestId, 'requestId');
      stop = callStop(options, undefined);
      const { waitForCallback } = await import('../webhook/async-generation.js');
      return publicCallback(await waitForCallback(this.listener, requestId, options.timeoutMs ?? DEFAULT_CALLBACK_WAIT_MS, stop.combined ?? new AbortController().signal, this.redact));
    } catch (error) {
      throw publicError(error, stop ?? { signal: options.signal });
    } finally {
      stop?.clear();
    }
  }

  /** Frees the port; waits still open end with an error. */
  close(): Promise<void> {
    return this.listener.close();
  }
}

/**
 * A client of the GenAerial v1 API (docs/library.md). Settings not given are
 * read as the CLI reads them (environment, then the config file). Nothing is
 * checked or opened until the first call; a bad setting or option makes that
 * call fail with an InvalidInputError naming it, and nothing is sent.
 */
export class GenAerial {
  private readonly options: GenAerialOptions;
  private opened?: Promise<{ client: GenAerialClient; network: Network }>;
  private closed = false;

  constructor(options: GenAerialOptions = {}) {
    this.options = { ...options };
  }

  /**
   * Generates an image (the synchronous endpoint) and gives its JPEG bytes,
   * checked as they arrived. The request is checked first: a value the
   * vocabulary refuses is an InvalidInputError, and nothing is sent.
   */
  generate(request: ImageRequest, options: CallOptions = {}): Promise<Uint8Array> {
    return this.call(options, {}, async (client, signal) => {
      const body = wireRequest(request);
      const sink = new MemorySink();
      await client.generateInto(body, sink, { signal });
      return sink.bytes;
    });
  }

  /**
   * Generates an image and saves it at `path` as `aerial generate` saves it:
   * the path checked before anything is sent (a file already there needs
   * `overwrite`; a directory, a dangling link or a special file is refused; a
   * missing directory is made), then the JPEG streamed to a temporary file
   * beside it, with its GPS EXIF and AI-generated note unless `metadata:
   * false`, and moved into place once whole and checked: a failure never
   * leaves half an image under the name. With `root`, `path` must be a plain
   * name inside that directory, no link leading out.
   */
  generateToFile(request: ImageRequest, path: string, options: FileOptions = {}): Promise<SavedImage> {
    return this.call(options, { overwrite: boolean, metadata: boolean, root: string }, async (client, signal) => {
      string(path, 'path');
      const body = wireRequest(request);
      const { prepareImageTarget, saveGeneratedImage } = await import('../operations/save-image.js');
      const rules = { overwrite: options.overwrite === true, root: options.root, label: '' };
      // Before anything is sent: a refused target (a device or FIFO too: regular files only) costs nothing.
      const target = await prepareImageTarget(path, rules);
      return saveGeneratedImage(client, {
        ...rules,
        request: body,
        target,
        metadata: options.metadata === false ? false : { software: `aerial-library ${VERSION}`, redact: client.redact },
        signal,
      });
    });
  }

  /** Asks for a generation through the async endpoint; the service then calls `callbackUrl` (see listen()). */
  generateAsync(request: ImageRequest, options: CallOptions & { callbackUrl: string }): Promise<AsyncAccepted> {
    return this.call(options, { callbackUrl: string }, async (client, signal) => {
      const { validateCallbackUrl } = await import('../input/flags.js');
      const callbackUrl = validateCallbackUrl(options.callbackUrl, 'callbackUrl');
      return publicAccepted(await client.generateAsync(wireRequest(request), callbackUrl, { signal }));
    });
  }

  /** Starts a webhook listener for generateAsync's callbacks (loopback, a free port, unless told otherwise). */
  listen(options: ListenOptions = {}): Promise<CallbackListener> {
    return this.call({}, {}, async (client) => {
      checkCallOptions(options, LISTEN_CHECKS);
      const { WebhookListener } = await import('../webhook/listener.js');
      const listener = await WebhookListener.start({ host: options.host, port: options.port, publicUrl: options.publicUrl }).catch((error: unknown) => {
        throw listenError(error, options);
      });
      return new CallbackListener(listener, client.redact);
    });
  }

  /**
   * An async generation from end to end, as `generate-async --listen`: a
   * listener of its own, the request (sent again under the retry policy where
   * that cannot charge twice), the callback, and the image downloaded from it.
   */
  generateViaWebhook(request: ImageRequest, options: ListenOptions & WaitOptions = {}): Promise<AsyncImage> {
    return this.call(options, { ...LISTEN_CHECKS, timeoutMs: milliseconds(1) }, async (client, signal) => {
      const body = wireRequest(request);
      const [{ WebhookListener }, { generateViaWebhook }] = await Promise.all([import('../webhook/listener.js'), import('../webhook/async-generation.js')]);
      const listener = await WebhookListener.start({ host: options.host, port: options.port, publicUrl: options.publicUrl }).catch((error: unknown) => {
        throw listenError(error, options);
      });
      try {
        const generated = await generateViaWebhook(client, listener, body, { signal: signal ?? new AbortController().signal, timeoutMs: options.timeoutMs ?? DEFAULT_CALLBACK_WAIT_MS });
        const sink = new MemorySink();
        await client.downloadInto(generated.signedUrl, sink, { signal });
        return { ...publicCallback(generated), image: sink.bytes };
      } finally {
        await listener.close();
      }
    });
  }

  /** Downloads an image from a temporary URL (a record's `url`, a callback's `signedUrl`); the key is never sent with it. */
  download(url: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.call(options, {}, async (client, signal) => {
      string(url, 'url');
      const sink = new MemorySink();
      await client.downloadInto(url, sink, { signal });
      return sink.bytes;
    });
  }

  /** One page of the history. */
  list(options: ListOptions = {}, call: CallOptions = {}): Promise<ImagePage> {
    return this.call(call, {}, async (client, signal) => {
      checkCallOptions(options, LIST_CHECKS);
      const sort = options.sort === undefined ? undefined : [options.sort].flat();
      return publicPage(await client.list({ page: options.page, size: options.size, sort }, { signal }));
    });
  }

  /**
   * Every image of the history, page by page as `list --all` walks it: pages
   * of 1,000 (or the most the service grants) unless `size` says otherwise,
   * each image once, and a PagingError (a BadResponseError) should the
   * service's pages contradict themselves. `deadlineMs` bounds each page's call.
   */
  async *images(options: Omit<ListOptions, 'page'> & CallOptions = {}): AsyncGenerator<ImageRecord> {
    const { signal, deadlineMs, ...listOptions } = options;
    let client: GenAerialClient;
    try {
      checkCallOptions({ signal, deadlineMs });
      checkCallOptions(listOptions, { size: LIST_CHECKS.size, sort: LIST_CHECKS.sort });
      client = await this.client();
    } catch (error) {
      throw publicError(error, { signal });
    }
    const sort = options.sort === undefined ? undefined : [options.sort].flat();
    // The size asked for, or the sizes list --all tries (WALK_PAGE_SIZES), following what the service grants.
    const pages = walkPages((page, size) => this.call({ signal, deadlineMs }, {}, (_client, callSignal) => client.list({ page, size, sort }, { signal: callSignal })), {
      sizes: options.size === undefined ? undefined : [options.size],
    });
    try {
      for await (const { fresh } of pages) yield* fresh as ImageRecord[];
    } catch (error) {
      throw publicError(error, { signal });
    }
  }

  /** Deletes an image of the history; a NotFound error when there is none with that id. */
  delete(id: string, options: CallOptions = {}): Promise<void> {
    return this.call(options, {}, async (client, signal) => {
      string(id, 'id');
      const { checkImageId } = await import('../api/client.js');
      checkImageId(id);
      await client.delete(id, { signal });
    });
  }

  /** Closes the connections; the client cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const opened = await this.opened?.catch(() => undefined);
    await opened?.network.dispatcher.close();
  }

  /**
   * One call: its options checked, the client opened (settings checked, once),
   * `work` run under the caller's signal and the call's deadline, and whatever
   * it ends with thrown as the library's error (errors.ts).
   */
  private async call<T>(options: CallOptions, checks: Parameters<typeof checkCallOptions>[1], work: (client: GenAerialClient, signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    let stop: ReturnType<typeof callStop> | undefined;
    try {
      checkCallOptions(options, checks);
      stop = callStop(options, this.options.deadlineMs);
      const client = await this.client();
      if (stop.combined?.aborted) throw stop.combined.reason;
      return await work(client, stop.combined);
    } catch (error) {
      throw publicError(error, stop ?? { signal: options.signal });
    } finally {
      stop?.clear();
    }
  }

  private client(): Promise<GenAerialClient> {
    if (this.closed) return Promise.reject(new InvalidInputError('this GenAerial client is closed'));
    this.opened ??= this.open();
    return this.opened.then(({ client }) => client);
  }

  private async open(): Promise<{ client: GenAerialClient; network: Network }> {
    const options = this.options;
    checkClientOptions(options, '');
    const env = { ...(options.env ?? process.env) };
    if (options.timeoutMs !== undefined) env.AERIAL_TIMEOUT_MS = String(options.timeoutMs);
    let setup: NetworkSetup | undefined;
    const { openClient } = await import('../api/client.js');
    const client = await openClient(env, {
      connections: options.connections,
      onNetwork: (opened) => (setup = opened),
      endpoint: () => settingsOf(options, env),
      retry: retryPolicy(options.retry),
      attemptTimeoutMs: options.timeoutMs,
      onTrace: options.onRequest && ((trace) => options.onRequest!({ ...trace })),
      userAgent: options.userAgent ?? `aerial-library/${VERSION}`,
    }).catch(async (error: unknown) => {
      await setup?.network.dispatcher.close();
      throw error;
    });
    return { client, network: setup!.network };
  }
}

const LIST_CHECKS = { page: wholeNumber(0, Number.MAX_SAFE_INTEGER), size: wholeNumber(1, Number.MAX_SAFE_INTEGER), sort: sortOrders };

/** The base URL and key, from the options, else the environment and the config file as the CLI resolves them. */
function settingsOf(options: GenAerialOptions, env: Record<string, string | undefined>): { baseUrl: string; apiKey: string } {
  let apiKey = options.apiKey;
  let baseUrl = options.baseUrl;
  if (options.profile !== undefined) checkProfileName(options.profile, 'profile');
  if (apiKey === undefined || baseUrl === undefined) {
    const config = readConfig(env);
    // Said here in the library's terms: the settings' own words suggest the CLI's --profile.
    const named = options.profile ?? (env.AERIAL_PROFILE || undefined);
    if (named !== undefined && !profileOf(config, named)) {
      const known = Object.keys(config.profiles ?? {});
      throw new InvalidInputError(`profile '${named}' does not exist in the config file${known.length ? ` (profiles: ${known.join(', ')})` : ''}; pass { apiKey, baseUrl }, or name another profile`);
    }
    const settings = resolveSettings({ apiKey, baseUrl, profile: options.profile }, env, config);
    apiKey = settings.apiKey.value;
    baseUrl = settings.baseUrl.value;
  }
  const key = apiKey?.trim() ?? '';
  if (!key) throw new InvalidInputError('no API key: pass { apiKey }, or set AERIAL_API_KEY');
  const problem = apiKeyProblem(key);
  if (problem) throw new InvalidInputError(`the API key contains ${problem}; a key is printable ASCII without spaces`);
  return { baseUrl: validateBaseUrl(baseUrl, 'baseUrl'), apiKey: key };
}
