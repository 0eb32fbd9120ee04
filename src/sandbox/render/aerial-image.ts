// Procedural aerial scenes for the sandbox server: a deterministic stand-in for the
// real generator, drawn from real geography. Every request field changes the
// picture in a way a person can see (and a test can measure). This file makes
// the frame and its JPEG; the files beside it each draw one part of it.
//
// How a frame is made:
//  1. The request's point is placed on the Earth: the world data (../world/) says
//     where the sea, lakes and great rivers are, how built-up the ground is
//     (from the populations of the places around) and what the climate makes
//     of the rest (ice, sand, rock, tundra, forest, fields). Zoom sets how many
//     metres the frame spans, so zooming out shows more of the same place.
//  2. The *look* (zoom, angle, bearing, weather, daytime, epoch) becomes
//     numbers and colour matrices (look.ts). Streets, lots and fields are laid
//     on a grid anchored to the Earth, so the same ground looks the same in
//     every frame (layout.ts).
//  3. Each ground pixel is mapped to a point on the ground (projection.ts:
//     orthographic for Top, a pinhole-like projection with a horizon for the
//     oblique angles) and sampled there (raster.ts, which asks ground.ts:
//     streets.ts, town-blocks.ts, countryside.ts); the sky is sky.ts.
//  4. Overlays that live in screen space follow: clouds, rain, snowflakes
//     (weather.ts), the muted surroundings, the place's label, the caption
//     band, the compass and the SANDBOX mark (overlays.ts). libvips (through
//     sharp) encodes the JPEG.
//
// Speed: the per-pixel sampler is a chain of plain functions that pass state on
// one reusable Scene object (scene.ts: no allocation, no closures, no boxed
// doubles per pixel). Smooth large-scale fields (geography, terrain, town
// extent) are evaluated on a sparse grid of knots and interpolated, since they
// vary slowly on screen (smooth-fields.ts). The bundle puts these files back
// into one scope, where V8 inlines across them as it did within one file.
import { imageDimensions } from '../../api/enums.js';
import type { GenerationRequest } from '../../api/schema.js';
import { atlas } from '../world/atlas.js';
import type { Place } from '../world/frame-geography.js';
import { wrapLongitude } from '../world/grid.js';
import type { FrameSize, RenderedFrame } from './frame.js';
import { planLayout } from './layout.js';
import { describeLook } from './look.js';
import { canonicalJson, createRandom, hashString } from './noise.js';
import { asciiText, muteSurroundings, paintCaptionBand, paintCompass, paintPlaceLabel, paintSandboxMark, PixelFont, textScale, type Frame } from './overlays.js';
import { subjectOnScreen } from './projection.js';
import { paintScene } from './raster.js';
import { paintCloudLayer, paintRain, paintSnowfall } from './weather.js';

export { COVER } from './frame.js';
export type { FrameSize, RenderedFrame } from './frame.js';

/**
 * The JPEG of a request: baseline, of imageDimensions(resolution, aspectRatio)
 * pixels. Pure and deterministic: the same request (whatever its key order)
 * always gives the same bytes.
 *
 * `size` overrides the dimensions; the sandbox only uses that for warm-up
 * frames, which run every code path of a full frame on a few pixels.
 */
export async function renderAerialJpeg(request: GenerationRequest, size?: FrameSize): Promise<Buffer> {
  const { width, height } = size ?? imageDimensions(request.resolution, request.aspectRatio);
  const spare = spareBuffers.findIndex((buffers) => buffers.cover.length === width * height);
  const buffers = spare >= 0 ? spareBuffers.splice(spare, 1)[0]! : newBuffers(width, height);
  try {
    return await encodeJpeg(renderAerialFrame(request, size, buffers));
  } finally {
    // Back for the next frame of this size once libvips is done with the pixels.
    if (spareBuffers.length < 2) spareBuffers.push(buffers);
  }
}

interface FrameBuffers {
  rgb: Uint8ClampedArray;
  cover: Uint8Array;
}

/**
 * Pixel buffers of frames already encoded, reused: allocating megabytes
 * outside the heap for every frame made the collector run about a tenth of
 * the time. Only renderAerialJpeg hands them out and takes them back.
 */
const spareBuffers: FrameBuffers[] = [];

function newBuffers(width: number, height: number): FrameBuffers {
  return { rgb: new Uint8ClampedArray(width * height * 3), cover: new Uint8Array(width * height) };
}

