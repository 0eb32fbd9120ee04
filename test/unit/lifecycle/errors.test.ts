// The one place where failures of the API layer get their exit codes
// (cliErrorOf in src/lifecycle/errors.ts), and what scripts and people then see: the
// `--json` error object and the one line on stderr.
import { describe, expect, it } from 'vitest';
import { ForbiddenDestinationError } from '../../../src/api/download-guard.js';
import {
  ApiError,
  BadResponseError,
  GenerationFailedError,
  ImageUrlRefusedError,
  InvalidInputError,
  NetworkError,
  type RequestError,
} from '../../../src/api/errors.js';
import { CorruptImageError } from '../../../src/api/jpeg-verifier.js';
import { PagingError } from '../../../src/api/pages.js';
import { MaybeChargedError } from '../../../src/api/retry.js';
import { AsyncGenerationFailedError, CallbackTimeoutError } from '../../../src/webhook/async-generation.js';
import { asCliError, CLI_REMEDIES, CliError, cliErrorOf, ExitCode, exitCodeForStatus, FileSystemError, GeneratedImageDownloadError, UsageError } from '../../../src/lifecycle/errors.js';
import { TestTerminal } from '../../helpers/terminal.js';

/** The line `error` is reported with on stderr, with or without --json, in a test terminal. */
async function reported(error: CliError, json = false): Promise<string> {
  const terminal = new TestTerminal();
  (await terminal.context({ json })).io.error(error);
  await new Promise((resolve) => setImmediate(resolve));
  return terminal.stderr.text();
}

describe('exit codes of HTTP statuses', () => {
  it('gives each documented status its code, and every other one the code of its class', () => {
    const expected: Array<[number, number]> = [
      [400, ExitCode.Usage],
      [422, ExitCode.Usage],
      [401, ExitCode.Auth],
      [403, ExitCode.Auth],
      [402, ExitCode.Credits],
      [404, ExitCode.NotFound],
      [410, ExitCode.NotFound],
      [408, ExitCode.Network],
      [504, ExitCode.Network],
      [429, ExitCode.RateLimited],
      [405, ExitCode.Usage],
      [413, ExitCode.Usage],
      [500, ExitCode.Server],
      [502, ExitCode.Server],
      [599, ExitCode.Server],
      [302, ExitCode.Server],
    ];
    expect(expected.map(([status]) => [status, exitCodeForStatus(status)])).toEqual(expected);
  });
});

