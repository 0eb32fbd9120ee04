// The scene vocabulary: every field of a generation request a user can set,
// in one table. The request schema, the command-line options and their help,
// the mapping from flags to the request, the batch columns, the config keys,
// the interactive prompts, the completions, the image metadata and the
// property-test model are all derived from it, so a field is added here and
// nowhere else. Kept light, with no dependency but the typo suggester (no
// zod): every command's registration, the config, the completions and the
// sandbox read it.
import { nearest } from '../text/suggest.js';

/**
 * What a field holds, which decides how each place handles it:
 * - coordinate: a number in `range` (lat, lng), nested in the wire body's `coordinates`;
 * - location: both coordinates in one value ("LAT,LNG", a geo: URI, or a place's name), an alternative to them;
 * - enum: one of `values`, accepted in any case and with any separators;
 * - boolean: `--flag` and `--no-flag`; left out of the request when not given (the service decides);
 * - list: a repeatable flag, a `a;b` or `a|b` cell in a batch file;
 * - text: free text, not empty.
 */
export type SceneFieldKind = 'coordinate' | 'location' | 'enum' | 'boolean' | 'list' | 'text';

interface FieldSpec {
  kind: SceneFieldKind;
  /** The flag's help (for a boolean, of `--flag`); each kind adds its own facts (values, default, range). */
  help: string;
  /**
   * The batch column names `batch --help` shows, in camelCase and where wanted
   * kebab-case (default: the field's name). A column matching any of them, or
   * the field's name, ignoring case, `-`, `_` and spaces, sets the field.
   */
  columns?: readonly string[];
  /** Named as name=value in the scene description every saved image carries (EXIF ImageDescription and UserComment, XMP). */
  describe: boolean;
}

export interface CoordinateSpec extends FieldSpec {
  kind: 'coordinate';
  /** Dotted path in the request body. */
  wire: `coordinates.${string}`;
  placeholder: string;
  /** What the CLI accepts. */
  range: readonly [min: number, max: number];
  /** Whether the spec sets that range too, so the request schema (and the sandbox) hold requests to it. */
  specRange: boolean;
}

export interface LocationSpec extends FieldSpec {
  kind: 'location';
  placeholder: string;
}

export interface EnumSpec extends FieldSpec {
  kind: 'enum';
  /** Exactly as the spec spells them on the wire. */
  values: readonly [string, ...string[]];
  /** Sent when neither a flag, a batch cell nor the config names a value. */
  default: string;
  /** Other accepted spellings (any case), by the value they stand for. */
  aliases?: Readonly<Record<string, string>>;
  /** The question `generate --interactive` and `init` ask for it. */
  prompt: string;
}

export interface BooleanSpec extends FieldSpec {
  kind: 'boolean';
  /** The help of `--no-flag`. */
  offHelp: string;
}

export interface ListSpec extends FieldSpec {
  kind: 'list';
  /** The body's name for the list (the flag names one entry). */
  wire: string;
  placeholder: string;
  /** The most entries a request may have. */
  max: number;
}

export interface TextSpec extends FieldSpec {
  kind: 'text';
  placeholder: string;
}

export type SceneFieldSpec = CoordinateSpec | LocationSpec | EnumSpec | BooleanSpec | ListSpec | TextSpec;

/**
 * Keyed by the field's name, which is also its wire name (unless `wire` says
 * otherwise) and commander's name for its flag: the flag is the name in
 * kebab-case (aspectRatio → --aspect-ratio). Enum and boolean fields have a
 * config key, `defaults.<flag>`. The order is the order of the help, of the
 * wire body's keys, and of the scene description in the image metadata. A
 * batch manifest keys its rows by a hash of the body: reordering the fields, or
 * adding one that is always sent (an enum), has a re-run send every row again.
 */
