// fast-check arbitraries for the scene flags of generate / generate-async.
// Each generated case carries both what the user types (argv) and what the
// documented contract says must happen: the exact wire body, or a refusal.
// The expectations come from how each value was built (e.g. "NorthEast
// written as north_east"), not from re-running the code under test; which
// fields there are, and the values an enum allows, come from the scene
// vocabulary, so a field added there is generated here too.
import fc from 'fast-check';
import { BEARING_ABBREVIATIONS, SCENE_DEFAULTS, SCENE_ENUMS, flagName, type SceneEnumField } from '../../src/api/enums.js';
import type { SceneInput } from '../../src/input/scene-request.js';
import { BOOLEAN_FIELDS, type BooleanField } from '../../src/scene/vocabulary.js';

/** A raw flag value and what it must become: a wire value, or a refusal. */
export interface Valued<T> {
  raw: string;
  valid: boolean;
  value?: T;
}

export interface SceneCase {
  /** Location given as --lat/--lng, as --at, both (a conflict), or neither. */
  lat?: Valued<number>;
  lng?: Valued<number>;
  at?: Valued<{ lat: number; lng: number }>;
  /** Every value given for an enum flag, in order (commander keeps the last). */
  enums: Partial<Record<SceneEnumField, Array<Valued<string>>>>;
  booleans: Partial<Record<BooleanField, boolean>>;
  tags: Array<Valued<string>>;
  prompt?: Valued<string>;
}

// ---------------------------------------------------------------- enums

/** The documented rule, used only to keep "junk" from accidentally being a valid spelling. */
function acceptedSpelling(field: SceneEnumField, raw: string): boolean {
  const squashed = raw.trim().replace(/[\s_-]/g, '').toLowerCase();
  if ((SCENE_ENUMS[field] as readonly string[]).some((value) => value.toLowerCase() === squashed)) return true;
  return field === 'bearing' && BEARING_ABBREVIATIONS[raw.trim().toUpperCase()] !== undefined;
}

function words(value: string): string[] {
  return value.match(/[A-Z]+(?![a-z])|[A-Z][a-z]*/g) ?? [value];
}

function randomCase(text: string): fc.Arbitrary<string> {
  return fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
}

const padding = fc.constantFrom('', ' ', '  ', '\t');

/** Case variations, word separators and padding of one documented value. */
function spellingOf(value: string): fc.Arbitrary<string> {
  const parts = words(value);
  return fc
    .tuple(fc.constantFrom('', '-', '_', ' '), padding, padding)
    .chain(([separator, before, after]) => randomCase(parts.join(separator)).map((text) => `${before}${text}${after}`));
}

function validEnum(field: SceneEnumField): fc.Arbitrary<Valued<string>> {
  const values = SCENE_ENUMS[field] as readonly string[];
  const spelled = fc.constantFrom(...values).chain((value) => spellingOf(value).map((raw) => ({ raw, valid: true, value })));
  if (field !== 'bearing') return spelled;
  const abbreviated = fc
    .constantFrom(...Object.entries(BEARING_ABBREVIATIONS))
    .chain(([short, value]) =>
      fc.tuple(randomCase(short), padding).map(([text, pad]) => ({ raw: `${pad}${text}${pad}`, valid: true, value })),
    );
  return fc.oneof(spelled, abbreviated);
}

function invalidEnum(field: SceneEnumField): fc.Arbitrary<Valued<string>> {
  const values = SCENE_ENUMS[field] as readonly string[];
  const otherFields = Object.values(SCENE_ENUMS).flat() as string[];
  const typo = fc
    .tuple(fc.constantFrom(...values), fc.nat(), fc.constantFrom('x', 'q', ''))
    .map(([value, at, extra]) => {
      const i = at % value.length;
      return `${value.slice(0, i)}${extra}${value.slice(i + 1)}`;
    });
  return fc
    .oneof(
      typo,
      fc.constantFrom(...otherFields),
      fc.constantFrom(' ', 'N E', 'north-east-', '0', 'null', 'undefined', '--help', '-5', 'Nort', 'ÉAST', 'NorthEast!'),
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    )
    .filter((raw) => raw !== '' && !raw.includes('\0') && !acceptedSpelling(field, raw))
    .map((raw) => ({ raw, valid: false }));
}

export function enumValue(field: SceneEnumField): fc.Arbitrary<Valued<string>> {
  return fc.oneof({ weight: 12, arbitrary: validEnum(field) }, { weight: 1, arbitrary: invalidEnum(field) });
}

// ---------------------------------------------------------------- coordinates

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A number written the ways people and programs write numbers. */
function writtenNumber(n: number): fc.Arbitrary<string> {
  const forms = [String(n), n.toFixed(2), n.toFixed(6), n.toExponential(3), n.toExponential()];
  if (n >= 0) forms.push(`+${String(n)}`);
  if (Math.abs(n) < 1 && n !== 0) forms.push(String(n).replace(/^(-?)0\./, '$1.'));
  return fc.tuple(fc.constantFrom(...forms), padding, padding).map(([text, before, after]) => `${before}${text}${after}`);
}