describe('cliErrorOf', () => {
  const kinds: Array<[string, RequestError, number]> = [
    ['a refusal', new ApiError(402, 'InsufficientCredits', 'no credits left'), ExitCode.Credits],
    ['an expired image URL', new ImageUrlRefusedError(404, 'NotFound', 'gone'), ExitCode.NotFound],
    ['a gateway timeout', new ApiError(504, 'ServerError', 'HTTP 504'), ExitCode.Network],
    ['no answer', new NetworkError('connection reset', 'ECONNRESET', true), ExitCode.Network],
    ['a generation that may be charged', new MaybeChargedError(new NetworkError('cut', 'UND_ERR_SOCKET', true)), ExitCode.Network],
    ['a callback that never came', new CallbackTimeoutError('req-1', 300), ExitCode.Network],
    ['an answer not taken', new BadResponseError('unexpected redirect', 'UnexpectedRedirect', 302), ExitCode.Server],
    ['a corrupt image', new CorruptImageError('JPEG is truncated'), ExitCode.Server],
    ['paging that cannot end', new PagingError("the service's paging cannot be trusted", 2, 40), ExitCode.Server],
    ['a forbidden address', new ForbiddenDestinationError('169.254.169.254'), ExitCode.Server],
    ['a failed generation', new GenerationFailedError('ErrorGeneratingImage', 'no'), ExitCode.Server],
    ['a webhook error payload', new AsyncGenerationFailedError('req-2', 'ErrorGeneratingImage', 'no'), ExitCode.Server],
    ['input that cannot be sent', new InvalidInputError('image id "." is a path segment of its own, not an id'), ExitCode.Usage],
  ];

  it.each(kinds)('gives %s its exit code, keeping message, code and status', (_what, error, exitCode) => {
    const cli = cliErrorOf(error);
    expect(cli).toBeInstanceOf(CliError);
    expect(cli.exitCode).toBe(exitCode);
    // Said with what the user can do about it, in flags, where there is something (api/errors.ts, Remedy).
    expect(cli.message).toBe(error.remedy === undefined ? error.message : `${error.message}${CLI_REMEDIES[error.remedy]}`);
    expect(cli.status).toBe(error.status);
    expect(cli.cause).toBe(error);
    expect(asCliError(error)).toEqual(cli);
  });

  it('makes input the API layer could not send a usage error, as scripts have always seen it', async () => {
    const cli = cliErrorOf(new InvalidInputError("HTTPS_PROXY must be an http:// or https:// proxy URL such as http://proxy.example.com:3128; got 'ftp://x'"));
    expect(cli).toBeInstanceOf(UsageError);
    expect(cli.toJSON()).toEqual({ status: null, error: 'UsageError', message: expect.stringMatching(/^HTTPS_PROXY must be/), exitCode: 2 });
    expect(await reported(cli)).toMatch(/^error: HTTPS_PROXY must be an http/);
  });

  it('carries the request id of an async generation into --json', () => {
    expect(cliErrorOf(new CallbackTimeoutError('req-1', 90_000)).toJSON()).toEqual({
      status: null,
      error: 'Timeout',
      message: "no callback for request req-1 within 1m30s; it may still finish — look for it later with 'aerial list'",
      exitCode: 7,
      requestId: 'req-1',
    });
    expect(cliErrorOf(new AsyncGenerationFailedError('req-2', 'ErrorGeneratingImage', 'the model failed')).toJSON()).toEqual({
      status: null,
      error: 'ErrorGeneratingImage',
      message: 'the model failed (request req-2)',
      exitCode: 6,
      requestId: 'req-2',
    });
    expect(cliErrorOf(new ApiError(401, 'Unauthorized', 'HTTP 401')).toJSON()).toEqual({ status: 401, error: 'Unauthorized', message: 'HTTP 401', exitCode: 3 });
  });

  it('reports a refusal with its code, and no answer without (its code is in its message)', async () => {
    expect(await reported(cliErrorOf(new ApiError(402, 'InsufficientCredits', 'no credits left')))).toBe('error: InsufficientCredits — no credits left\n');
    expect(await reported(cliErrorOf(new NetworkError('connection to a.example failed: connection reset (ECONNRESET; 1 attempt)', 'ECONNRESET')))).toBe(
      'error: connection to a.example failed: connection reset (ECONNRESET; 1 attempt)\n',
    );
    expect(await reported(cliErrorOf(new BadResponseError('response body exceeds 1 MiB', 'ResponseTooLarge')), true)).toBe(
      '{"status":null,"error":"ResponseTooLarge","message":"response body exceeds 1 MiB","exitCode":6}\n',
    );
  });

  it('leaves the CLI’s own errors as they are, and names nothing else', () => {
    const usage = new UsageError('--page must be a whole number');
    expect(asCliError(usage)).toBe(usage);
    expect(asCliError(new TypeError('a bug'))).toBeUndefined();
    expect(asCliError(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toBeUndefined();
  });
});

describe('GeneratedImageDownloadError', () => {
  it('is 7 when no answer came, and the service’s failure (6) otherwise, never a refusal of the key', async () => {
    const noAnswer = new GeneratedImageDownloadError(new NetworkError('connection reset', 'ECONNRESET'));
    const refused = new GeneratedImageDownloadError(new ImageUrlRefusedError(403, 'Forbidden', 'expired'));
    const notSaved = new GeneratedImageDownloadError(new FileSystemError('cannot write x.jpg: no space left on the device', 'NoSpace'));
    expect([noAnswer.exitCode, refused.exitCode, notSaved.exitCode]).toEqual([ExitCode.Network, ExitCode.Server, ExitCode.Server]);
    expect(refused.toJSON()).toEqual({ status: null, error: 'Forbidden', message: 'downloading the generated image failed: expired', exitCode: 6 });
    expect(await reported(noAnswer)).toBe('error: ECONNRESET — downloading the generated image failed: connection reset\n');
  });
});
