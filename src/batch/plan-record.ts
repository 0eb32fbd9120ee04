// The plan record: one line a batch writes in its manifest saying what the
// rows were planned from, so that `batch status` can plan them again from the
// manifests alone and check it was given the file the shards ran.
//
// A row's key hashes its wire request and its output file (manifest.ts), and
// those are made from the row's cells, the scene flags, the config's scene
// defaults and the output template; the cells are read as --format and
// --delimiter say. The record keeps each of those, the batch file's digest and
// row count, the shard and the version. Never the API key, the base URL or any
// other account setting: nothing here says who ran the batch or where.
//
// The line is `{"plan":1,…}`: it has no "key" or "status", so every reader of
// manifests written before it skips it, as it skips a torn line. "plan" is the
// record's own format: a reader meeting a later one leaves it aside and says so.
import { flagName } from '../api/enums.js';
import type { GenerationRequest } from '../api/schema.js';
import { buildGenerationRequest, type SceneDefaults, type SceneInput } from '../input/scene-request.js';
import { UsageError } from '../lifecycle/errors.js';
import { DEFAULTABLE_FIELDS, SCENE_FIELD_NAMES, sceneSpec, wirePath, type SceneField } from '../scene/vocabulary.js';
import type { BatchFormat } from './row-columns.js';
import type { Shard } from './shard.js';

/** The plan record's format, written as its "plan" field. */
export const PLAN_FORMAT = 1;

/** Everything that shapes a row's request and file name besides its cells. */
export interface PlanSettings {
  /** --output-template as given (or the default). */
  outputTemplate: string;
  /** How the file was read. */
  format: BatchFormat;
  /** CSV: the cell separator. */
  delimiter?: string;
  /** The scene flags as given on the command line. */
  scene: SceneInput;
  /** The config's scene defaults the run used (enum and boolean fields; a boolean without a default is left out). */
  sceneDefaults: Record<string, string | boolean>;
}

export interface PlanRecord {
  plan: number;
  /** The aerial version that planned the rows. */
  aerial: string;
  batch: {
    /** The batch file as named on the command line ("-" for standard input). */
    path: string;
    /** SHA-256 of its bytes, hex. */
    sha256: string;
    /** Rows it holds. */
    rows: number;
  };
  settings: PlanSettings;
  /** The shard this run did; absent for a run of every row. */
  shard?: Shard;
  time?: string;
}

export function planRecord(options: {
  version: string;
  batch: PlanRecord['batch'];
  outputTemplate: string;
  format: BatchFormat;
  delimiter?: string;
  scene: SceneInput;
  sceneDefaults: SceneDefaults;
  shard?: Shard;
}): PlanRecord {
  const sceneDefaults: Record<string, string | boolean> = {};
  for (const field of DEFAULTABLE_FIELDS) {
    const value = (options.sceneDefaults as Record<string, { value: unknown }>)[field]?.value;
    if (typeof value === 'string' || typeof value === 'boolean') sceneDefaults[field] = value;
  }
  const settings: PlanSettings = { outputTemplate: options.outputTemplate, format: options.format, scene: { ...options.scene }, sceneDefaults };
  if (options.format === 'csv' && options.delimiter !== undefined) settings.delimiter = options.delimiter;
  const record: PlanRecord = { plan: PLAN_FORMAT, aerial: options.version, batch: { ...options.batch }, settings };
  if (options.shard) record.shard = { index: options.shard.index, count: options.shard.count };
  return record;
}

/** Whether two records say the same of the same shard (their times aside): a resumed run need not write its record again. */
export function samePlan(a: PlanRecord | undefined, b: PlanRecord): boolean {
  if (!a) return false;
  const { time: _a, ...restA } = a;
  const { time: _b, ...restB } = b;
  return canonical(restA) === canonical(restB);
}

/** JSON with object keys sorted, so that key order never makes two equal values differ. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : inner,
  );
}

export type ParsedPlan = { ok: true; record: PlanRecord } | { ok: false; problem: string };

const SHA256 = /^[0-9a-f]{64}$/;
const FORMATS: readonly string[] = ['csv', 'jsonl', 'json'];
const DELIMITERS: readonly string[] = [',', ';', '\t', '|'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown, least: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= least;
}

/**
 * A plan line's value checked field by field: the record, or what is wrong
 * with it (a later format, a field missing or of the wrong kind). Fields it
 * does not know are left alone: a later version of the same format may add some.
 */
