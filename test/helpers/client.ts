// The API client in tests of the HTTP layer itself: one against a test
// server, closed after use, and the CliError a call is expected to fail with.
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { GenAerialClient, type ClientOptions } from '../../src/api/client.js';
import type { RequestError } from '../../src/api/errors.js';
import { asCliError, type CliError } from '../../src/lifecycle/errors.js';
import type { ImageSink } from '../../src/api/image-download.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../src/api/retry.js';
import { DEFAULT_TIMEOUTS, type CallKind, type CallLimits, type Timeouts } from '../../src/api/timeouts.js';

export async function withClientAt<T>(baseUrl: string, options: Partial<ClientOptions> & { apiKey: string }, use: (client: GenAerialClient) => Promise<T>): Promise<T> {
  const client = new GenAerialClient({ baseUrl, ...options });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/**
 * What `promise` rejects with: a failure the API layer or the CLI names (the
 * test fails if it resolves, or rejects with anything else, such as a bug's
 * TypeError).
 */
export async function failure(promise: Promise<unknown>): Promise<RequestError | CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(asCliError(error), `not a failure the CLI can name: ${String(error)}`).toBeDefined();
  return error as RequestError | CliError;
}

/** The exit code the CLI reports `failure` with (through the one mapping, errors.ts). */
export function exitCodeOf(failure: RequestError | CliError): number {
  return asCliError(failure)!.exitCode;
}

/** The default timeouts with some limits of one kind of call changed, e.g. a short body deadline for generation. */
export function withLimits(kind: CallKind, limits: Partial<CallLimits>, connectMs = DEFAULT_TIMEOUTS.connectMs): Timeouts {
  return { connectMs, calls: { ...DEFAULT_TIMEOUTS.calls, [kind]: { ...DEFAULT_TIMEOUTS.calls[kind], ...limits } } };
}

/** The default retry policy with the attempts of one kind of call changed. */
export function withAttempts(kind: CallKind, attempts: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): RetryPolicy {
  return { ...policy, attempts: { ...policy.attempts, [kind]: attempts } };
}

/** A sink that keeps what it is given in memory, and counts how often it was opened and reset. */
export function memorySink(): ImageSink & { opened: number; resets: number; bytes(): Buffer } {
  let chunks: Buffer[] = [];
  const sink = {
    opened: 0,
    resets: 0,
    open: () => {
      sink.opened++;
      return new Writable({
        write(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk);
          callback();
        },
      });
    },
    reset: async () => {
      sink.resets++;
      chunks = [];
    },
    bytes: () => Buffer.concat(chunks),
  };
  return sink;
}