export const SCENE_FIELDS = {
  lat: {
    kind: 'coordinate',
    wire: 'coordinates.lat',
    placeholder: 'degrees',
    help: 'latitude',
    range: [-90, 90],
    specRange: true,
    // The list endpoint's own name for it.
    columns: ['lat', 'latitude'],
    describe: true,
  },
  lng: {
    kind: 'coordinate',
    wire: 'coordinates.lng',
    placeholder: 'degrees',
    help: 'longitude',
    range: [-180, 180],
    specRange: false,
    columns: ['lng', 'lon', 'longitude'],
    describe: true,
  },
  at: {
    kind: 'location',
    placeholder: 'place',
    help: 'location as "LAT,LNG", a geo: URI or a place name ("Paris, FR", looked up offline), instead of --lat/--lng',
    // A spreadsheet's column of place names; beside lat/lng columns it is only a label.
    columns: ['at', 'place'],
    describe: false,
  },
  resolution: {
    kind: 'enum',
    values: ['HD', 'FHD', 'UHD'],
    default: 'FHD',
    help: 'output resolution',
    prompt: 'Resolution',
    describe: true,
  },
  zoom: {
    kind: 'enum',
    values: ['ExtraLow', 'Low', 'Medium', 'High', 'ExtraHigh'],
    default: 'Medium',
    help: 'how close the camera is',
    prompt: 'Zoom',
    describe: true,
  },
  bearing: {
    kind: 'enum',
    values: ['North', 'NorthEast', 'East', 'SouthEast', 'South', 'SouthWest', 'West', 'NorthWest'],
    default: 'North',
    // The abbreviated compass points the spec's introductory sample uses.
    aliases: { N: 'North', NE: 'NorthEast', E: 'East', SE: 'SouthEast', S: 'South', SW: 'SouthWest', W: 'West', NW: 'NorthWest' },
    help: 'compass direction the camera faces (also N, NE, E, …)',
    prompt: 'Camera faces',
    describe: true,
  },
  angle: {
    kind: 'enum',
    values: ['Low', 'Medium', 'High', 'Top'],
    default: 'High',
    help: 'camera angle from the ground',
    prompt: 'Camera angle',
    describe: true,
  },
  weather: {
    kind: 'enum',
    values: ['Sunny', 'Rainy', 'Cloudy', 'GoldenHour', 'Snow'],
    default: 'Sunny',
    help: 'weather in the scene',
    prompt: 'Weather',
    describe: true,
  },
  daytime: {
    kind: 'enum',
    values: ['Dusk', 'Day', 'Dawn', 'Night'],
    default: 'Day',
    help: 'time of day',
    prompt: 'Time of day',
    describe: true,
  },
  aspectRatio: {
    kind: 'enum',
    values: ['Square', 'Landscape', 'Portrait', 'Standard'],
    default: 'Landscape',
    help: 'image shape',
    prompt: 'Aspect ratio',
    columns: ['aspectRatio', 'aspect-ratio'],
    describe: true,
  },
  epoch: {
    kind: 'enum',
    values: ['Nowadays', 'Historical', 'Ancient'],
    default: 'Nowadays',
    help: 'era the scene depicts',
    prompt: 'Epoch',
    describe: true,
  },
  includeContext: {
    kind: 'boolean',
    help: 'landmark-specific enhancement for recognised locations',
    offHelp: 'turn landmark enhancement off',
    describe: true,
  },
  includeSurroundings: {
    kind: 'boolean',
    help: 'include the surrounding area (the service default)',
    offHelp: 'leave out the surrounding area',
    describe: true,
  },
  improveOutput: {
    kind: 'boolean',
    help: 'apply quality enhancement',
    offHelp: 'turn quality enhancement off',
    describe: true,
  },
  saveImage: {
    kind: 'boolean',
    help: 'keep the image in your history (the service default)',
    offHelp: 'do not keep the image in your history',
    // Where the account keeps the image, not what the image shows.
    describe: false,
  },
  tag: {
    kind: 'list',
    wire: 'tags',
    placeholder: 'tag',
    help: 'descriptive tag, repeatable',
    max: 10,
    columns: ['tags'],
    // Written as XMP keywords (dc:subject) instead.
    describe: false,
  },
  prompt: {
    kind: 'text',
    placeholder: 'text',
    help: 'custom enhancement instructions',
    // Appended to the XMP description instead: it can be long, and EXIF's fields are ASCII.
    describe: false,
  },
} as const satisfies Record<string, SceneFieldSpec>;

export type SceneFields = typeof SCENE_FIELDS;
export type SceneField = keyof SceneFields;

/** The fields of one kind, as a type ('resolution' | 'zoom' | …). */
export type SceneFieldOfKind<K extends SceneFieldKind> = {
  [F in SceneField]: SceneFields[F]['kind'] extends K ? F : never;
}[SceneField];

export type CoordinateField = SceneFieldOfKind<'coordinate'>;
export type LocationField = SceneFieldOfKind<'location'>;
export type EnumField = SceneFieldOfKind<'enum'>;
export type BooleanField = SceneFieldOfKind<'boolean'>;
export type ListField = SceneFieldOfKind<'list'>;
export type TextField = SceneFieldOfKind<'text'>;
/** Fields whose default the config can hold. */
export type DefaultableField = EnumField | BooleanField;

