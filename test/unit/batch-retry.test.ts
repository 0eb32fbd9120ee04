import { describe, expect, it } from 'vitest';
import { ApiError, CliError, ExitCode, GenerationFailedError, NetworkError, UsageError } from '../../src/api/errors.js';
import { backoffDelay, decide, DEFAULT_RETRY_POLICY, describeFailure, MaybeChargedError, toCliError, type RetryPolicy } from '../../src/batch/retry.js';

const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
const half = () => 0.5;

describe('backoffDelay', () => {
  it('doubles per retry, caps, and keeps jitter within [ceiling/2, ceiling]', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(2, policy, () => 1)).toBe(200);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(3, policy);
      expect(delay).toBeGreaterThanOrEqual(200);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });
});

describe('decide', () => {
  it('retries 5xx with backoff until the retries run out', () => {
    const error = new ApiError(500, 'ErrorGeneratingImage', 'boom');
    expect(decide(error, 'request', 0, policy, half)).toEqual({ action: 'retry', delayMs: 75, pauseAll: false });
    expect(decide(error, 'request', policy.maxRetries, policy, half)).toEqual({ action: 'fail', error });
  });

  it('honours Retry-After on 429 (capped) and pauses the whole pool', () => {
    expect(decide(new ApiError(429, 'RateLimited', 'slow', 2), 'request', 0, policy, () => 0)).toEqual({ action: 'retry', delayMs: 2000, pauseAll: true });
    const capped = decide(new ApiError(429, 'RateLimited', 'slow', 3600), 'request', 0, policy, () => 0);
    expect(capped).toEqual({ action: 'retry', delayMs: 5000, pauseAll: true });
    const noHeader = decide(new ApiError(429, 'RateLimited', 'slow'), 'request', 1, policy, () => 1);
    expect(noHeader).toEqual({ action: 'retry', delayMs: 200, pauseAll: true });
    expect(decide(new ApiError(429, 'RateLimited', 'slow', 1), 'request', policy.maxRetries, policy).action).toBe('fail');
  });

  it('never retries 400 or other client errors, and stops the batch on 401, 403 and 402', () => {
    expect(decide(new ApiError(400, 'ValidationFailed', 'bad'), 'request', 0, policy).action).toBe('fail');
    expect(decide(new ApiError(404, 'NotFound', 'gone'), 'request', 0, policy).action).toBe('fail');
    expect(decide(new UsageError('exists'), 'response', 0, policy).action).toBe('fail');
    for (const status of [401, 402, 403]) {
      const decision = decide(new ApiError(status, 'X', 'no'), 'request', 0, policy);
      expect(decision.action).toBe('stop');
    }
  });

  it('retries a connection that failed before the body could reach the server', () => {
    const refused = new NetworkError('could not connect (ECONNREFUSED)', 'ECONNREFUSED', false);
    expect(decide(refused, 'request', 0, policy, half).action).toBe('retry');
  });

  it('gives up a maybe-charged row unless --retry-unsafe, and says why', () => {
    const reset = new NetworkError('connection failed (ECONNRESET)', 'ECONNRESET', true);
    const refusedRetry = decide(reset, 'request', 0, policy);
    expect(refusedRetry.action).toBe('fail');
    const error = (refusedRetry as { error: CliError }).error;
    expect(error).toBeInstanceOf(MaybeChargedError);
    expect(error.exitCode).toBe(ExitCode.Network);
    expect(error.message).toMatch(/may already have generated \(and charged for\) this image.*--retry-unsafe/);
    expect(decide(reset, 'request', 0, { ...policy, retryUnsafe: true }, half).action).toBe('retry');
  });

  it('treats any failure while the image streams in as maybe-charged', () => {
    const cut = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(decide(cut, 'response', 0, policy).action).toBe('fail');
    expect(decide(cut, 'response', 0, { ...policy, retryUnsafe: true }, half).action).toBe('retry');
    const truncated = new CliError('JPEG is truncated', ExitCode.Server, 'InvalidImage');
    expect(decide(truncated, 'response', 0, policy).action).toBe('fail');
    expect(decide(truncated, 'response', 0, { ...policy, retryUnsafe: true }, half).action).toBe('retry');
  });

  it('retries an async generation that failed by webhook like a 5xx', () => {
    expect(decide(new GenerationFailedError('ErrorGeneratingImage', 'x'), 'request', 0, policy, half).action).toBe('retry');
  });

  it('does not retry a local file-system failure', () => {
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    const decision = decide(full, 'response', 0, { ...policy, retryUnsafe: true });
    expect(decision.action).toBe('fail');
    expect(toCliError(full, 'response')).toMatchObject({ code: 'FileSystemError', exitCode: 2, message: 'cannot use: no space left on the device' });
  });
});

describe('describeFailure', () => {
  it('names the error code and the attempts', () => {
    expect(describeFailure(new ApiError(500, 'ErrorGeneratingImage', 'boom'), 6)).toBe('ErrorGeneratingImage: boom (after 6 attempts)');
    expect(describeFailure(new NetworkError('connection failed', 'ECONNRESET'), 1)).toBe('connection failed');
  });
});