/** The frame's pixels (RGB) and what each shows; encodeJpeg turns them into the JPEG. */
export function renderAerialFrame(
  request: GenerationRequest,
  size: FrameSize = imageDimensions(request.resolution, request.aspectRatio),
  buffers: FrameBuffers = newBuffers(size.width, size.height),
): RenderedFrame {
  const { width, height } = size;
  const world = atlas();
  const font = new PixelFont(world.font);
  const frame: RenderedFrame = { width, height, ...buffers, improved: request.improveOutput === true };
  const look = describeLook(request);
  const layout = planLayout(request, world);
  const requestSeed = hashString(canonicalJson(request));
  const random = createRandom(requestSeed);

  const geography = paintScene(frame, look, layout, world, requestSeed);
  if (look.cloudLayer > 0) paintCloudLayer(frame, look, random);
  if (look.rain) paintRain(frame, look, random);
  if (look.snowfall) paintSnowfall(frame, look, random);

  const subject = subjectOnScreen(frame, look);
  const shortSide = Math.min(width, height);
  if (request.includeSurroundings === false) muteSurroundings(frame, subject.x, subject.y, shortSide * 0.24);
  if (request.includeContext === true) {
    const place = geography.landmark();
    frame.place = describePlace(place, request);
    paintPlaceLabel(frame, font, subject.x, subject.y, frame.place);
  }
  const captionTop = paintCaptionBand(frame, font, captionLines(request, font, frame));
  paintCompass(frame, font, request.bearing);
  paintSandboxMark(frame, font, captionTop);
  return frame;
}

/**
 * libvips, through sharp, encodes the frame: a baseline JPEG with the
 * standard Huffman tables (optimising them would cost three times the time
 * for 2 % fewer bytes); improveOutput adds quality, full-resolution colour and
 * a light sharpening. Loaded on first use, so the rest of the CLI never loads it.
 */
export async function encodeJpeg(frame: RenderedFrame): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  const pixels = Buffer.from(frame.rgb.buffer, frame.rgb.byteOffset, frame.rgb.byteLength);
  let image = sharp(pixels, { raw: { width: frame.width, height: frame.height, channels: 3 } });
  if (frame.improved) image = image.sharpen({ sigma: 1.1, m1: 0.8, m2: 2 });
  return image
    .jpeg({
      quality: frame.improved ? 92 : JPEG_QUALITY,
      chromaSubsampling: frame.improved ? '4:4:4' : '4:2:0',
      optimiseCoding: false,
      progressive: false,
      mozjpeg: false,
    })
    .toBuffer();
}

/** Quality of ordinary frames: crisp roofs and lane markings while UHD stays a few MB. */
const JPEG_QUALITY = 80;

/** The caption band's lines: the prompt, which the sandbox shows rather than follows, and the tags. */
function captionLines(request: GenerationRequest, font: PixelFont, frame: Frame): string[] {
  const lines: string[] = [];
  const scale = textScale(frame);
  const maxWidth = frame.width - 8 * scale;
  const prompt = request.prompt?.trim();
  if (prompt) lines.push(...font.wrap(`Prompt (shown, not followed): ${asciiText(prompt)}`, scale, maxWidth, 2));
  if (request.tags.length > 0) lines.push(font.fit(`Tags: ${request.tags.map((tag) => asciiText(tag)).join(', ')}`, scale, maxWidth));
  return lines;
}

/** "Jersey City, US", or "Open water, 12 km SW of Jersey City, US" away from it. */
function describePlace(place: Place | undefined, request: GenerationRequest): string {
  const { lat } = request.coordinates;
  const lng = wrapLongitude(request.coordinates.lng);
  const position = `${Math.abs(lat).toFixed(3)}${lat < 0 ? 'S' : 'N'} ${Math.abs(lng).toFixed(3)}${lng < 0 ? 'W' : 'E'}`;
  if (!place) return `${position}: no place of 1000 people within 40 km`;
  const name = `${asciiText(place.name)}, ${place.country}`;
  const away = Math.hypot(place.east, place.north);
  if (away <= Math.max(place.radius, 1500)) return name;
  const bearing = (Math.atan2(-place.east, -place.north) * 180) / Math.PI;
  const points = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
  const point = points[Math.round((((bearing % 360) + 360) % 360) / 45) % 8];
  return `${(away / 1000).toFixed(away < 10_000 ? 1 : 0)} km ${point} of ${name}`;
}
