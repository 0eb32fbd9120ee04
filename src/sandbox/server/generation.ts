// The generation request as the sandbox sees it: validated in its documented
// wire form, priced, and rendered into a real JPEG by ../render/aerial-image.ts
// (on worker threads, see ../render/pool.ts).
import { BEARING_ABBREVIATIONS, imageDimensions, SANDBOX_PRICE } from '../../api/enums.js';
import { describeIssues, generationRequestSchema, type GenerationRequest } from '../../api/schema.js';
import { HttpError, validationFailed } from './http-io.js';
import { WARM_UP_REQUEST, WARM_UP_SIZE, type RenderPool } from '../render/pool.js';
import type { StoredScene } from './store.js';

/**
 * Accepts exactly the documented wire form. The introductory sample's variant
 * (coordinates.latitude/longitude, bearings like N) is refused with a 400 that
 * names the field and says what the wire form is.
 */
export function parseGenerationRequest(body: unknown): GenerationRequest {
  const parsed = generationRequestSchema().safeParse(body);
  if (parsed.success) return parsed.data;
  const hints: string[] = [];
  const raw = body as { coordinates?: Record<string, unknown>; bearing?: unknown } | null;
  if (raw && typeof raw === 'object') {
    const coordinates = raw.coordinates;
    if (coordinates && typeof coordinates === 'object' && ('latitude' in coordinates || 'longitude' in coordinates)) {
      hints.push('coordinates take lat and lng, not latitude and longitude');
    }
    if (typeof raw.bearing === 'string' && raw.bearing in BEARING_ABBREVIATIONS) {
      hints.push(`bearing takes full names such as ${BEARING_ABBREVIATIONS[raw.bearing]}, not ${raw.bearing}`);
    }
  }
  throw validationFailed([describeIssues(parsed.error), ...hints].join('; '));
}

export function priceOf(request: Pick<GenerationRequest, 'resolution'>): number {
  return SANDBOX_PRICE[request.resolution];
}

export function insufficientCredits(balance: number, price: number): HttpError {
  return new HttpError(402, 'InsufficientCredits', `this generation costs ${price} credits; the account has ${balance}`);
}

export function generationFailed(detail: string): HttpError {
  return new HttpError(500, 'ErrorGeneratingImage', detail);
}

export const INJECTED_FAILURE_MESSAGE = 'the sandbox failed this generation on purpose (--fail-rate)';

export interface RenderedImage {
  jpeg: Buffer;
  width: number;
  height: number;
}

/**
 * Rendering is deterministic in the request, so recent results are reused, by
 * every sandbox in the process (tests ask for the same scene often).
 */
const RENDER_CACHE_SIZE = 8;
const renderCache = new Map<string, Buffer>();

function cachedRender(key: string): Buffer | undefined {
  const jpeg = renderCache.get(key);
  if (jpeg) {
    // Most recently used last: the first entry is the one to evict.
    renderCache.delete(key);
    renderCache.set(key, jpeg);
  }
  return jpeg;
}

function rememberRender(key: string, jpeg: Buffer): void {
  renderCache.set(key, jpeg);
  if (renderCache.size > RENDER_CACHE_SIZE) renderCache.delete(renderCache.keys().next().value!);
}

/** Settles like `work`, or rejects as soon as `signal` aborts (the work itself carries on for whoever else waits on it). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const cancelled = () => generationFailed('the request was cancelled before its image was rendered');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Turns requests into JPEGs: from the cache, from a render already under way for the same scene, or by a new render. */
export class SceneRenderer {
  /** Renders under way, by scene: identical requests that arrive together share one render. */
  private readonly underWay = new Map<string, Promise<Buffer>>();

  /** Without a pool, renders run on the main thread (the server does nothing else meanwhile). */
  constructor(private readonly pool: RenderPool | undefined) {}

  get threads(): number {
    return this.pool?.size ?? 0;
  }

  /** The image for `request`; rejects with a 500 ErrorGeneratingImage when rendering fails, or when `signal` aborts first. */
  async render(request: GenerationRequest, signal?: AbortSignal): Promise<RenderedImage> {
    const { width, height } = imageDimensions(request.resolution, request.aspectRatio);
    const key = JSON.stringify(sceneOf(request));
    const cached = cachedRender(key);
    if (cached) return { jpeg: cached, width, height };
    let rendering = this.underWay.get(key);
    if (!rendering) {
      const started = this.renderJpeg(request);
      rendering = started;
      this.underWay.set(key, started);
      started.then(
        (jpeg) => rememberRender(key, jpeg),
        () => {},
      ).finally(() => this.underWay.delete(key));
    }
    return { jpeg: await unlessAborted(rendering, signal), width, height };
  }

  /** Readies rendering before the first request: the pool's threads (see RenderPool.warmUp), or the main thread's renderer. */
  async warmUp(): Promise<void> {
    if (this.pool) return this.pool.warmUp();
    const { renderAerialJpeg } = await import('../render/aerial-image.js');
    await renderAerialJpeg(WARM_UP_REQUEST, WARM_UP_SIZE);
  }

  close(): Promise<void> {
    return this.pool?.close() ?? Promise.resolve();
  }

  private async renderJpeg(request: GenerationRequest): Promise<Buffer> {
    try {
      if (this.pool) return await this.pool.render(request);
      const { renderAerialJpeg } = await import('../render/aerial-image.js');
      return await renderAerialJpeg(request);
    } catch (error) {
      throw generationFailed(`the sandbox renderer failed: ${(error as Error)?.message ?? String(error)}`);
    }
  }
}

/** The request as stored with an image record (saveImage is a property of the request, not the image). */
export function sceneOf(request: GenerationRequest): StoredScene {
  const { saveImage: _ignored, ...scene } = request;
  return scene;
}
