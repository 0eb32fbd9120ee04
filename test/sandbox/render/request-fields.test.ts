// Every field of a generation request shows in the sandbox's picture, by more
// than noise: two renders are compared by the means of 16×16-pixel blocks,
// which grain and JPEG artefacts hardly move but a visible change does.
import jpeg from 'jpeg-js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { renderAerialJpeg } from '../../../src/sandbox/render/aerial-image.js';
import { generationRequest } from '../../helpers/sandbox.js';

// The harbour seen from Liberty Island: water, shore and city in one frame.
const base = generationRequest({ coordinates: { lat: 40.6892, lng: -74.0445 }, zoom: 'Low', saveImage: true });

interface Pixels {
  width: number;
  height: number;
  data: Uint8Array;
}

async function render(overrides: Partial<GenerationRequest>): Promise<Pixels> {
  const bytes = await renderAerialJpeg({ ...base, ...overrides });
  return jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
}

const BLOCK = 16;

/** Mean R, G, B of each BLOCK × BLOCK block. */
function blockMeans(image: Pixels): Float64Array {
  const columns = Math.floor(image.width / BLOCK);
  const rows = Math.floor(image.height / BLOCK);
  const means = new Float64Array(columns * rows * 3);
  for (let y = 0; y < rows * BLOCK; y++) {
    for (let x = 0; x < columns * BLOCK; x++) {
      const i = (y * image.width + x) * 4;
      const b = (Math.floor(y / BLOCK) * columns + Math.floor(x / BLOCK)) * 3;
      for (let c = 0; c < 3; c++) means[b + c]! += image.data[i + c]! / (BLOCK * BLOCK);
    }
  }
  return means;
}

/** Root mean square difference of block means, in levels (0–255). */
function visibleDifference(a: Pixels, b: Pixels): number {
  const ma = blockMeans(a);
  const mb = blockMeans(b);
  let sum = 0;
  for (let i = 0; i < ma.length; i++) sum += (ma[i]! - mb[i]!) ** 2;
  return Math.sqrt(sum / ma.length);
}

/** Mean chroma (max − min channel) over a region given as fractions of the frame. */
function chroma(image: Pixels, x0: number, y0: number, x1: number, y1: number): number {
  let sum = 0;
  let n = 0;
  for (let y = Math.floor(y0 * image.height); y < y1 * image.height; y++) {
    for (let x = Math.floor(x0 * image.width); x < x1 * image.width; x++) {
      const i = (y * image.width + x) * 4;
      const [r, g, b] = [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
      sum += Math.max(r, g, b) - Math.min(r, g, b);
      n++;
    }
  }
  return sum / n;
}

/** Mean absolute difference between neighbouring pixels (green), over the frame: how much fine detail and grain it has. */
function fineDetail(image: Pixels): number {
  let sum = 0;
  for (let i = 4; i < image.data.length; i += 4) sum += Math.abs(image.data[i + 1]! - image.data[i - 3]!);
  return sum / (image.data.length / 4);
}

/** A region given as fractions of the frame, as an image of its own. */
function crop(image: Pixels, x0: number, y0: number, x1: number, y1: number): Pixels {
  const left = Math.floor(x0 * image.width);
  const top = Math.floor(y0 * image.height);
  const width = Math.floor(x1 * image.width) - left;
  const height = Math.floor(y1 * image.height) - top;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) data.set(image.data.subarray(((top + y) * image.width + left) * 4, ((top + y) * image.width + left + width) * 4), y * width * 4);
  return { width, height, data };
}

function luma(image: Pixels): number {
  let sum = 0;
  for (let i = 0; i < image.data.length; i += 4) sum += 0.299 * image.data[i]! + 0.587 * image.data[i + 1]! + 0.114 * image.data[i + 2]!;
  return sum / (image.data.length / 4);
}

let reference: Pixels;
/** What changes when nothing visible does: saveImage moves the grain and weather overlays' seed, nothing else. */
let noise: number;

