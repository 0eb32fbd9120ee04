// The renderer is deterministic, and refactoring it must not change what it
// draws: the frames of a few varied requests (every weather, daytime, epoch and
// angle among them; sea, city, desert, ice, rock and tundra; the caption, the
// label and the muted surroundings) have the digests recorded here. They are
// digests of the RGB pixels and land cover before the JPEG encoding, which
// libvips does and which may differ from one libvips to the next.
//
// A change that alters the pictures on purpose records the new digests (the
// failure shows them), after looking at the pictures.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../../src/api/schema.js';
import { renderAerialFrame } from '../../../src/sandbox/render/aerial-image.js';
import { generationRequest } from '../../helpers/sandbox.js';

const FRAMES: Record<string, Partial<GenerationRequest>> = {
  'New York, low, named': { coordinates: { lat: 40.7128, lng: -74.006 }, zoom: 'ExtraHigh', angle: 'Low', bearing: 'NorthEast', includeContext: true },
  'Tokyo at night': { coordinates: { lat: 35.6762, lng: 139.6503 }, daytime: 'Night', bearing: 'East' },
  'Cairo, ancient, golden hour': { coordinates: { lat: 30.0444, lng: 31.2357 }, epoch: 'Ancient', weather: 'GoldenHour', angle: 'Medium' },
  'Rome, historical, dusk, portrait': { coordinates: { lat: 41.9028, lng: 12.4964 }, epoch: 'Historical', daytime: 'Dusk', bearing: 'SouthWest', aspectRatio: 'Portrait' },
  'Sahara from the top': { coordinates: { lat: 23.4162, lng: 25.6628 }, zoom: 'ExtraLow', angle: 'Top', aspectRatio: 'Square' },
  'Antarctica in snow': { coordinates: { lat: -80, lng: 30 }, weather: 'Snow', zoom: 'Low', bearing: 'South' },
  'Atlantic in rain': { coordinates: { lat: 0, lng: -30 }, weather: 'Rainy', angle: 'Low', bearing: 'West' },
  'Tibet, snow at dawn': { coordinates: { lat: 32, lng: 88 }, zoom: 'Low', weather: 'Snow', daytime: 'Dawn', bearing: 'SouthEast' },
  'Siberian tundra, cloudy': { coordinates: { lat: 68, lng: 100 }, weather: 'Cloudy', angle: 'Low' },
  'Venice, surroundings muted, named': { coordinates: { lat: 45.4408, lng: 12.3155 }, zoom: 'High', weather: 'GoldenHour', includeSurroundings: false, includeContext: true },
  'Sydney, improved, with prompt and tags': {
    coordinates: { lat: -33.87, lng: 151.21 },
    improveOutput: true,
    prompt: 'A harbour at noon, São Paulo style',
    tags: ['harbour', 'démo'],
  },
};

const DIGESTS: Record<string, string> = {
  'New York, low, named': '1fe9b373bec2aa59019c1c0b16b500e4ee9fa3f33873e42cf7e8dc0096b235a3',
  'Tokyo at night': 'd902107e84345dc352611667b0433bcaf07fcfed7e6b836bd4ed57afee3b2fb3',
  'Cairo, ancient, golden hour': '75e2955ddb017cfab38062113082cb33c66249f939de6b99489686fb9fcfb3d2',
  'Rome, historical, dusk, portrait': '43d389ad710ed73217455874ae2d1ff3fff3f8bf6934b238f3e21ebe57004a15',
  'Sahara from the top': 'b17db6edbe6521507590a2b332f5d8ab02db4c5ffffb17f7aff47b2e398f8c20',
  'Antarctica in snow': '0ff78b3777db8e0a59d9c9fe2960b57b50a0d00300137a5872a2114302fb5b55',
  'Atlantic in rain': '56ec10f12cc93a8f3aa4db8dfa98adc8e56c339179107b83421341188b8d22e1',
  'Tibet, snow at dawn': '01a071ea80d180abf84a260bb0d19f3a52147e9e645a7ef36bea8b00bc4b4a14',
  'Siberian tundra, cloudy': 'db070aa32b3632803d8980c6abc8fba46db6f5d9ac4314516b3c28a33b2fe643',
  'Venice, surroundings muted, named': 'f2eac1e7c5009fbdb7efd7ba1043d5d069d9f71aa2abe850285239c55e7014e9',
  'Sydney, improved, with prompt and tags': 'f51b8e0822d178c88389d6e13ab11fbef4e83ab847bbcb8e98c13e180d19f486',
};

/** sha256 of the frame's RGB pixels, then its land cover, then the place it names. */
function frameDigest(request: GenerationRequest): string {
  const frame = renderAerialFrame(request);
  return createHash('sha256').update(frame.rgb).update(frame.cover).update(frame.place ?? '').digest('hex');
}

describe('the renderer draws the same pixels as before', () => {
  it('for each recorded request', () => {
    const digests = Object.fromEntries(Object.entries(FRAMES).map(([name, overrides]) => [name, frameDigest(generationRequest(overrides))]));
    expect(digests).toEqual(DIGESTS);
  });
});