export function parsePlanRecord(value: unknown): ParsedPlan {
  const bad = (problem: string): ParsedPlan => ({ ok: false, problem });
  if (!isObject(value)) return bad('it is not a JSON object');
  if (!isCount(value.plan, 1)) return bad('its "plan" format is not a whole number from 1');
  if (value.plan > PLAN_FORMAT) return bad(`it is in plan format ${value.plan}, newer than this aerial reads (${PLAN_FORMAT}); upgrade aerial`);
  if (typeof value.aerial !== 'string') return bad('"aerial" (the version) is not text');
  const { batch, settings, shard } = value;
  if (!isObject(batch)) return bad('"batch" is not an object');
  if (typeof batch.path !== 'string' || batch.path === '') return bad('"batch.path" is not a file name');
  if (typeof batch.sha256 !== 'string' || !SHA256.test(batch.sha256)) return bad('"batch.sha256" is not a SHA-256 digest (64 hex digits)');
  if (!isCount(batch.rows, 1)) return bad('"batch.rows" is not a whole number from 1');
  if (!isObject(settings)) return bad('"settings" is not an object');
  if (typeof settings.outputTemplate !== 'string' || settings.outputTemplate === '') return bad('"settings.outputTemplate" is not a template');
  if (typeof settings.format !== 'string' || !FORMATS.includes(settings.format)) return bad('"settings.format" is not csv, jsonl or json');
  if (settings.delimiter !== undefined && (typeof settings.delimiter !== 'string' || !DELIMITERS.includes(settings.delimiter))) {
    return bad('"settings.delimiter" is not one of , ; | or a tab');
  }
  if (!isObject(settings.scene)) return bad('"settings.scene" is not an object');
  const known = new Set<string>(SCENE_FIELD_NAMES);
  for (const [field, given] of Object.entries(settings.scene)) {
    if (!known.has(field)) return bad(`"settings.scene" has a field this aerial does not know ('${field}')`);
    const kind = sceneSpec(field as (typeof SCENE_FIELD_NAMES)[number]).kind;
    const fits =
      kind === 'boolean'
        ? typeof given === 'boolean'
        : kind === 'list'
          ? Array.isArray(given) && given.every((item) => typeof item === 'string')
          : typeof given === 'string' || (kind === 'coordinate' && typeof given === 'number');
    if (!fits) return bad(`"settings.scene.${field}" is not a value --${flagName(field)} takes`);
  }
  if (!isObject(settings.sceneDefaults)) return bad('"settings.sceneDefaults" is not an object');
  const defaultable = new Set<string>(DEFAULTABLE_FIELDS);
  for (const [field, given] of Object.entries(settings.sceneDefaults)) {
    // A default this aerial does not know was set by a later one for a field its requests lack: left aside.
    if (!defaultable.has(field)) continue;
    const kind = sceneSpec(field as (typeof DEFAULTABLE_FIELDS)[number]).kind;
    if (kind === 'boolean' ? typeof given !== 'boolean' : typeof given !== 'string') return bad(`"settings.sceneDefaults.${field}" is not a ${kind === 'boolean' ? 'boolean' : 'text'}`);
  }
  if (shard !== undefined && !(isObject(shard) && isCount(shard.count, 1) && isCount(shard.index, 1) && shard.index <= shard.count)) {
    return bad('"shard" is not a shard k of n');
  }
  const record: PlanRecord = {
    plan: value.plan,
    aerial: value.aerial,
    batch: { path: batch.path, sha256: batch.sha256, rows: batch.rows },
    settings: {
      outputTemplate: settings.outputTemplate,
      format: settings.format as BatchFormat,
      scene: settings.scene as SceneInput,
      sceneDefaults: Object.fromEntries(Object.entries(settings.sceneDefaults).filter(([field]) => defaultable.has(field))) as Record<string, string | boolean>,
    },
  };
  if (settings.delimiter !== undefined) record.settings.delimiter = settings.delimiter as string;
  if (shard !== undefined) record.shard = { index: (shard as unknown as Shard).index, count: (shard as unknown as Shard).count };
  if (typeof value.time === 'string') record.time = value.time;
  return { ok: true, record };
}

/**
 * The scene defaults a record gives, as the planner takes them. A field the
 * record lacks (one a later aerial has and the shards' had not) keeps `own`,
 * the config's default here; a boolean it leaves out had no default.
 */