const boundaries = [-180.5, -180, -90.000001, -90, -45.5, 0, 48.8584, 90, 90.000001, 180, 180.000001, 1e400, -1e-7];

function numberArb(limit: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...boundaries) },
    { weight: 5, arbitrary: fc.double({ min: -limit, max: limit, noNaN: true }) },
    { weight: 1, arbitrary: fc.double({ min: -200, max: 200, noNaN: true }) },
    { weight: 1, arbitrary: fc.integer({ min: -250, max: 250 }) },
  );
}

function coordinate(limit: number): fc.Arbitrary<Valued<number>> {
  const written = numberArb(limit).chain((n) =>
    writtenNumber(n).map((raw) => {
      const value = Number(raw.trim());
      return { raw, value, valid: Number.isFinite(value) && Math.abs(value) <= limit };
    }),
  );
  const junk = fc
    .oneof(
      fc.constantFrom('', ' ', 'abc', '12abc', '1,5', 'NaN', 'Infinity', '-Infinity', '0x10', '1e', 'e5', '.', '+-1', '1.2.3', '١٢', '1_000', '--5', '48°N'),
      fc.string({ maxLength: 8 }),
    )
    .filter((raw) => !DECIMAL.test(raw.trim()) && !raw.includes('\0'))
    .map((raw) => ({ raw, valid: false }));
  return fc.oneof({ weight: 8, arbitrary: written }, { weight: 1, arbitrary: junk });
}

export const latitude = () => coordinate(90);
export const longitude = () => coordinate(180);

/** --at in its documented forms ("LAT,LNG", "LAT, LNG", geo: URIs), and malformed ones. */
export function location(): fc.Arbitrary<Valued<{ lat: number; lng: number }>> {
  const both = fc.tuple(latitude(), longitude());
  const wellFormed = fc
    .tuple(both, fc.constantFrom('plain', 'spaced', 'geo', 'geo-u', 'geo-alt', 'GEO-params'))
    // Parts that contain a separator themselves would change the shape of the text; those are the malformed cases below.
    .filter(([[lat, lng]]) => !/[\s,;?]/.test(lat.raw.trim() + lng.raw.trim()) && lat.raw.trim() !== '' && lng.raw.trim() !== '')
    .map(([[lat, lng], form]) => {
      const a = lat.raw.trim();
      const b = lng.raw.trim();
      const raw = {
        plain: `${a},${b}`,
        spaced: ` ${a}, ${b} `,
        geo: `geo:${a},${b}`,
        'geo-u': `geo:${a},${b};u=35`,
        'geo-alt': `geo:${a},${b},120`,
        'GEO-params': `GEO:${a},${b};crs=wgs84;u=10`,
      }[form];
      const valid = lat.valid && lng.valid;
      return { raw, valid, value: valid ? { lat: lat.value!, lng: lng.value! } : undefined };
    });
  const malformed = fc
    .tuple(latitude(), longitude())
    .filter(([lat, lng]) => lat.valid && lng.valid)
    .chain(([lat, lng]) => {
      const a = lat.raw.trim();
      const b = lng.raw.trim();
      return fc.constantFrom(a, `${a},`, `${a};${b}`, `${a},${b},banana`, `${a},${b},1,2`, 'geo:', `geo:north,${b}`, '', ' ');
    })
    .map((raw) => ({ raw, valid: false }));
  return fc.oneof({ weight: 4, arbitrary: wellFormed }, { weight: 1, arbitrary: malformed });
}

// ---------------------------------------------------------------- tags, prompt, booleans

/**
 * Values that are spelled like the program's own options, and so are taken for
 * them by a parser that looks for those anywhere on the line: a flag's value
 * all the same (`--prompt -V` is the prompt "-V").
 */
const likeProgramOption = fc
  .tuple(fc.constantFrom('-V', '--version', '--json', '-q', '-v', '-qv', '-Vq', '--quiet', '--verbose', '--no-color', '--sandbox', '--profile', '--api-key', '--base-url', '-h', '--help'), fc.constantFrom('', ' '))
  .map(([flag, after]) => `${flag}${after}`);

function tag(): fc.Arbitrary<Valued<string>> {
  const good = fc
    .tuple(fc.oneof({ weight: 9, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) }, { weight: 1, arbitrary: likeProgramOption }), padding)
    .filter(([text]) => text.trim() !== '' && !text.includes('\0'))
    .map(([text, pad]) => ({ raw: `${pad}${text}`, valid: true, value: `${pad}${text}`.trim() }));
  const empty = fc.constantFrom('', ' ', '\t').map((raw) => ({ raw, valid: false }));
  return fc.oneof({ weight: 40, arbitrary: good }, { weight: 1, arbitrary: empty });
}

function prompt(): fc.Arbitrary<Valued<string>> {
  const good = fc
    .oneof({ weight: 9, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }, { weight: 2, arbitrary: likeProgramOption })
    .filter((text) => text.trim() !== '' && !text.includes('\0'))
    .map((raw) => ({ raw, valid: true, value: raw }));
  const empty = fc.constantFrom('', '  ').map((raw) => ({ raw, valid: false }));
  return fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: empty });
}

