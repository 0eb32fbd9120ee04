// The sandbox draws the Earth: at fixed places, the mix of land cover in the
// picture (what the renderer decided for each pixel, and the colours drawn
// there) follows the world data; zooming out shows more of the same place.
import { describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { COVER, renderAerialFrame, type RenderedFrame } from '../../../src/sandbox/render/aerial-image.js';
import { generationRequest } from '../../helpers/sandbox.js';

/** The frame at (lat, lng), seen from the top unless `overrides` say otherwise. */
function at(lat: number, lng: number, overrides: Partial<GenerationRequest> = {}): RenderedFrame {
  return renderAerialFrame(generationRequest({ coordinates: { lat, lng }, angle: 'Top', ...overrides }));
}

type CoverName = keyof typeof COVER;

/** Share of the frame's pixels of each land cover. */
function mix(frame: RenderedFrame): Record<CoverName, number> {
  const counts = new Map<number, number>();
  for (const cover of frame.cover) counts.set(cover, (counts.get(cover) ?? 0) + 1);
  return Object.fromEntries(
    Object.entries(COVER).map(([name, value]) => [name, (counts.get(value) ?? 0) / frame.cover.length]),
  ) as Record<CoverName, number>;
}

/** Mean colour of the pixels of one land cover, as drawn (before the overlays, which cover little). */
function colourOf(frame: RenderedFrame, cover: number): { r: number; g: number; b: number } {
  let r = 0;
  let g = 0;
  let b = 0;
  let n = 0;
  for (let i = 0; i < frame.cover.length; i++) {
    if (frame.cover[i] !== cover) continue;
    r += frame.rgb[i * 3]!;
    g += frame.rgb[i * 3 + 1]!;
    b += frame.rgb[i * 3 + 2]!;
    n++;
  }
  return { r: r / n, g: g / n, b: b / n };
}

const land = (shares: Record<CoverName, number>) => 1 - shares.water - shares.sky;

describe('land cover at fixed places', () => {
  it('is open water in the middle of the Atlantic, drawn blue', () => {
    const frame = at(0, -30);
    expect(mix(frame).water).toBeGreaterThan(0.99);
    const water = colourOf(frame, COVER.water);
    expect(water.b).toBeGreaterThan(water.r + 30);
  });

  it('has both the harbour and its shores around Liberty Island at low zoom', () => {
    const shares = mix(at(40.6892, -74.0445, { zoom: 'Low', angle: 'High' }));
    expect(shares.water).toBeGreaterThan(0.3);
    expect(land(shares)).toBeGreaterThan(0.15);
    expect(shares.builtUp).toBeGreaterThan(0.1);
  });

  it('is mostly sand in the Sahara, drawn in sandy colours', () => {
    const frame = at(23.4, 11.5);
    expect(mix(frame).sand).toBeGreaterThan(0.85);
    const sand = colourOf(frame, COVER.sand);
    expect(sand.r).toBeGreaterThan(sand.g + 20);
    expect(sand.g).toBeGreaterThan(sand.b + 20);
  });

  it('is mostly ice in central Greenland, drawn white', () => {
    const frame = at(72, -40);
    expect(mix(frame).ice).toBeGreaterThan(0.9);
    const ice = colourOf(frame, COVER.ice);
    expect(Math.min(ice.r, ice.g, ice.b)).toBeGreaterThan(190);
  });

  it('is mostly built-up in Manhattan', () => {
    expect(mix(at(40.754, -73.984)).builtUp).toBeGreaterThan(0.8);
  });

  it('is mostly forest in the Amazon, and mostly ice and rock on Everest', () => {
    expect(mix(at(-5, -65, { zoom: 'ExtraLow' })).forest).toBeGreaterThan(0.6);
    const everest = mix(at(27.988, 86.925));
    expect(everest.ice + everest.rock).toBeGreaterThan(0.8);
  });

  it('shows the great lakes and rivers: Lake Michigan off Chicago, the Mississippi at New Orleans', () => {
    expect(mix(at(41.9, -87.4, { zoom: 'ExtraLow' })).water).toBeGreaterThan(0.95);
    const neworleans = mix(at(29.95, -90.07, { zoom: 'ExtraLow' }));
    expect(neworleans.water).toBeGreaterThan(0.01);
    expect(neworleans.builtUp).toBeGreaterThan(0.5);
  });

  it('keeps towns small in the past', () => {
    const today = mix(at(48.8566, 2.3522, { zoom: 'ExtraLow' })).builtUp;
    const ancient = mix(at(48.8566, 2.3522, { zoom: 'ExtraLow', epoch: 'Ancient' })).builtUp;
    expect(today).toBeGreaterThan(0.8);
    expect(ancient).toBeLessThan(today / 2);
  });
});

describe('longitude', () => {
  it('has no bounds in the API: 362.35° E is 2.35° E, and even 1e308 draws a frame', () => {
    const paris = at(48.8566, 2.3522);
    const again = at(48.8566, 362.3522);
    expect(Buffer.from(again.cover).equals(Buffer.from(paris.cover))).toBe(true);
    const far = at(10, 1e308);
    expect(far.cover.length).toBe(far.width * far.height);
  });
});

describe('zoom', () => {
  it('shows more of the same place when zooming out from Liberty Island', () => {
    // Seen from the top, a Low frame spans 2000 m and an ExtraLow one 5000 m: the
    // middle 40 % of the wider frame is the narrower frame's ground, at a smaller scale.
    const near = at(40.6892, -74.0445, { zoom: 'Low' });
    const far = at(40.6892, -74.0445, { zoom: 'ExtraLow' });
    const scale = 2000 / 5000;
    let agree = 0;
    let samples = 0;
    for (let y = 20; y < near.height - 20; y += 10) {
      for (let x = 20; x < near.width - 20; x += 10) {
        const fx = Math.round(far.width / 2 + (x - near.width / 2) * scale);
        const fy = Math.round(far.height / 2 + (y - near.height / 2) * scale);
        const wetNear = near.cover[y * near.width + x] === COVER.water;
        const wetFar = far.cover[fy * far.width + fx] === COVER.water;
        if (wetNear === wetFar) agree++;
        samples++;
      }
    }
    expect(agree / samples).toBeGreaterThan(0.9);
    // And the wider frame shows more shore than the narrower one.
    expect(land(mix(far))).toBeGreaterThan(land(mix(near)) * 1.5);
  });
});
