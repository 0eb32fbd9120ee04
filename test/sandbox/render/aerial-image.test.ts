import jpeg from 'jpeg-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { ASPECT_RATIOS, imageDimensions, RESOLUTIONS } from '../../../src/api/enums.js';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { renderAerialJpeg } from '../../../src/sandbox/render/aerial-image.js';
import { generationRequest } from '../../helpers/sandbox.js';

// Central Paris from the top: streets, roofs and parks all over the frame.
const base = generationRequest({ coordinates: { lat: 48.8566, lng: 2.3522 }, angle: 'Top' });

function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return { ...base, ...overrides };
}

interface Pixels {
  width: number;
  height: number;
  data: Uint8Array;
}

function decode(bytes: Buffer): Pixels {
  return jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: 20 });
}

const rendered = new Map<string, Pixels>();

/** The frames the tests below look at, by their overrides of the base request: rendered once, before the file's tests. */
const FRAMES: Partial<GenerationRequest>[] = [
  {},
  { daytime: 'Day' },
  { daytime: 'Night' },
  { daytime: 'Dusk' },
  { daytime: 'Dawn' },
  { weather: 'Sunny' },
  { weather: 'Snow' },
  { weather: 'GoldenHour' },
  { weather: 'Rainy' },
  { weather: 'Cloudy' },
  { angle: 'Low' },
  { angle: 'Medium' },
  { angle: 'High' },
  { angle: 'Top' },
  { zoom: 'ExtraLow' },
  { zoom: 'ExtraHigh' },
  { epoch: 'Nowadays' },
  { epoch: 'Historical' },
  { epoch: 'Ancient' },
  { bearing: 'North', daytime: 'Night' },
  { bearing: 'South', daytime: 'Night' },
  { bearing: 'East', daytime: 'Night' },
  { bearing: 'West', daytime: 'Night' },
  { coordinates: { lat: -33.87, lng: 151.21 } },
  { resolution: 'UHD' },
  ...ASPECT_RATIOS.map((aspectRatio) => ({ aspectRatio })),
];

beforeAll(async () => {
  for (const overrides of FRAMES) rendered.set(JSON.stringify(overrides), decode(await renderAerialJpeg(request(overrides))));
}, 120_000);

/** Decoded render of the base request with `overrides` (one of FRAMES). */
function render(overrides: Partial<GenerationRequest> = {}): Pixels {
  const image = rendered.get(JSON.stringify(overrides));
  if (!image) throw new Error(`render ${JSON.stringify(overrides)} is not among FRAMES`);
  return image;
}

/** Width and height from the baseline start-of-frame (SOF0) segment, without decoding the image. */
function baselineFrameSize(bytes: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    expect(bytes[offset]).toBe(0xff);
    const marker = bytes[offset + 1]!;
    const length = bytes.readUInt16BE(offset + 2);
    if (marker === 0xc0) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    // Any other start-of-frame (progressive, extended…) is not baseline.
    expect(marker >= 0xc1 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc).toBe(false);
    offset += 2 + length;
  }
  throw new Error('no SOF0 segment');
}

interface Region {
  x0?: number;
  y0?: number;
  x1?: number;
  y1?: number;
}

/** Mean R, G, B and luma over a region given as fractions of the frame. */
function meanColour(image: Pixels, region: Region = {}): { r: number; g: number; b: number; luma: number } {
  const { x0 = 0, y0 = 0, x1 = 1, y1 = 1 } = region;
  let r = 0;
  let g = 0;
  let b = 0;
  let n = 0;
  for (let y = Math.floor(y0 * image.height); y < Math.floor(y1 * image.height); y++) {
    for (let x = Math.floor(x0 * image.width); x < Math.floor(x1 * image.width); x++) {
      const i = (y * image.width + x) * 4;
      r += image.data[i]!;
      g += image.data[i + 1]!;
      b += image.data[i + 2]!;
      n++;
    }
  }
  r /= n;
  g /= n;
  b /= n;
  return { r, g, b, luma: 0.299 * r + 0.587 * g + 0.114 * b };
}

/** Mean absolute difference between horizontally adjacent pixels (green channel) in a row span. */
function rowTexture(image: Pixels, y: number, x0: number, x1: number): number {
  let sum = 0;
  for (let x = x0 + 1; x < x1; x++) {
    const i = (y * image.width + x) * 4;
    sum += Math.abs(image.data[i + 1]! - image.data[i - 3]!);
  }
  return sum / (x1 - x0 - 1);
}

/** How much fine detail the frame has: texture averaged over all rows (compass and mark excluded). */
function detail(image: Pixels): number {
  let sum = 0;
  for (let y = 0; y < image.height; y++) sum += rowTexture(image, y, Math.floor(image.width * 0.2), Math.floor(image.width * 0.75));
  return sum / image.height;
}