// ---------------------------------------------------------------- the whole scene

export function sceneCase(): fc.Arbitrary<SceneCase> {
  const enumRecord = fc.record(
    Object.fromEntries(
      (Object.keys(SCENE_ENUMS) as SceneEnumField[]).map((field) => [field, fc.array(enumValue(field), { maxLength: 2 })]),
    ) as Record<SceneEnumField, fc.Arbitrary<Array<Valued<string>>>>,
    { requiredKeys: [] },
  );
  const booleans = fc.record(
    Object.fromEntries(BOOLEAN_FIELDS.map((field) => [field, fc.boolean()])) as Record<BooleanField, fc.Arbitrary<boolean>>,
    { requiredKeys: [] },
  );
  const where = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(latitude(), longitude()).map(([lat, lng]) => ({ lat, lng })) },
    { weight: 3, arbitrary: location().map((at) => ({ at })) },
    { weight: 1, arbitrary: latitude().map((lat) => ({ lat })) },
    { weight: 1, arbitrary: fc.tuple(location(), latitude()).map(([at, lat]) => ({ at, lat })) },
    { weight: 1, arbitrary: fc.constant({}) },
  );
  return fc
    .record({
      where,
      enums: enumRecord,
      booleans,
      tags: fc.array(tag(), { maxLength: 13 }),
      prompt: fc.option(prompt(), { nil: undefined }),
    })
    .map(({ where: w, enums, booleans: b, tags, prompt: p }) => ({ ...w, enums, booleans: b, tags, prompt: p }));
}

// ---------------------------------------------------------------- what must happen

export const MAX_TAGS = 10;

/** The flags the contract says must be refused; empty when the case is valid. */
export function invalidFlags(scene: SceneCase): string[] {
  const bad: string[] = [];
  if (scene.at && (scene.lat || scene.lng)) bad.push('--at', '--lat', '--lng');
  else if (scene.at) {
    if (!scene.at.valid) bad.push('--at');
  } else {
    if (!scene.lat || !scene.lat.valid) bad.push('--lat');
    if (!scene.lng || !scene.lng.valid) bad.push('--lng');
  }
  for (const [field, given] of Object.entries(scene.enums) as Array<[SceneEnumField, Array<Valued<string>>]>) {
    const last = given.at(-1);
    if (last && !last.valid) bad.push(`--${flagName(field)}`);
  }
  if (scene.tags.length > MAX_TAGS || scene.tags.some((t) => !t.valid)) bad.push('--tag');
  if (scene.prompt && !scene.prompt.valid) bad.push('--prompt');
  return bad;
}

/** The exact body the contract requires for a valid case. */
export function expectedBody(scene: SceneCase): Record<string, unknown> {
  const coordinates = scene.at ? scene.at.value! : { lat: scene.lat!.value!, lng: scene.lng!.value! };
  const body: Record<string, unknown> = { coordinates };
  for (const field of Object.keys(SCENE_ENUMS) as SceneEnumField[]) {
    body[field] = scene.enums[field]?.at(-1)?.value ?? SCENE_DEFAULTS[field];
  }
  for (const field of BOOLEAN_FIELDS) {
    if (scene.booleans[field] !== undefined) body[field] = scene.booleans[field];
  }
  body.tags = scene.tags.map((t) => t.value);
  if (scene.prompt) body.prompt = scene.prompt.value;
  // What travels is JSON: -0 becomes 0.
  return JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
}

/** What commander hands the command for this case (the last of repeated enum flags wins). */
export function sceneInput(scene: SceneCase): SceneInput {
  const input: Record<string, unknown> = {};
  if (scene.lat) input.lat = scene.lat.raw;
  if (scene.lng) input.lng = scene.lng.raw;
  if (scene.at) input.at = scene.at.raw;
  for (const [field, given] of Object.entries(scene.enums) as Array<[SceneEnumField, Array<Valued<string>>]>) {
    if (given.length) input[field] = given.at(-1)!.raw;
  }
  Object.assign(input, scene.booleans);
  if (scene.tags.length) input.tag = scene.tags.map((t) => t.raw);
  if (scene.prompt) input.prompt = scene.prompt.raw;
  return input as SceneInput;
}

/** The command line a user would type for this case. */
export function sceneArgv(scene: SceneCase): string[] {
  const argv: string[] = [];
  if (scene.lat) argv.push('--lat', scene.lat.raw);
  if (scene.lng) argv.push('--lng', scene.lng.raw);
  if (scene.at) argv.push('--at', scene.at.raw);
  for (const [field, given] of Object.entries(scene.enums) as Array<[SceneEnumField, Array<Valued<string>>]>) {
    for (const value of given) argv.push(`--${flagName(field)}`, value.raw);
  }
  for (const [field, on] of Object.entries(scene.booleans)) argv.push(on ? `--${flagName(field)}` : `--no-${flagName(field)}`);
  for (const t of scene.tags) argv.push('--tag', t.raw);
  if (scene.prompt) argv.push('--prompt', scene.prompt.raw);
  return argv;
}
