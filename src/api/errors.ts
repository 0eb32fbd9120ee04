// How a request to the service can fail, as the API layer names it: an answer
// that refused it (its HTTP status, error code and Retry-After), no complete
// answer (and whether the service may have acted on the request anyway), an
// answer the client will not take, a generation the service reported failed,
// or input that could not be sent at all. This layer knows nothing of
// terminals or exit codes: the CLI gives each kind its exit code in one place
// (cliErrorOf in src/process/errors.ts).

/** Every failure the API layer names: a machine-readable code, and the HTTP status when an answer carried one. */
export abstract class RequestError extends Error {
  /** The async request the failure concerns, when there is one (its callback never came, or reported an error). */
  readonly requestId?: string;

  constructor(
    message: string,
    /** Machine-readable, e.g. ValidationFailed or InsufficientCredits. */
    readonly code: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A non-2xx answer from the service. */
export class ApiError extends RequestError {
  declare readonly status: number;

  constructor(
    status: number,
    code: string,
    message: string,
    /** Seconds the server asked us to wait (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, code, status);
  }
}

/** 400: the request failed the service's validation (a latitude out of range, a missing callback URL). */
export class ValidationFailed extends ApiError {}

/** 401: the API key is missing or not valid. */
export class Unauthorized extends ApiError {}

/** 402: the account has too few credits. */
export class InsufficientCredits extends ApiError {}

/** 403: the key may not do this. */
export class Forbidden extends ApiError {}

/** 404: no such image (a delete of an unknown id). */
export class NotFound extends ApiError {}

/** 429: too many requests; `retryAfterSeconds` says how long the service asked to wait. */
export class RateLimited extends ApiError {}

/** 5xx: the service failed (ErrorGeneratingImage, a gateway's 502, 503 or 504). */
export class ServerError extends ApiError {}

/**
 * The ApiError of an answer's status: a class per status the spec names, so a
 * caller can catch one with instanceof; the code is the body's, whatever it says.
 */
export function apiErrorFor(status: number, code: string, message: string, retryAfterSeconds?: number): ApiError {
  const Kind =
    { 400: ValidationFailed, 401: Unauthorized, 402: InsufficientCredits, 403: Forbidden, 404: NotFound, 429: RateLimited }[status] ??
    (status >= 500 && status < 600 ? ServerError : ApiError);
  return new Kind(status, code, message, retryAfterSeconds);
}

/**
 * A temporary image URL (list `url`, webhook `signedUrl`) refused with 401,
 * 403, 404 or 410: expired or revoked, which says nothing about the API key.
 * A fresh listing gives a new one, where the image still exists.
 */
export class ImageUrlRefusedError extends ApiError {}

/** The request never got a complete answer: refused, reset, DNS, TLS or timed out. */
export class NetworkError extends RequestError {
  constructor(
    message: string,
    code = 'NetworkError',
    /** True when the request body may have reached the server (a retry could charge twice). */
    readonly maybeProcessed = false,
  ) {
    super(message, code);
  }
}

/**
 * An answer the client will not take: not what the spec describes (a
 * redirect, the wrong content type, unreadable JSON), over its size cap, a
 * corrupt image, paging that cannot end, or a download to a forbidden address.
 */
export class BadResponseError extends RequestError {}

/** The service reported that the generation failed (the async webhook's error payload). */
export class GenerationFailedError extends RequestError {
  constructor(code: string, message: string) {
    super(message, code);
  }
}

/** A value the API layer was handed cannot be sent (an image id, a proxy or timeout variable); nothing was sent. */
export class InvalidInputError extends RequestError {
  constructor(message: string) {
    super(message, 'InvalidInput');
  }
}

/** Error code used when a response body does not carry one (401 bodies are not shown in the spec). */
export function defaultCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'ValidationFailed';
    case 401:
      return 'Unauthorized';
    case 402:
      return 'InsufficientCredits';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 429:
      return 'RateLimited';
    default:
      return status >= 500 ? 'ServerError' : `Http${status}`;
  }
}
