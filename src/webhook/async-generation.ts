// Generation through the async endpoint, with the result caught here: the
// listener's flags and start (listener.ts), the wait for a request's callback
// (with a deadline that fires on time, deadline.ts), and the errors an async
// generation ends with. `generate-async --listen` uses it for one request,
// `batch --async` for every row through one listener. The image itself is then
// downloaded from the callback's signedUrl through the one image path
// (client.downloadInto, jpeg-file.ts).
import type { GenAerialClient } from '../api/client.js';
import { GenerationFailedError, TimeoutError } from '../api/errors.js';
import { UsageError } from '../lifecycle/errors.js';
import type { Redact } from '../text/secrets.js';
import { withRetries, type RetryHooks } from '../api/retry.js';
import type { GenerationRequest, WebhookSuccess } from '../api/schema.js';
import { startDeadline } from './deadline.js';
import { formatDuration, parseDuration, type DurationRange } from '../input/duration.js';
import { DEFAULT_LISTEN_HOST, parsePort, validateCallbackUrl } from '../input/flags.js';
import { isSuccessPayload, WebhookListener } from './listener.js';

/** How long a callback is waited for: generate-async --timeout and batch --callback-timeout. */
export const DEFAULT_CALLBACK_WAIT = '10m';
/** Bare numbers were milliseconds once: above 10 minutes, one is refused unless it has a unit. */
export const CALLBACK_WAIT_RANGE: DurationRange = { minMs: 1, maxMs: 24 * 3_600_000, bareMaxMs: 600_000 };

/** Where the listener binds, what it tells the service, and how long each callback is waited for. */
export interface ListenPlan {
  host: string;
  port: number;
  publicUrl?: string;
  timeoutMs: number;
}

/** The listener's flags as given; `publicUrl` with the flag it came from, `wait` with its own. */
export interface ListenFlags {
  host?: string;
  port?: string;
  publicUrl?: { value: string; flag: string };
  wait: { value?: string; flag: string };
}

/** Checks every listener flag before anything is bound or sent. */
export function planListener(flags: ListenFlags): ListenPlan {
  const host = flags.host?.trim() ?? DEFAULT_LISTEN_HOST;
  if (host === '') throw new UsageError('--listen-host must be an address or host name such as 127.0.0.1');
  return {
    host,
    port: parsePort(flags.port, '--listen-port'),
    publicUrl: flags.publicUrl && validateCallbackUrl(flags.publicUrl.value, flags.publicUrl.flag),
    timeoutMs: parseDuration(flags.wait.value ?? DEFAULT_CALLBACK_WAIT, flags.wait.flag, CALLBACK_WAIT_RANGE),
  };
}

/**
 * Binds the listener, its events traced through `trace` (--verbose); a
 * refused bind is a usage error naming the flag.
 */
export async function startListener(plan: Pick<ListenPlan, 'host' | 'port' | 'publicUrl'>, trace: (line: string) => void): Promise<WebhookListener> {
  try {
    return await WebhookListener.start({
      host: plan.host,
      port: plan.port,
      publicUrl: plan.publicUrl,
      onEvent: (event) => {
        const about = event.requestId === undefined ? event.reason : `${event.reason}, request ${event.requestId}`;
        if (event.outcome === 'rejected') trace(`listener: ignored ${event.method} (${event.status}, ${about})`);
        else if (event.outcome === 'duplicate') trace(`listener: ignored a repeated delivery (${about})`);
        else trace(`listener: ${event.outcome} a callback (${about})`);
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

/**
 * No callback in time, with the request id so the image can still be found
 * later (scripts see it with --json; its remedy is to look in the history). The
 * request was accepted, so it may yet be generated and charged: it is never
 * sent again unless the policy's retryUnsafe says so.
 */
export class CallbackTimeoutError extends TimeoutError {
  constructor(
    override readonly requestId: string,
    timeoutMs: number,
  ) {
    super(`no callback for request ${requestId} within ${formatDuration(timeoutMs)}; it may still finish`, 'Timeout', true, { remedy: 'findLater' });
  }
}

/** The webhook's error payload: its errorCode and errorMessage, and the request id for scripts. */
export class AsyncGenerationFailedError extends GenerationFailedError {
  constructor(
    override readonly requestId: string,
    errorCode: string,
    errorMessage: string,
  ) {
    super(errorCode, `${errorMessage} (request ${requestId})`);
  }
}

/**
 * Waits for the callback of `requestId` (registered with the listener), up to
 * `timeoutMs`: its success payload, or CallbackTimeoutError, or
 * AsyncGenerationFailedError for the error payload. A signal that aborts
 * first ends the wait with its reason.
 */
export async function waitForCallback(listener: WebhookListener, requestId: string, timeoutMs: number, signal: AbortSignal, redact: Redact): Promise<WebhookSuccess> {
  const deadline = startDeadline(timeoutMs, signal);
  let payload;
  try {
    payload = await listener.waitFor(requestId, deadline.signal);
  } catch (error) {
    if (!deadline.expired) throw error;
    throw new CallbackTimeoutError(requestId, timeoutMs);
  } finally {
    deadline.clear();
  }
  // The service's words, redacted (secrets.ts) before they are part of any message.
  if (!isSuccessPayload(payload)) throw new AsyncGenerationFailedError(redact(requestId), redact(payload.errorCode), redact(payload.errorMessage));
  return payload;
}

/**
 * One generation through the async endpoint, from sending to its success
 * callback, retried as a whole under the client's policy (retry.ts): a 429 or
 * a 5xx sends it again, as does (for batch's policy) a generation the webhook
 * reports failed; a callback that never came may still be charged.
 * `retry` carries the caller's hooks (a batch row: its slot, its stop).
 */
export function generateViaWebhook(
  client: GenAerialClient,
  listener: WebhookListener,
  request: GenerationRequest,
  options: { signal: AbortSignal; timeoutMs: number; retry?: RetryHooks; onAccepted?: (requestId: string) => void },
): Promise<WebhookSuccess & { requestId: string }> {
  const { signal, timeoutMs } = options;
  return withRetries(client.retryPolicy, { ...options.retry, kind: 'generation', signal }, async (attempt) => {
    const { requestId } = await client.generateAsync(request, listener.callbackUrl, { signal, attempt });
    options.onAccepted?.(requestId);
    // From here the service has the request: a failure may come after it did the work.
    attempt.answered = true;
    return { ...(await waitForCallback(listener, requestId, timeoutMs, signal, client.redact)), requestId };
  });
}
