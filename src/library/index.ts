// 'aerial': the library's public surface (docs/library.md). What is exported
// here is what is supported; test/heavy/library-package.test.ts holds the
// package's exports to this list. Every class a call can throw is here. The
// sandbox is 'aerial/sandbox' (sandbox.ts), kept apart so that importing the
// client loads none of it.
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
  TimeoutError,
  AbortError,
  BadResponseError,
  GenerationFailedError,
  InvalidInputError,
  FileError,
  type ApiErrorCode,
  type Remedy,
} from '../api/errors.js';
export { MaybeChargedError } from '../api/retry.js';
export { PagingError } from '../api/pages.js';
export { CorruptImageError } from '../api/jpeg-verifier.js';
export { ForbiddenDestinationError } from '../api/download-guard.js';
export { AsyncGenerationFailedError, CallbackTimeoutError } from '../webhook/async-generation.js';
export { ANGLES, ASPECT_RATIOS, BEARINGS, DAYTIMES, EPOCHS, MAX_TAGS, RESOLUTIONS, SCENE_DEFAULTS, WEATHERS, ZOOMS } from './values.js';
export type {
  Angle,
  AspectRatio,
  AsyncAccepted,
  AsyncImage,
  Bearing,
  CallbackSuccess,
  CallOptions,
  Daytime,
  Epoch,
  FileOptions,
  GenAerialOptions,
  ImagePage,
  ImageRecord,
  ImageRequest,
  ListenOptions,
  ListOptions,
  RequestTrace,
  Resolution,
  RetryOptions,
  SavedImage,
  WaitOptions,
  Weather,
  Zoom,
} from './types.js';
