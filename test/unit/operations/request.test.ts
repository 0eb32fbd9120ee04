// A request checked before anything is sent (src/operations/request.ts): the
// library's typed objects completed with the vocabulary's defaults and held to
// it, refused with an InvalidInputError naming the field.
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/api/errors.js';
import { validateRequest } from '../../../src/operations/request.js';
import { SCENE_DEFAULTS } from '../../../src/api/enums.js';

describe('validateRequest', () => {
  it('gives the wire form: the fields in the vocabulary’s order, enum defaults and empty tags filled in', () => {
    const body = validateRequest({ tags: ['a'], zoom: 'High', coordinates: { lng: 2, lat: 1 }, includeContext: true });
    expect(body).toEqual({ coordinates: { lat: 1, lng: 2 }, ...SCENE_DEFAULTS, zoom: 'High', includeContext: true, tags: ['a'] });
    expect(Object.keys(body)).toEqual(['coordinates', 'resolution', 'zoom', 'bearing', 'angle', 'weather', 'daytime', 'aspectRatio', 'epoch', 'includeContext', 'tags']);
    expect(Object.keys(body.coordinates)).toEqual(['lat', 'lng']);
    expect(validateRequest({ coordinates: { lat: 0, lng: 0 } }).tags).toEqual([]);
  });

  it('copies what it takes: a frozen, readonly request is sent as it was, and later changes to it are not', () => {
    const tags = Object.freeze(['one']);
    const request = Object.freeze({ coordinates: Object.freeze({ lat: 1, lng: 2 }), tags });
    const body = validateRequest(request);
    expect(body.tags).toEqual(['one']);
    expect(body.tags).not.toBe(tags);
    expect(body.coordinates).not.toBe(request.coordinates);
  });

  it('refuses what the vocabulary does not allow, naming the field as the library user wrote it', () => {
    const refuse = (request: unknown) => {
      try {
        validateRequest(request);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(request)}`);
    };
    expect(refuse({ coordinates: { lat: 200, lng: 0 } })).toBe('coordinates.lat must be between -90 and 90; got 200');
    expect(refuse({ coordinates: { lat: 0, lng: Number.NaN } })).toBe('coordinates.lng must be a finite number; got NaN');
    expect(refuse({ coordinates: { lat: 0, lng: 0, alt: 3 } })).toBe('coordinates has unknown field alt');
    expect(refuse({ coordinates: '1,2' })).toBe('coordinates must be an object of lat and lng; got "1,2"');
    expect(refuse({ lat: 1, lng: 2 })).toBe('coordinates must be an object of lat and lng; got undefined');
    expect(refuse({ coordinates: { lat: 0, lng: 0 }, epoch: 'Future' })).toMatch(/^epoch must be one of Nowadays, Historical, Ancient; got "Future"/);
    expect(refuse('48.8,2.2')).toMatch(/^the request must be an object such as/);
    expect(refuse([1, 2])).toMatch(/got an array$/);
  });
});
