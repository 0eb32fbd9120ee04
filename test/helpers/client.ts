// The API client in tests of the HTTP layer itself: one against a test
// server, closed after use, and the CliError a call is expected to fail with.
import { expect } from 'vitest';
import { GenAerialClient, type ClientOptions } from '../../src/api/client.js';
import { CliError } from '../../src/api/errors.js';

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
