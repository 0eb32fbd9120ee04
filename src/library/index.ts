// 'aerial': the library's public surface (docs/library.md). What is exported
// here is what is supported; test/e2e/library-package.test.ts holds the
// package's exports to this list. The sandbox is 'aerial/sandbox' (sandbox.ts),
// kept apart so that importing the client loads none of it.
export { GenAerial, CallbackListener } from './genaerial.js';
export {
  RequestError,
  ApiError,
  ValidationFailed,
  Unauthorized,
  InsufficientCredits,
  Forbidden,
  NotFound,
  RateLimited,
  ServerError,
  ImageUrlRefusedError,
  NetworkError,
  BadResponseError,
  GenerationFailedError,
  InvalidInputError,
} from '../api/errors.js';
export type {
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
  RequestTrace,
  RetryOptions,
  SavedImage,
  WaitOptions,
} from './types.js';
