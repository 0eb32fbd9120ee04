// A generation request on its way to the wire, checked at run time against the
// scene vocabulary: what every face sends passes here first (the CLI's and the
// MCP server's parsed input, the library's typed objects, which plain
// JavaScript can fill with anything). Numbers finite and within each
// coordinate's range, enum values exactly as the spec spells them, booleans,
// at most so many tags, none empty, a prompt that says something, and no field
// the vocabulary does not know. Kept light (no zod): it says what is wrong, and
// the caller throws in its own terms.
import { nearest } from '../text/suggest.js';
import { SCENE_FIELD_NAMES, sceneSpec, wirePath, type SceneField } from './vocabulary.js';

/** How a problem names a field: `--zoom` for the CLI, `zoom` for a tool argument, `coordinates.lat` for the library. */
export type FieldLabel = (field: SceneField) => string;

/** The field's place in the request body, as a library user writes it: coordinates.lat, tags, resolution. */
export const wireLabel: FieldLabel = (field) => wirePath(field) ?? field;

/** A value as a message quotes it: strings quoted, everything else as JavaScript shows it. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The wire names a body may hold at its top and in its nested objects (coordinates.lat → coordinates: lat). */
function knownNames(): { top: Set<string>; nested: Map<string, Set<string>> } {
  const top = new Set<string>();
  const nested = new Map<string, Set<string>>();
  for (const field of SCENE_FIELD_NAMES) {
    const path = wirePath(field);
    if (path === undefined) continue;
    const [name, leaf] = path.split('.') as [string, string | undefined];
    top.add(name);
    if (leaf !== undefined) nested.set(name, (nested.get(name) ?? new Set()).add(leaf));
  }
  return { top, nested };
}

let names: ReturnType<typeof knownNames> | undefined;

/** A field's value in `body` at its wire path (undefined when absent). */
function valueAt(body: Record<string, unknown>, path: string): unknown {
  const [name, leaf] = path.split('.') as [string, string | undefined];
  const value = body[name];
  return leaf === undefined ? value : isPlainObject(value) ? value[leaf] : undefined;
}

/** What is wrong with one field's value, or undefined. `value` is present (not undefined). */
function fieldProblem(field: SceneField, value: unknown, label: string): string | undefined {
  const spec = sceneSpec(field);
  switch (spec.kind) {
    case 'location':
      return undefined;
    case 'coordinate': {
      const [min, max] = spec.range;
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${label} must be a finite number; got ${shown(value)}`;
      return value < min || value > max ? `${label} must be between ${min} and ${max}; got ${value}` : undefined;
    }
    case 'enum': {
      if (typeof value === 'string' && spec.values.includes(value)) return undefined;
      const suggestion = typeof value === 'string' ? nearest(value.replace(/[\s_-]/g, '').toLowerCase(), spec.values) : undefined;
      return `${label} must be one of ${spec.values.join(', ')}; got ${shown(value)}${suggestion ? ` (did you mean ${suggestion}?)` : ''}`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${label} must be true or false; got ${shown(value)}`;
    case 'list': {
      if (!Array.isArray(value)) return `${label} must be an array of strings; got ${shown(value)}`;
      if (value.length > spec.max) return `${label} may hold at most ${spec.max} entries; got ${value.length}`;
      const bad = value.findIndex((entry) => typeof entry !== 'string' || entry.trim() === '');
      if (bad >= 0) return `${label}[${bad}] must be a non-empty string; got ${shown(value[bad])}`;
      return undefined;
    }
    case 'text':
      if (typeof value !== 'string') return `${label} must be a string; got ${shown(value)}`;
      return value.trim() === '' ? `${label} must not be empty` : undefined;
  }
}

/**
 * The first thing wrong with `body` as a generation request on the wire, in
 * the vocabulary's order (so the first field at fault is the one named), or
 * undefined when it may be sent. Every enum field and the tags must be there
 * (the wire form has them all: defaults are filled in before); booleans and the
 * prompt may be left out.
 */
export function requestProblem(body: unknown, label: FieldLabel = wireLabel): string | undefined {
  if (!isPlainObject(body)) return `the request must be an object; got ${shown(body)}`;
  names ??= knownNames();
  for (const [name, leaves] of names.nested) {
    const nested = body[name];
    if (!isPlainObject(nested)) return `${name} must be an object of ${[...leaves].join(' and ')}; got ${shown(nested)}`;
    const unknown = Object.keys(nested).filter((key) => !leaves.has(key));
    if (unknown.length > 0) return `${name} has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
  }
  const unknown = Object.keys(body).filter((key) => !names!.top.has(key));
  if (unknown.length > 0) return `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
  for (const field of SCENE_FIELD_NAMES) {
    const path = wirePath(field);
    if (path === undefined) continue;
    const value = valueAt(body, path);
    const spec = sceneSpec(field);
    if (value === undefined) {
      if (spec.kind === 'boolean' || spec.kind === 'text') continue;
      return `${label(field)} is required`;
    }
    const problem = fieldProblem(field, value, label(field));
    if (problem) return problem;
  }
  return undefined;
}