/** The values an enum field allows, as a type. */
export type EnumValue<F extends EnumField> = SceneFields[F]['values'][number];

export const SCENE_FIELD_NAMES = Object.keys(SCENE_FIELDS) as SceneField[];

/** The fields of the given kinds, in the vocabulary's order. */
export function fieldsOfKind<K extends SceneFieldKind>(...kinds: K[]): Array<SceneFieldOfKind<K>> {
  return SCENE_FIELD_NAMES.filter((field) => (kinds as SceneFieldKind[]).includes(SCENE_FIELDS[field].kind)) as Array<SceneFieldOfKind<K>>;
}

export const ENUM_FIELDS = fieldsOfKind('enum');
export const BOOLEAN_FIELDS = fieldsOfKind('boolean');
/** The fields that say where: generate and generate-async take them as flags, a batch only from its columns. */
export const LOCATION_FIELDS = fieldsOfKind('coordinate', 'location');
/** The fields whose default the config holds, as `defaults.<flag>`: the enums' instead of the built-in one, the booleans' instead of the service's. */
export const DEFAULTABLE_FIELDS = fieldsOfKind('enum', 'boolean');

export function sceneSpec(field: SceneField): SceneFieldSpec {
  return SCENE_FIELDS[field];
}

export function isSceneField(name: string): name is SceneField {
  return Object.hasOwn(SCENE_FIELDS, name);
}

const flagNames = new Map<string, string>();

/** Kebab-case flag name of a field (aspectRatio → aspect-ratio). */
export function flagName(field: string): string {
  let name = flagNames.get(field);
  if (name === undefined) {
    name = field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    // Remembered for the names of fields only: a batch asks for them for every row.
    if (isSceneField(field)) flagNames.set(field, name);
  }
  return name;
}

/** Where a field goes in the request body, as a dotted path (undefined: it does not, as --at). */
export function wirePath(field: SceneField): string | undefined {
  const spec = sceneSpec(field);
  if (spec.kind === 'location') return undefined;
  return 'wire' in spec ? spec.wire : field;
}

/** A field's value in a request body (undefined when absent, or for a field that is not sent). */
export function readWire(body: object, field: SceneField): unknown {
  return wirePath(field)
    ?.split('.')
    .reduce<unknown>((at, name) => (at as Record<string, unknown> | undefined)?.[name], body);
}

const wireNames = new Map<SceneField, string[] | undefined>();

/** Puts a field's value in a request body at its wire path, making the objects on the way (coordinates). */
export function writeWire(body: Record<string, unknown>, field: SceneField, value: unknown): void {
  if (!wireNames.has(field)) wireNames.set(field, wirePath(field)?.split('.'));
  const names = wireNames.get(field);
  if (!names) return;
  let target = body;
  for (let i = 0; i < names.length - 1; i++) target = (target[names[i]!] ??= {}) as Record<string, unknown>;
  target[names[names.length - 1]!] = value;
}

/** The config key that holds a field's default. */
export function configKeyOf(field: DefaultableField): string {
  return `defaults.${flagName(field)}`;
}

/** The batch column names that set a field: those the help shows, and the field's own name. */
export function columnNames(field: SceneField): readonly string[] {
  const shown = sceneSpec(field).columns ?? [field];
  return shown.includes(field) ? shown : [...shown, field];
}

export type EnumParse<T extends string> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Maps user input to the documented wire form of an enum field: case-insensitive,
 * separators ignored (north-east, NORTH_EAST), and the field's aliases (bearings
 * as N/NE/…); the failure message names the flag, lists the allowed values and
 * suggests the nearest one.
 */
export function parseSceneEnum<F extends EnumField>(field: F, input: string, flag = `--${flagName(field)}`): EnumParse<EnumValue<F>> {
  const { values: allowed, aliases = {} } = sceneSpec(field) as EnumSpec;
  const squashed = input.trim().replace(/[\s_-]/g, '').toLowerCase();
  const match = allowed.find((value) => value.toLowerCase() === squashed);
  if (match) return { ok: true, value: match as EnumValue<F> };
  const alias = Object.keys(aliases).find((name) => name.toUpperCase() === input.trim().toUpperCase());
  if (alias) return { ok: true, value: aliases[alias] as EnumValue<F> };
  const suggestion = nearest(squashed, allowed);
  const hint = suggestion ? ` (did you mean ${suggestion}?)` : '';
  return { ok: false, message: `${flag} must be one of ${allowed.join(', ')}; got '${input}'${hint}` };
}