export function recordedDefaults(record: PlanRecord, own: SceneDefaults): SceneDefaults {
  const defaults: Record<string, { value: unknown }> = {};
  for (const field of DEFAULTABLE_FIELDS) {
    const recorded = record.settings.sceneDefaults[field];
    if (recorded !== undefined) defaults[field] = { value: recorded };
    else defaults[field] = sceneSpec(field).kind === 'boolean' ? { value: undefined } : { value: own[field].value };
  }
  return defaults as unknown as SceneDefaults;
}

/**
 * The request every row starts from (flags over config defaults, at 0,0):
 * two plans whose rows can differ in their requests differ here. Throws
 * UsageError when the recorded flags are not valid.
 */
export function baseRequest(scene: SceneInput, defaults: SceneDefaults): GenerationRequest {
  return buildGenerationRequest({ ...scene, lat: 0, lng: 0 }, defaults);
}

/** The scene fields two base requests disagree on (as they are sent: `tag` is sent as `tags`). */
export function requestDifferences(a: GenerationRequest, b: GenerationRequest): SceneField[] {
  const differ: SceneField[] = [];
  for (const field of SCENE_FIELD_NAMES) {
    const path = wirePath(field);
    if (path === undefined) continue;
    if (JSON.stringify(wireValue(a, path)) !== JSON.stringify(wireValue(b, path))) differ.push(field);
  }
  return differ;
}

/** The value at a dotted path of a request (coordinates.lat). */
export function wireValue(request: GenerationRequest, path: string): unknown {
  let value: unknown = request;
  for (const name of path.split('.')) value = value === undefined || value === null ? undefined : (value as Record<string, unknown>)[name];
  return value;
}

/** A setting two plan records disagree on, named as the user knows it, with each side's value. */
export interface SettingDifference {
  setting: string;
  a: string;
  b: string;
}

/** A request's value as a message shows it. */
export function shownValue(value: unknown): string {
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The settings two records disagree on in a way that changes the rows'
 * keys, or the batch: the batch file, the template, how the file is read,
 * the request the flags and defaults make, and the number of shards.
 */
export function planDifferences(a: PlanRecord, b: PlanRecord, own: SceneDefaults): SettingDifference[] {
  const differences: SettingDifference[] = [];
  if (a.batch.sha256 !== b.batch.sha256) {
    differences.push({ setting: 'batch file', a: `sha256 ${a.batch.sha256.slice(0, 12)}…, ${a.batch.rows} rows`, b: `sha256 ${b.batch.sha256.slice(0, 12)}…, ${b.batch.rows} rows` });
  }
  if (a.settings.outputTemplate !== b.settings.outputTemplate) differences.push({ setting: '--output-template', a: a.settings.outputTemplate, b: b.settings.outputTemplate });
  if (a.settings.format !== b.settings.format) differences.push({ setting: '--format', a: a.settings.format, b: b.settings.format });
  if ((a.settings.delimiter ?? ',') !== (b.settings.delimiter ?? ',')) {
    differences.push({ setting: '--delimiter', a: shownDelimiter(a.settings.delimiter), b: shownDelimiter(b.settings.delimiter) });
  }
  const requestA = settledRequest(a, own);
  const requestB = settledRequest(b, own);
  if (typeof requestA === 'string' || typeof requestB === 'string') {
    if (requestA !== requestB) differences.push({ setting: 'scene settings', a: typeof requestA === 'string' ? requestA : 'valid', b: typeof requestB === 'string' ? requestB : 'valid' });
  } else {
    for (const field of requestDifferences(requestA, requestB)) {
      const path = wirePath(field)!;
      differences.push({ setting: `--${flagName(field)}`, a: shownValue(wireValue(requestA, path)), b: shownValue(wireValue(requestB, path)) });
    }
  }
  if ((a.shard?.count ?? 1) !== (b.shard?.count ?? 1)) {
    differences.push({ setting: 'shard count', a: a.shard ? `${a.shard.index}/${a.shard.count}` : 'no --shard', b: b.shard ? `${b.shard.index}/${b.shard.count}` : 'no --shard' });
  }
  return differences;
}

function shownDelimiter(delimiter: string | undefined): string {
  return delimiter === '\t' ? 'tab' : `'${delimiter ?? ','}'`;
}

/** A record's base request, or why its settings make none. */
function settledRequest(record: PlanRecord, own: SceneDefaults): GenerationRequest | string {
  try {
    return baseRequest(record.settings.scene, recordedDefaults(record, own));
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}
