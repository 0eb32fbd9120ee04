// Properties of request building, run in-process over thousands of generated
// command lines: every scene either is refused as a usage error naming a bad
// flag, or becomes exactly the documented wire body, which the spec's schema
// accepts. Aliases and case variations always land on the documented form.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSceneEnum, SCENE_ENUMS, type SceneEnumField } from '../../src/api/enums.js';
import { CliError, ExitCode } from '../../src/lifecycle/errors.js';
import { generationRequestSchema } from '../../src/api/schema.js';
import { resolveSettings } from '../../src/config/config.js';
import { buildGenerationRequest, parseLocation } from '../../src/input/scene-request.js';
import { enumValue, expectedBody, invalidFlags, location, sceneCase, sceneInput } from './scene-model.js';

const defaults = resolveSettings({}, {}, {}).sceneDefaults;

function attempt(build: () => unknown): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: build() };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('buildGenerationRequest over generated scenes', () => {
  it('refuses exactly the invalid scenes with a one-line usage error naming a bad flag, and builds the exact body otherwise', () => {
    let valid = 0;
    let refused = 0;
    fc.assert(
      fc.property(sceneCase(), (scene) => {
        const bad = invalidFlags(scene);
        const result = attempt(() => buildGenerationRequest(sceneInput(scene), defaults));
        if (bad.length > 0) {
          refused++;
          expect(result.ok, `should refuse (${bad.join(' ')})`).toBe(false);
          const error = (result as { error: unknown }).error;
          expect(error).toBeInstanceOf(CliError);
          expect((error as CliError).exitCode).toBe(ExitCode.Usage);
          const message = (error as CliError).message;
          expect(message).not.toMatch(/[\r\n]/);
          expect(bad.some((flag) => message.includes(flag)), `'${message}' names one of ${bad.join(' ')}`).toBe(true);
        } else {
          valid++;
          expect(result.ok, `should accept: ${result.ok ? '' : String((result as { error: unknown }).error)}`).toBe(true);
          const body = (result as { value: unknown }).value;
          expect(generationRequestSchema().safeParse(body).success).toBe(true);
          expect(JSON.parse(JSON.stringify(body))).toEqual(expectedBody(scene));
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS) || 3000 },
    );
    // Both branches must really have been exercised, in quantity.
    expect(valid).toBeGreaterThan(600);
    expect(refused).toBeGreaterThan(600);
  });

  it('maps every case variation, separator style and bearing abbreviation to the documented wire form', () => {
    for (const field of Object.keys(SCENE_ENUMS) as SceneEnumField[]) {
      fc.assert(
        fc.property(enumValue(field), (given) => {
          const parsed = parseSceneEnum(field, given.raw);
          if (given.valid) {
            expect(parsed).toEqual({ ok: true, value: given.value });
            expect(SCENE_ENUMS[field] as readonly string[]).toContain(parsed.ok && parsed.value);
          } else {
            expect(parsed.ok).toBe(false);
            // The refusal lists every allowed value so the user can pick one.
            const message = (parsed as { message: string }).message;
            for (const allowed of SCENE_ENUMS[field]) expect(message).toContain(allowed);
          }
        }),
        { numRuns: 400 },
      );
    }
  });

  it('reads --at in every documented form and refuses malformed ones', () => {
    fc.assert(
      fc.property(location(), (at) => {
        const result = attempt(() => buildGenerationRequest({ at: at.raw }, defaults));
        if (at.valid) {
          expect(result.ok, `accepts '${at.raw}'`).toBe(true);
          expect(JSON.parse(JSON.stringify((result as { value: { coordinates: unknown } }).value.coordinates))).toEqual(
            JSON.parse(JSON.stringify(at.value)),
          );
        } else {
          expect(result.ok, `refuses '${at.raw}'`).toBe(false);
          expect((result as { error: CliError }).error.exitCode).toBe(ExitCode.Usage);
          expect((result as { error: CliError }).error.message).toContain('--at');
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('never lets a non-schema body through, whatever the raw input', () => {
    // Arbitrary strings in every field, not just plausible ones: the builder must refuse or produce a schema-valid body.
    const anything = fc.option(fc.string({ unit: 'grapheme', maxLength: 12 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          lat: anything,
          lng: anything,
          at: fc.option(anything, { nil: undefined }),
          resolution: anything,
          zoom: anything,
          bearing: anything,
          tag: fc.option(fc.array(fc.string({ maxLength: 4 }), { maxLength: 13 }), { nil: undefined }),
          prompt: anything,
        }),
        (raw) => {
          const input = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
          const result = attempt(() => buildGenerationRequest(input, defaults));
          if (result.ok) expect(generationRequestSchema().safeParse(result.value).success).toBe(true);
          else expect((result.error as CliError).exitCode).toBe(ExitCode.Usage);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('takes the altitude of a geo: URI but refuses a junk third part', () => {
    expect(parseLocation('geo:48.8584,2.2945,35;u=10')).toEqual({ lat: 48.8584, lng: 2.2945 });
    expect(() => parseLocation('48.8584,2.2945,banana')).toThrow(/--at/);
  });
});
