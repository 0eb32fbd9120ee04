// Turns scene input (flags, batch rows, prompts, MCP tool arguments) plus
// configured defaults into a validated wire request. Every failure names the
// flag (or column, or argument) and what is allowed, and nothing is sent until
// this has succeeded.
import { UsageError } from '../lifecycle/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import { requestProblem } from '../scene/request-check.js';
import { findPlace, looksLikeCoordinates, placeNote, type FoundPlace } from './gazetteer.js';
import {
  flagName,
  parseSceneEnum,
  SCENE_FIELD_NAMES,
  SCENE_FIELDS,
  sceneSpec,
  writeWire,
  type BooleanField,
  type CoordinateField,
  type EnumField,
  type SceneField,
  type SceneFields,
} from '../scene/vocabulary.js';

/** How each kind of field arrives from the command line or a batch row. */
interface InputByKind {
  coordinate: string | number;
  location: string;
  enum: string;
  boolean: boolean;
  list: string[];
  text: string;
}

/** Scene values as they arrive from the command line or a batch row: strings, not yet checked. */
export type SceneInput = { [F in SceneField]?: InputByKind[SceneFields[F]['kind']] };

/**
 * The default of each enum and boolean field: the config's resolved scene
 * defaults (Settings['sceneDefaults']) give them, with where each came from.
 */
export type SceneDefaults = { [F in EnumField]: { value: string } } & { [F in BooleanField]: { value: boolean | undefined } };

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
  const [latMin, latMax] = SCENE_FIELDS.lat.range;
  const [lngMin, lngMax] = SCENE_FIELDS.lng.range;
  const swapped = (lat < latMin || lat > latMax) && lat >= lngMin && lat <= lngMax && lng >= latMin && lng <= latMax;
  if (lat < latMin || lat > latMax) {
    throw new UsageError(
      `${latLabel} must be between ${latMin} and ${latMax}; got ${lat}${swapped ? ` (did you swap ${latLabel} and ${lngLabel}?)` : ''}`,
    );
  }
  if (lng < lngMin || lng > lngMax) throw new UsageError(`${lngLabel} must be between ${lngMin} and ${lngMax}; got ${lng}`);
}

/** What building a request may tell its caller: the place a name was taken for. */
export interface RequestNotes {
  onPlace?(query: string, found: FoundPlace): void;
}

/** Notes that tell a person, through `info`, which place a name was taken for. */
export function placeNotes(info: (message: string) => void): RequestNotes {
  return { onPlace: (query, found) => info(placeNote(query, found)) };
}

function hasCoordinates(input: SceneInput): boolean {
  return (input.lat !== undefined && input.lat !== '') || (input.lng !== undefined && input.lng !== '');
}

function resolveCoordinates(input: SceneInput, label: FieldLabel, notes: RequestNotes): { lat: number; lng: number } {
  // A place name beside coordinates is a label: the coordinates win, and the gazetteer is not read.
  if (input.at !== undefined && !looksLikeCoordinates(input.at) && !hasCoordinates(input)) {
    const found = findPlace(input.at, label('at'));
    notes.onPlace?.(input.at, found);
    return { lat: found.place.lat, lng: found.place.lng };
  }
  if (input.at !== undefined && looksLikeCoordinates(input.at)) {
    if (input.lat !== undefined || input.lng !== undefined) {
      throw new UsageError(`${label('at')} cannot be combined with ${label('lat')}/${label('lng')}`);
    }
    const { lat, lng } = parseLocation(input.at, label('at'));
    checkCoordinates(lat, lng, `${label('at')} latitude`, `${label('at')} longitude`);
    return { lat, lng };
  }
  if (input.lat === undefined || input.lat === '') throw new UsageError(`${label('lat')} is required (or ${label('at')} LAT,LNG or a place name)`);
  if (input.lng === undefined || input.lng === '') throw new UsageError(`${label('lng')} is required (or ${label('at')} LAT,LNG or a place name)`);
  const lat = parseCoordinate(input.lat, label('lat'));
  const lng = parseCoordinate(input.lng, label('lng'));
  checkCoordinates(lat, lng, label('lat'), label('lng'));
  return { lat, lng };
}

export function buildGenerationRequest(
  input: SceneInput,
  defaults: SceneDefaults,
  label: FieldLabel = flagLabel,
  notes: RequestNotes = {},
): GenerationRequest {
  const coordinates = resolveCoordinates(input, label, notes);
  // In the vocabulary's order, which is the body's: the first field refused is the one named.
  const request: Record<string, unknown> = {};
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    switch (spec.kind) {
      case 'location':
        break;
      case 'coordinate':
        writeWire(request, field, coordinates[field as CoordinateField]);
        break;
      case 'enum': {
        const raw = input[field] as string | undefined;
        // An explicitly empty value (--zoom "") is a mistake, not a request for the default.
        if (raw === undefined) {
          writeWire(request, field, defaults[field as EnumField].value);
          break;
        }
        const parsed = parseSceneEnum(field as EnumField, raw, label(field));
        if (!parsed.ok) throw new UsageError(parsed.message);
        writeWire(request, field, parsed.value);
        break;
      }
      case 'boolean': {
        const value = (input[field] as boolean | undefined) ?? defaults[field as BooleanField].value;
        if (value !== undefined) writeWire(request, field, value);
        break;
      }
      case 'list': {
        const entries = ((input[field] as string[] | undefined) ?? []).map((entry) => entry.trim());
        if (entries.length > spec.max) throw new UsageError(`${label(field)} may be given at most ${spec.max} times; got ${entries.length}`);
        if (entries.some((entry) => entry === '')) throw new UsageError(`${label(field)} must not be empty`);
        writeWire(request, field, entries);
        break;
      }
      case 'text': {
        const text = input[field] as string | undefined;
        if (text === undefined) break;
        if (text.trim() === '') throw new UsageError(`${label(field)} must not be empty`);
        writeWire(request, field, text);
        break;
      }
    }
  }

  // The vocabulary's check of the wire form is the last word, as for every face (scene/request-check.ts):
  // anything the checks above missed is still caught before sending.
  const problem = requestProblem(request, label);
  if (problem) throw new UsageError(problem, 'ValidationFailed');
  return request as GenerationRequest;
}
