// The library's ImageRequest (src/library/image-request.ts) is written from
// the scene vocabulary with a doc comment on every field
// (scripts/image-request-type.mjs): it is what the script makes now, and the
// same type as the vocabulary's own.
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { renderImageRequestType } from '../../../scripts/image-request-type.mjs';
import type { ImageRequest } from '../../../src/library/image-request.js';
import { SCENE_FIELDS, type BooleanField, type EnumField, type EnumValue } from '../../../src/scene/vocabulary.js';
import { ROOT } from '../../helpers/cli.js';

/** The request the vocabulary describes, field by field (one object type, as the generated interface is). */
type VocabularyRequest = Flat<
  { coordinates: { lat: number; lng: number } } & { [F in EnumField]?: EnumValue<F> } & { [F in BooleanField]?: boolean } & {
    tags?: readonly string[];
    prompt?: string;
  }
>;
type Flat<T> = { [K in keyof T]: T[K] };

describe('ImageRequest', () => {
  it('is the file the vocabulary makes (npx vitest run test/unit/library/image-request.test.ts -u writes it)', async () => {
    await expect(renderImageRequestType(SCENE_FIELDS)).toMatchFileSnapshot(join(ROOT, 'src', 'library', 'image-request.ts'));
  });

  it('has a doc comment on every field, with its values and its default', () => {
    const text = renderImageRequestType(SCENE_FIELDS);
    const declared = [...text.matchAll(/^\s+(\w+)\??: /gm)].map((match) => match[1]);
    const documented = [...text.matchAll(/\/\*\* [^\n]* \*\/\n\s+(\w+)\??: /g)].map((match) => match[1]);
    expect(documented).toEqual(declared);
    expect(declared).toEqual(['coordinates', 'lat', 'lng', 'resolution', 'zoom', 'bearing', 'angle', 'weather', 'daytime', 'aspectRatio', 'epoch', 'includeContext', 'includeSurroundings', 'improveOutput', 'saveImage', 'tags', 'prompt']);
    expect(text).toContain("/** Output resolution: 'HD', 'FHD' or 'UHD'. Left out: 'FHD'. */\n  resolution?: 'HD' | 'FHD' | 'UHD';");
    expect(text).toContain('/** Latitude in degrees, -90 to 90. */');
  });

  it('is the vocabulary’s own type', () => {
    expectTypeOf<ImageRequest>().toEqualTypeOf<VocabularyRequest>();
  });
});
