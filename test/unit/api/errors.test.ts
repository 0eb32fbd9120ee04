// An answer's status picks its error class (apiErrorFor), so a caller of the
// library catches one with instanceof; the code stays the service's.
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  apiErrorFor,
  Forbidden,
  InsufficientCredits,
  NotFound,
  RateLimited,
  ServerError,
  Unauthorized,
  ValidationFailed,
} from '../../../src/api/errors.js';

describe('apiErrorFor', () => {
  it('gives each status the spec names its class, and keeps the code, message and Retry-After', () => {
    const cases: Array<[number, typeof ApiError]> = [
      [400, ValidationFailed],
      [401, Unauthorized],
      [402, InsufficientCredits],
      [403, Forbidden],
      [404, NotFound],
      [429, RateLimited],
      [500, ServerError],
      [503, ServerError],
      [418, ApiError],
    ];
    for (const [status, Kind] of cases) {
      const error = apiErrorFor(status, 'SomeCode', 'what the service said', 3);
      expect(error.constructor, String(status)).toBe(Kind);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ name: Kind.name, status, code: 'SomeCode', message: 'what the service said', retryAfterSeconds: 3 });
    }
  });
});
