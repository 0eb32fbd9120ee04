// The API client in tests of the HTTP layer itself: one against a test
// server, closed after use, and the CliError a call is expected to fail with.
import { expect } from 'vitest';
import { GenAerialClient, type ClientOptions } from '../../src/api/client.js';
import { CliError } from '../../src/api/errors.js';
import { DEFAULT_TIMEOUTS, type CallKind, type CallLimits, type Timeouts } from '../../src/api/timeouts.js';

export async function withClientAt<T>(baseUrl: string, options: Partial<ClientOptions> & { apiKey: string }, use: (client: GenAerialClient) => Promise<T>): Promise<T> {
  const client = new GenAerialClient({ baseUrl, ...options });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** The CliError `promise` rejects with (the test fails if it resolves, or rejects with anything else). */
export async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

/** The default timeouts with some limits of one kind of call changed, e.g. a short body deadline for generation. */
export function withLimits(kind: CallKind, limits: Partial<CallLimits>, connectMs = DEFAULT_TIMEOUTS.connectMs): Timeouts {
  return { connectMs, calls: { ...DEFAULT_TIMEOUTS.calls, [kind]: { ...DEFAULT_TIMEOUTS.calls[kind], ...limits } } };
}
