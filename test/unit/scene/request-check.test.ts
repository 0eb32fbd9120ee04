// The run-time check of a wire request against the scene vocabulary
// (src/scene/request-check.ts), which every face's request passes last.
import { describe, expect, it } from 'vitest';
import { requestProblem, wireLabel } from '../../../src/scene/request-check.js';
import { ENUM_FIELDS, SCENE_FIELDS, SCENE_FIELD_NAMES, flagName } from '../../../src/scene/vocabulary.js';
import { generationRequest } from '../../helpers/sandbox.js';

/** A request in the wire form, with the tags as a plain array. */
const valid = () => ({ ...generationRequest({ resolution: 'FHD' }), tags: [] as string[] });

describe('requestProblem', () => {
  it('passes a request in the wire form, booleans and the prompt optional', () => {
    expect(requestProblem(valid())).toBeUndefined();
    expect(requestProblem({ ...valid(), includeContext: true, saveImage: false, prompt: 'rooftops', tags: Array(10).fill('t') })).toBeUndefined();
    expect(requestProblem({ ...valid(), coordinates: { lat: -90, lng: 180 } })).toBeUndefined();
  });

  it('names the first field at fault, in the vocabulary’s order, with what it allows', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ coordinates: { lat: 90.5, lng: 0 } }, 'coordinates.lat must be between -90 and 90; got 90.5'],
      [{ coordinates: { lat: 0, lng: -180.5 } }, 'coordinates.lng must be between -180 and 180; got -180.5'],
      [{ coordinates: { lat: Infinity, lng: 0 } }, 'coordinates.lat must be a finite number; got Infinity'],
      [{ coordinates: { lat: '1', lng: 0 } }, 'coordinates.lat must be a finite number; got "1"'],
      [{ coordinates: { lat: null, lng: 0 } }, 'coordinates.lat must be a finite number; got null'],
      [{ coordinates: { lat: 1 } }, 'coordinates.lng is required'],
      [{ coordinates: [1, 2] }, 'coordinates must be an object of lat and lng; got an array of 2'],
      [{ resolution: 'hd' }, 'resolution must be one of HD, FHD, UHD; got "hd" (did you mean HD?)'],
      [{ bearing: 'NE' }, 'bearing must be one of North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest; got "NE"'],
      [{ zoom: 3 }, 'zoom must be one of ExtraLow, Low, Medium, High, ExtraHigh; got 3'],
      [{ weather: undefined }, 'weather is required'],
      [{ improveOutput: 1 }, 'improveOutput must be true or false; got 1'],
      [{ tags: 'a;b' }, 'tags must be an array of strings; got "a;b"'],
      [{ tags: Array(11).fill('t') }, 'tags may hold at most 10 entries; got 11'],
      [{ tags: ['a', 2] }, 'tags[1] must be a non-empty string; got 2'],
      [{ prompt: '' }, 'prompt must not be empty'],
      [{ prompt: ['x'] }, 'prompt must be a string; got an array of 1'],
      [{ at: '1,2' }, 'unknown field at'],
      [{ extra: 1, more: 2 }, 'unknown fields extra, more'],
    ];
    for (const [patch, message] of cases) expect(requestProblem({ ...valid(), ...patch }), JSON.stringify(patch)).toBe(message);
    expect(requestProblem(null)).toBe('the request must be an object; got null');
    // The first at fault in the body's order: the coordinates before the resolution.
    expect(requestProblem({ ...valid(), coordinates: { lat: 100, lng: 0 }, resolution: 'XL' })).toMatch(/^coordinates\.lat/);
  });

  it('names fields as the caller does: the CLI’s flags, a tool’s arguments', () => {
    expect(requestProblem({ ...valid(), coordinates: { lat: 100, lng: 0 } }, (field) => `--${flagName(field)}`)).toBe('--lat must be between -90 and 90; got 100');
    expect(requestProblem({ ...valid(), aspectRatio: 'Wide' }, (field) => `--${flagName(field)}`)).toMatch(/^--aspect-ratio must be one of/);
    expect(wireLabel('tag')).toBe('tags');
  });

  it('checks every field of the vocabulary, each enum against its own values', () => {
    for (const field of ENUM_FIELDS) {
      for (const value of SCENE_FIELDS[field].values) expect(requestProblem({ ...valid(), [field]: value }), `${field}=${value}`).toBeUndefined();
      expect(requestProblem({ ...valid(), [field]: `${SCENE_FIELDS[field].values[0]}x` })).toMatch(new RegExp(`^${field} must be one of`));
    }
    const named = SCENE_FIELD_NAMES.filter((field) => field !== 'at').map(wireLabel);
    expect(named).toEqual(['coordinates.lat', 'coordinates.lng', ...ENUM_FIELDS, 'includeContext', 'includeSurroundings', 'improveOutput', 'saveImage', 'tags', 'prompt']);
  });
});
