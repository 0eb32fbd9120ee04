// The generation request as the sandbox sees it: validated in its documented
// wire form, priced, and rendered into a real JPEG by render.ts.
import { BEARING_ABBREVIATIONS, imageDimensions, SANDBOX_PRICE } from '../api/enums.js';
import { describeIssues, GenerationRequestSchema, type GenerationRequest } from '../api/schema.js';
import { HttpError, validationFailed } from './http-io.js';
import { renderAerialJpeg } from './render.js';
import type { StoredScene } from './store.js';

/**
 * Accepts exactly the documented wire form. The introductory sample's variant
 * (coordinates.latitude/longitude, bearings like N) is refused with a 400 that
 * names the field and says what the wire form is.
 */
export function parseGenerationRequest(body: unknown): GenerationRequest {
  const parsed = GenerationRequestSchema.safeParse(body);
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

/** Rendering is deterministic in the request, so recent results are reused (tests ask for the same scene often). */
const RENDER_CACHE_SIZE = 8;
const renderCache = new Map<string, Buffer>();

export function renderImage(request: GenerationRequest): RenderedImage {
  const { width, height } = imageDimensions(request.resolution, request.aspectRatio);
  const { saveImage: _ignored, ...scene } = request;
  const cacheKey = JSON.stringify(scene);
  let jpeg = renderCache.get(cacheKey);
  if (jpeg) {
    renderCache.delete(cacheKey);
  } else {
    try {
      jpeg = renderAerialJpeg(request);
    } catch (error) {
      throw generationFailed(`the sandbox renderer failed: ${(error as Error).message}`);
    }
  }
  renderCache.set(cacheKey, jpeg);
  if (renderCache.size > RENDER_CACHE_SIZE) renderCache.delete(renderCache.keys().next().value!);
  return { jpeg, width, height };
}

/** The request as stored with an image record (saveImage is a property of the request, not the image). */
export function sceneOf(request: GenerationRequest): StoredScene {
  const { saveImage: _ignored, ...scene } = request;
  return scene;
}
