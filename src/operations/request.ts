// A generation request checked before anything is sent, for every face: the
// library's typed objects (which plain JavaScript can fill with anything:
// `lat: 200`, `NaN`, eleven tags, `resolution: 'XL'`), completed with the
// vocabulary's defaults and held to it (scene/request-check.ts). The CLI and
// the MCP server parse their input first (input/scene-request.ts) and end on
// the same check. A refusal is an InvalidInputError: nothing was sent.
import { InvalidInputError } from '../api/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import { requestProblem, wireLabel, type FieldLabel } from '../scene/request-check.js';
import { readWire, SCENE_FIELD_NAMES, sceneSpec, writeWire } from '../scene/vocabulary.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The wire form of a request a caller wrote: its fields in the vocabulary's
 * order, each enum left out given its built-in default and the list left out
 * empty (the service requires them), every array copied. Anything the
 * vocabulary does not know is kept, for the check to name.
 */
function completed(request: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    if (spec.kind === 'location') continue;
    let value = readWire(request, field);
    if (value === undefined && spec.kind === 'enum') value = spec.default;
    if (value === undefined && spec.kind === 'list') value = [];
    if (Array.isArray(value)) value = [...(value as unknown[])];
    if (value !== undefined) writeWire(body, field, value);
  }
  // What else the caller's objects hold (a typo, `latitude`), kept for the check to refuse by name.
  for (const [key, value] of Object.entries(request)) {
    const made = body[key];
    if (made === undefined) body[key] = value;
    else if (isObject(made) && isObject(value)) for (const [leaf, entry] of Object.entries(value)) if (!(leaf in made)) made[leaf] = entry;
  }
  return body;
}

/**
 * `request` as it goes on the wire, or an InvalidInputError naming the first
 * field at fault (by `label`: coordinates.lat, tags, resolution) and what it
 * allows, with nothing sent.
 */
export function validateRequest(request: unknown, label: FieldLabel = wireLabel): GenerationRequest {
  if (!isObject(request)) {
    throw new InvalidInputError(`the request must be an object such as { coordinates: { lat: 48.8584, lng: 2.2945 } }; got ${request === null ? 'null' : Array.isArray(request) ? 'an array' : typeof request}`);
  }
  const body = completed(request);
  const problem = requestProblem(body, label);
  if (problem) throw new InvalidInputError(problem);
  return body as GenerationRequest;
}