/** Rows from the top that look like sky: smooth and bluer than red (compass columns excluded). */
function skyRows(image: Pixels): number {
  const x1 = Math.floor(image.width * 0.75);
  let rows = 0;
  for (let y = 0; y < image.height; y++) {
    const band = { y0: y / image.height, y1: (y + 1) / image.height, x1: 0.75 };
    const colour = meanColour(image, band);
    if (rowTexture(image, y, 0, x1) > 4 || colour.b < colour.r + 10) break;
    rows++;
  }
  return rows;
}

/** Share of pixels that look like asphalt: neutral grey of middling brightness. */
function asphaltShare(image: Pixels): number {
  let count = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    const r = image.data[i]!;
    const g = image.data[i + 1]!;
    const b = image.data[i + 2]!;
    const level = (r + g + b) / 3;
    if (Math.abs(r - g) < 8 && Math.abs(g - b) < 10 && level > 50 && level < 110) count++;
  }
  return count / (image.data.length / 4);
}

describe('renderAerialJpeg output format', () => {
  it('is a baseline JPEG framed by SOI and EOI markers', async () => {
    const bytes = await renderAerialJpeg(request());
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect([...bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(baselineFrameSize(bytes)).toEqual({ width: 1280, height: 720 });
  });

  it.each(ASPECT_RATIOS)('decodes at HD × %s to exactly the documented size', (aspectRatio) => {
    const image = render({ aspectRatio });
    const expected = imageDimensions('HD', aspectRatio);
    expect({ width: image.width, height: image.height }).toEqual(expected);
    expect(image.data.length).toBe(expected.width * expected.height * 4);
  });

  const largerSizes = RESOLUTIONS.filter((r) => r !== 'HD').flatMap((resolution) =>
    ASPECT_RATIOS.map((aspectRatio) => [resolution, aspectRatio] as const),
  );

  // Rendering FHD and UHD is needed; decoding them is not: the frame header states the size.
  it.each(largerSizes)(
    'frames %s × %s at the documented size',
    async (resolution, aspectRatio) => {
      const bytes = await renderAerialJpeg(request({ resolution, aspectRatio, zoom: 'ExtraHigh' }));
      expect(baselineFrameSize(bytes)).toEqual(imageDimensions(resolution, aspectRatio));
      expect([...bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
    },
  );

  it('decodes a UHD landscape frame at 3840×2160', () => {
    const image = render({ resolution: 'UHD' });
    expect({ width: image.width, height: image.height }).toEqual({ width: 3840, height: 2160 });
  });
});

describe('renderAerialJpeg determinism', () => {
  it('gives the same bytes for the same request', async () => {
    const first = await renderAerialJpeg(request({ tags: ['a', 'b'], prompt: 'river town', weather: 'Rainy' }));
    const second = await renderAerialJpeg(request({ tags: ['a', 'b'], prompt: 'river town', weather: 'Rainy' }));
    expect(first.equals(second)).toBe(true);
  });

  it('gives the same bytes when frames render at the same time, and when buffers are reused', async () => {
    const scenes = [request({ weather: 'Rainy' }), request({ daytime: 'Dusk' }), request({ weather: 'Rainy' })];
    const together = await Promise.all(scenes.map((scene) => renderAerialJpeg(scene)));
    const oneByOne: Buffer[] = [];
    for (const scene of scenes) oneByOne.push(await renderAerialJpeg(scene));
    expect(together.map((bytes, i) => bytes.equals(oneByOne[i]!))).toEqual([true, true, true]);
    expect(together[0]!.equals(together[2]!)).toBe(true);
  });

  it('ignores the order of keys in the request', async () => {
    const reordered = Object.fromEntries(Object.entries(request()).reverse()) as GenerationRequest;
    expect((await renderAerialJpeg(reordered)).equals(await renderAerialJpeg(request()))).toBe(true);
  });

  it('draws a visibly different scene at different coordinates', () => {
    const here = render();
    const there = render({ coordinates: { lat: -33.87, lng: 151.21 } });
    let difference = 0;
    for (let i = 0; i < here.data.length; i += 4) difference += Math.abs(here.data[i + 1]! - there.data[i + 1]!);
    expect(difference / (here.data.length / 4)).toBeGreaterThan(15);
  });

  it('gives different bytes when any field changes, even ones the picture does not show', async () => {
    const reference = await renderAerialJpeg(request());
    for (const change of [
      { tags: ['x'] },
      { prompt: 'harbour' },
      { saveImage: true },
      { coordinates: { lat: 48.8566, lng: 2.3523 } },
      { bearing: 'East' as const },
    ]) {
      expect((await renderAerialJpeg(request(change))).equals(reference)).toBe(false);
    }
  });
});

describe('renderAerialJpeg follows the scene parameters', () => {
  it('makes Night much darker than Day', () => {
    const day = meanColour(render({ daytime: 'Day' }));
    const night = meanColour(render({ daytime: 'Night' }));
    expect(night.luma).toBeLessThan(day.luma * 0.35);
    // Night is blue-tinted, not just dimmed.
    expect(night.b / night.r).toBeGreaterThan(day.b / day.r);
  });

  it('tints Dusk and Dawn warmer than Day', () => {
    const day = meanColour(render({ daytime: 'Day' }));
    const dusk = meanColour(render({ daytime: 'Dusk' }));
    const dawn = meanColour(render({ daytime: 'Dawn' }));
    expect(dusk.r / dusk.b).toBeGreaterThan((day.r / day.b) * 1.3);
    expect(dawn.luma).toBeLessThan(day.luma);
    expect(dusk.luma).toBeLessThan(day.luma);
  });

  it('makes Snow brighter than Sunny, and GoldenHour redder', () => {
    const sunny = meanColour(render({ weather: 'Sunny' }));
    const snow = meanColour(render({ weather: 'Snow' }));
    const golden = meanColour(render({ weather: 'GoldenHour' }));
    expect(snow.luma).toBeGreaterThan(sunny.luma + 40);
    expect(golden.r / golden.b).toBeGreaterThan((sunny.r / sunny.b) * 1.3);
  });

  it('makes Rainy darker than Sunny and Cloudy flatter', () => {
    const sunny = render({ weather: 'Sunny' });
    const rainy = render({ weather: 'Rainy' });
    const cloudy = render({ weather: 'Cloudy' });
    expect(meanColour(rainy).luma).toBeLessThan(meanColour(sunny).luma - 15);
    expect(detail(cloudy)).toBeLessThan(detail(sunny) * 0.8);
    // Grey cloud cover pulls colours together.
    const chroma = (c: { r: number; g: number; b: number }) => Math.max(c.r, c.g, c.b) - Math.min(c.r, c.g, c.b);
    expect(chroma(meanColour(cloudy))).toBeLessThan(chroma(meanColour(sunny)));
  });

  it('shows a sky band for oblique angles, the biggest for Low and none from the top', () => {
    const low = render({ angle: 'Low' });
    const medium = render({ angle: 'Medium' });
    const high = render({ angle: 'High' });
    const top = render({ angle: 'Top' });
    expect(skyRows(low)).toBeGreaterThan(skyRows(medium) + 40);
    expect(skyRows(medium)).toBeGreaterThan(0.12 * medium.height);
    expect(skyRows(high)).toBe(0);
    expect(skyRows(top)).toBe(0);
    // The top rows are blue sky in the Low view and ground seen from above otherwise.
    const lowTop = meanColour(low, { y1: 0.15, x1: 0.75 });
    const topTop = meanColour(top, { y1: 0.15, x1: 0.75 });
    expect(lowTop.b - lowTop.r).toBeGreaterThan(30);
    expect(topTop.b - topTop.r).toBeLessThan(0);
  });

  it('shows small features when zoomed out and few large ones when zoomed in', () => {
    const wide = render({ zoom: 'ExtraLow' });
    const close = render({ zoom: 'ExtraHigh' });
    expect(detail(wide)).toBeGreaterThan(detail(close) * 2.5);
  });

  it('paves roads only in the present day', () => {
    const nowadays = asphaltShare(render({ epoch: 'Nowadays' }));
    expect(nowadays).toBeGreaterThan(0.05);
    expect(asphaltShare(render({ epoch: 'Historical' }))).toBeLessThan(nowadays / 10);
    expect(asphaltShare(render({ epoch: 'Ancient' }))).toBeLessThan(nowadays / 10);
  });

  it('turns the compass needle towards the bearing', () => {
    // The needle tip is the only saturated red on the frame's top-right corner.
    const needle = (image: Pixels) => {
      let sumX = 0;
      let sumY = 0;
      let n = 0;
      for (let y = 0; y < image.height * 0.25; y++) {
        for (let x = Math.floor(image.width * 0.8); x < image.width; x++) {
          const i = (y * image.width + x) * 4;
          if (image.data[i]! > 170 && image.data[i + 1]! < 90 && image.data[i + 2]! < 90) {
            sumX += x;
            sumY += y;
            n++;
          }
        }
      }
      expect(n).toBeGreaterThan(20);
      return { x: sumX / n, y: sumY / n };
    };
    const north = needle(render({ bearing: 'North', daytime: 'Night' }));
    const south = needle(render({ bearing: 'South', daytime: 'Night' }));
    const east = needle(render({ bearing: 'East', daytime: 'Night' }));
    const west = needle(render({ bearing: 'West', daytime: 'Night' }));
    expect(north.y).toBeLessThan(south.y - 10);
    expect(east.x).toBeGreaterThan(west.x + 10);
  });

  it('marks the frame SANDBOX in the bottom-left corner', () => {
    // At night the ground is dark, so near-white pixels there can only be the lettering.
    const image = render({ daytime: 'Night' });
    let white = 0;
    for (let y = Math.floor(image.height * 0.85); y < image.height; y++) {
      for (let x = 0; x < image.width * 0.2; x++) {
        const i = (y * image.width + x) * 4;
        if (image.data[i]! > 220 && image.data[i + 1]! > 220 && image.data[i + 2]! > 220) white++;
      }
    }
    expect(white).toBeGreaterThan(300);
  });
});
