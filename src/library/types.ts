// The types the library publishes (src/library/index.ts). Written out rather
// than inferred from the zod schemas the client checks answers with: the
// package bundles zod, so a published type must not name it. The request is
// written from the one vocabulary (src/scene/vocabulary.ts) with a doc comment
// on every field (image-request.ts), so a value the service does not know fails
// to compile. genaerial.ts holds each of these to what the client returns (an
// assignment that stops compiling if they part). Inputs take readonly arrays.
import type { Resolution } from '../api/enums.js';

export type { ImageRequest } from './image-request.js';
/** The values of each scene setting, as types (their lists at run time: RESOLUTIONS, ZOOMS, … in values.ts). */
export type { Angle, AspectRatio, Bearing, Daytime, Epoch, Resolution, Weather, Zoom } from '../api/enums.js';

/** One image of the history, as the list endpoint gives it; fields the service adds are kept. */
export interface ImageRecord {
  id: string;
  /** A temporary, signed URL of the JPEG. */
  url: string;
  coordinates: { latitude: number; longitude: number; [field: string]: unknown };
  /** One of the spec's: HD, FHD or UHD. */
  resolution: Resolution;
  /** ISO 8601, UTC. */
  createdAt: string;
  [field: string]: unknown;
}

/** A page of the history (the list endpoint's answer); pages are numbered from 0. */
export interface ImagePage {
  content: ImageRecord[];
  totalElements: number;
  totalPages: number;
  page: number;
  size: number;
  [field: string]: unknown;
}

export interface ListOptions {
  /** From 0. */
  page?: number;
  size?: number;
  /** Sort orders as the service takes them, such as 'createdAt,desc'. */
  sort?: string | readonly string[];
}

/** The async endpoint's acceptance: the image arrives later, by webhook. */
export interface AsyncAccepted {
  requestId: string;
  status: string;
  [field: string]: unknown;
}

/** A webhook's success payload. */
export interface CallbackSuccess {
  requestId: string;
  /** A temporary, signed URL of the JPEG (download() takes it). */
  signedUrl: string;
  generatedImageId: string;
  creditsUsed: number;
  [field: string]: unknown;
}

/** An image made through the async endpoint and its webhook, and its bytes. */
export interface AsyncImage extends CallbackSuccess {
  image: Uint8Array;
}

/**
 * How calls are retried; every field optional, the CLI's policy for single
 * commands being the default. A generation is sent again only where it cannot
 * have been charged, unless `retryUnsafe` says otherwise.
 */
export interface RetryOptions {
  /** Attempts per call, by kind: lookups (list, delete) 3, downloads 3, generations 1. */
  attempts?: { lookup?: number; download?: number; generation?: number };
  /** Attempts of a call answered 429 (Too Many Requests); default 4. */
  rateLimitedAttempts?: number;
  /** Which 5xx answers are retried: 'gateway' (502, 503, 504; the default) or 'all'. */
  serverErrors?: 'gateway' | 'all';
  /** Also send again a generation that may already have been charged; default false. */
  retryUnsafe?: boolean;
  /** The first pause between attempts (it doubles, with jitter); default 500. */
  firstDelayMs?: number;
  /** The longest pause; default 30000. */
  maxDelayMs?: number;
  /** The longest Retry-After obeyed; default 60000 (AERIAL_MAX_RETRY_AFTER lowers it). */
  maxRetryAfterMs?: number;
}

/** One request the client sent (its attempts each get one), for logging. Never carries the key. */
export interface RequestTrace {
  method: string;
  url: string;
  status: number | 'error';
  ms: number;
  attempt: number;
  detail?: string;
}

export interface GenAerialOptions {
  /** Default: AERIAL_API_KEY, then the config file's profile (as the CLI). */
  apiKey?: string;
  /** Default: AERIAL_BASE_URL, then the config file's profile, then https://api.genaerial.com. */
  baseUrl?: string;
  /** The config file's profile to read what is not given; default: AERIAL_PROFILE, then 'default'. */
  profile?: string;
  /**
   * The environment the settings are read from, as the CLI reads them:
   * AERIAL_API_KEY, AERIAL_BASE_URL, AERIAL_PROFILE, AERIAL_CONFIG_DIR,
   * AERIAL_TIMEOUT_MS, AERIAL_MAX_RETRY_AFTER, HTTPS_PROXY, HTTP_PROXY,
   * NO_PROXY, NODE_EXTRA_CA_CERTS. Default: process.env.
   */
  env?: Record<string, string | undefined>;
  /**
   * The longest one attempt of a call may take, from sending to its whole
   * answer, in milliseconds: a TimeoutError on time (within a few ms) when it
   * runs out, after which the call is retried as the retry policy says. Also
   * every stage's limit (as AERIAL_TIMEOUT_MS). Default: the CLI's per-stage
   * limits (a generation may take minutes).
   */
  timeoutMs?: number;
  /**
   * The longest a whole call may take, its retries and the waits between them
   * included, in milliseconds: a TimeoutError coded 'Deadline' when it runs
   * out. A call's own deadlineMs wins. Default: none.
   */
  deadlineMs?: number;
  retry?: RetryOptions;
  /** The most connections open to the service at once (keep-alive, reused); default: as many as calls in flight. */
  connections?: number;
  /** Told of every attempt the client makes. */
  onRequest?: (trace: RequestTrace) => void;
  /** Default: aerial-library/<version>. */
  userAgent?: string;
}

export interface CallOptions {
  /** Aborts the call: it then throws an AbortError (a TimeoutError when the signal timed out), the reason as its cause. */
  signal?: AbortSignal;
  /** The longest this call may take, retries included, in milliseconds (see GenAerialOptions.deadlineMs). */
  deadlineMs?: number;
}

export interface FileOptions extends CallOptions {
  /** Replace a file already at the path; default false (the call fails with a FileError coded AlreadyExists, nothing sent). */
  overwrite?: boolean;
  /** Write GPS EXIF and the AI-generated note into the file, as `aerial generate` does; default true. */
  metadata?: boolean;
  /**
   * A directory the file must stay inside: `path` is then a plain relative
   * name in it (no absolute path, no '..', no link leading out), as the MCP
   * server holds a model's names to its --output-dir. Default: none.
   */
  root?: string;
}

export interface SavedImage {
  /** Absolute. */
  path: string;
  bytes: number;
}

export interface ListenOptions {
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind; default 0, a free one. */
  port?: number;
  /** The URL the service must call when it cannot reach the bound address (a tunnel); a secret token path is appended. */
  publicUrl?: string;
}

export interface WaitOptions extends CallOptions {
  /** How long to wait for the callback; default 600000 (10 minutes, as the CLI). */
  timeoutMs?: number;
}
