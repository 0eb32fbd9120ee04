// Turns scene input (flags, batch rows, prompts) plus configured defaults into
// a validated wire request. Every failure names the flag and what is allowed,
// and nothing is sent until this has succeeded.
import { parseSceneEnum, SCENE_ENUM_FIELDS, flagName, type SceneEnumField } from './api/enums.js';
import { UsageError } from './api/errors.js';
import { describeIssues, GenerationRequestSchema, MAX_TAGS, type GenerationRequest } from './api/schema.js';
import { BOOLEAN_SCENE_FIELDS, type BooleanSceneField, type Settings } from './config.js';

/** Scene values as they arrive from the command line or a batch row: strings, not yet checked. */
export type SceneInput = {
  lat?: string | number;
  lng?: string | number;
  at?: string;
  tag?: string[];
  prompt?: string;
} & Partial<Record<SceneEnumField, string>> &
  Partial<Record<BooleanSceneField, boolean>>;

/** How a field is named to the user: `--zoom` on the command line, `column 'zoom'` in a batch file. */
export type FieldLabel = (field: string) => string;
export const flagLabel: FieldLabel = (field) => `--${flagName(field)}`;

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function parseCoordinate(raw: string | number, label: string): number {
  const text = String(raw).trim();
  if (!NUMBER.test(text)) throw new UsageError(`${label} must be a decimal number; got '${String(raw)}'`);
  return Number(text);
}

/**
 * Reads "48.8584,2.2945", "48.8584, 2.2945" or a geo: URI (RFC 5870,
 * e.g. geo:48.8584,2.2945;u=35) into a latitude and longitude.
 */
export function parseLocation(raw: string, label = '--at'): { lat: number; lng: number } {
  let text = raw.trim();
  const geo = /^geo:/i.test(text);
  if (geo) text = text.slice(4).split(/[;?]/)[0]!;
  const parts = text.split(/\s*,\s*|\s+/).filter(Boolean);
  // Only a geo: URI may carry a third part (altitude); it must still be a number, not silently dropped junk.
  if (parts.length < 2 || parts.length > (geo ? 3 : 2)) {
    throw new UsageError(`${label} must be "LAT,LNG" or a geo: URI (geo:48.8584,2.2945); got '${raw}'`);
  }
  if (parts[2] !== undefined) parseCoordinate(parts[2], `${label} altitude`);
  return { lat: parseCoordinate(parts[0]!, `${label} latitude`), lng: parseCoordinate(parts[1]!, `${label} longitude`) };
}

export function checkCoordinates(lat: number, lng: number, latLabel: string, lngLabel: string): void {
  const swapped = Math.abs(lat) > 90 && Math.abs(lat) <= 180 && Math.abs(lng) <= 90;
  if (lat < -90 || lat > 90) {
    throw new UsageError(
      `${latLabel} must be between -90 and 90; got ${lat}${swapped ? ` (did you swap ${latLabel} and ${lngLabel}?)` : ''}`,
    );
  }
  if (lng < -180 || lng > 180) throw new UsageError(`${lngLabel} must be between -180 and 180; got ${lng}`);
}

function resolveCoordinates(input: SceneInput, label: FieldLabel): { lat: number; lng: number } {
  if (input.at !== undefined) {
    if (input.lat !== undefined || input.lng !== undefined) {
      throw new UsageError(`${label('at')} cannot be combined with ${label('lat')}/${label('lng')}`);
    }
    const { lat, lng } = parseLocation(input.at, label('at'));
    checkCoordinates(lat, lng, `${label('at')} latitude`, `${label('at')} longitude`);
    return { lat, lng };
  }
  if (input.lat === undefined || input.lat === '') throw new UsageError(`${label('lat')} is required (or ${label('at')} LAT,LNG)`);
  if (input.lng === undefined || input.lng === '') throw new UsageError(`${label('lng')} is required (or ${label('at')} LAT,LNG)`);
  const lat = parseCoordinate(input.lat, label('lat'));
  const lng = parseCoordinate(input.lng, label('lng'));
  checkCoordinates(lat, lng, label('lat'), label('lng'));
  return { lat, lng };
}

export function buildGenerationRequest(
  input: SceneInput,
  defaults: Settings['sceneDefaults'],
  label: FieldLabel = flagLabel,
): GenerationRequest {
  const coordinates = resolveCoordinates(input, label);
  const enums = {} as Record<SceneEnumField, string>;
  for (const field of SCENE_ENUM_FIELDS) {
    const raw = input[field];
    // An explicitly empty value (--zoom "") is a mistake, not a request for the default.
    if (raw === undefined) {
      enums[field] = defaults[field].value;
      continue;
    }
    const parsed = parseSceneEnum(field, raw, label(field));
    if (!parsed.ok) throw new UsageError(parsed.message);
    enums[field] = parsed.value;
  }
  const tags = (input.tag ?? []).map((tag) => tag.trim());
  if (tags.length > MAX_TAGS) throw new UsageError(`${label('tag')} may be given at most ${MAX_TAGS} times; got ${tags.length}`);
  if (tags.some((tag) => tag === '')) throw new UsageError(`${label('tag')} must not be empty`);
  if (input.prompt !== undefined && input.prompt.trim() === '') throw new UsageError(`${label('prompt')} must not be empty`);

  const request: Record<string, unknown> = { coordinates, ...enums };
  for (const field of BOOLEAN_SCENE_FIELDS) {
    const value = input[field] ?? defaults[field].value;
    if (value !== undefined) request[field] = value;
  }
  request.tags = tags;
  if (input.prompt !== undefined) request.prompt = input.prompt;

  // The schema is the last word: anything the checks above missed is still caught before sending.
  const checked = GenerationRequestSchema.safeParse(request);
  if (!checked.success) throw new UsageError(describeIssues(checked.error), 'ValidationFailed');
  return checked.data;
}