beforeAll(async () => {
  reference = await render({});
  noise = visibleDifference(reference, await render({ saveImage: false }));
}, 60_000);

describe('each request field changes the picture beyond noise', () => {
  it('measures noise as small', () => {
    expect(noise).toBeLessThan(1);
  });

  it.each<[string, Partial<GenerationRequest>]>([
    ['includeContext', { includeContext: true }],
    ['includeSurroundings', { includeSurroundings: false }],
    ['improveOutput', { improveOutput: true }],
    ['prompt', { prompt: 'make it purple with dragons' }],
    ['tags', { tags: ['harbour', 'ferry'] }],
    ['weather', { weather: 'Rainy' }],
    ['daytime', { daytime: 'Dusk' }],
    ['zoom', { zoom: 'ExtraLow' }],
    ['angle', { angle: 'Low' }],
    ['bearing', { bearing: 'East' }],
    ['epoch', { epoch: 'Historical' }],
    ['coordinates', { coordinates: { lat: 40.7, lng: -74.02 } }],
  ])('%s', async (_field, change) => {
    const difference = visibleDifference(reference, await render(change));
    expect(difference).toBeGreaterThan(Math.max(2, noise * 5));
  });

  it('aspectRatio, which reshapes the frame', async () => {
    const portrait = await render({ aspectRatio: 'Portrait' });
    expect({ width: portrait.width, height: portrait.height }).toEqual({ width: 720, height: 1280 });
  });
});

describe('what each of the fields without a look of their own does', () => {
  it('includeContext pins the place and labels it on a plate with an amber rule', async () => {
    const labelled = await render({ includeContext: true });
    let amber = 0;
    for (let i = 0; i < labelled.data.length; i += 4) {
      const [r, g, b] = [labelled.data[i]!, labelled.data[i + 1]!, labelled.data[i + 2]!];
      if (r > 200 && g > 150 && g < 225 && b < 140) amber++;
    }
    expect(amber).toBeGreaterThan(200);
  });

  it('includeSurroundings false keeps the subject and washes out the rest', async () => {
    const muted = await render({ includeSurroundings: false });
    // The frame's point is the subject: its middle keeps its colour; the city in the top corner goes pale and flat.
    expect(chroma(muted, 0.45, 0.55, 0.55, 0.65)).toBeGreaterThan(chroma(reference, 0.45, 0.55, 0.55, 0.65) * 0.9);
    const corner = (image: Pixels) => fineDetail(crop(image, 0, 0, 0.25, 0.2));
    expect(corner(muted)).toBeLessThan(corner(reference) * 0.5);
    expect(luma(crop(muted, 0, 0, 0.25, 0.2))).toBeGreaterThan(luma(crop(reference, 0, 0, 0.25, 0.2)) + 20);
  });

  it('improveOutput is cleaner and livelier: no grain, more colour', async () => {
    const improved = await render({ improveOutput: true });
    expect(chroma(improved, 0, 0, 1, 1)).toBeGreaterThan(chroma(reference, 0, 0, 1, 1) * 1.1);
    // Open water shows the difference in grain best: the lower middle of this frame is harbour.
    const water = (image: Pixels) => fineDetail(crop(image, 0, 0.75, 1, 1));
    expect(water(improved)).toBeLessThan(water(reference));
  });

  it('prompt and tags are shown in a caption band at the bottom, not followed', async () => {
    const captioned = await render({ prompt: 'make it purple with dragons', tags: ['harbour'] });
    const band = (image: Pixels) => luma(crop(image, 0, 1 - 40 / image.height, 1, 1));
    expect(band(captioned)).toBeLessThan(band(reference) * 0.75);
    // Purple is asked for, not drawn: the picture above the band keeps its colours.
    expect(visibleDifference({ ...captioned, height: 560 }, { ...reference, height: 560 })).toBeLessThan(Math.max(1, noise * 3));
  });
});
