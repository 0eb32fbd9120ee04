// Configuration: where it lives, its profiles, and how flags, environment,
// profile and built-in defaults combine (flag > environment > profile > default).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import envPaths from 'env-paths';
import { flagName, parseSceneEnum, SCENE_DEFAULTS, SCENE_ENUM_FIELDS, type SceneEnumField } from './api/enums.js';
import { UsageError } from './api/errors.js';
import { nearest } from './suggest.js';

export const DEFAULT_PROFILE = 'default';
export const CONFIG_FILE_NAME = 'config.json';

export const BOOLEAN_SCENE_FIELDS = ['includeContext', 'includeSurroundings', 'improveOutput', 'saveImage'] as const;
export type BooleanSceneField = (typeof BOOLEAN_SCENE_FIELDS)[number];

export interface ProfileData {
  apiKey?: string;
  baseUrl?: string;
  defaults?: Partial<Record<SceneEnumField, string>> & Partial<Record<BooleanSceneField, boolean>>;
}

export interface ConfigData {
  profiles?: Record<string, ProfileData>;
}

export type Layer = 'flag' | 'env' | 'profile' | 'default';

export interface Resolved<T> {
  value: T;
  source: Layer;
}

export function configDir(env: Record<string, string | undefined>): string {
  return env.AERIAL_CONFIG_DIR || envPaths('aerial', { suffix: '' }).config;
}

export function configPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), CONFIG_FILE_NAME);
}

/**
 * Reads the config file with a plain JSON parse. Writes go through `conf`
 * (atomic, mode 0600), but reading needs none of its validation machinery,
 * which costs tens of milliseconds of startup on every command.
 */
export function readConfig(env: Record<string, string | undefined>): ConfigData {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read config file ${path}: ${(error as Error).message}`, 'ConfigError');
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UsageError(`config file ${path} is not valid JSON; fix or delete it`, 'ConfigError');
  }
  const problem = configShapeProblem(data);
  if (problem) throw new UsageError(`config file ${path}: ${problem}; fix it or use 'aerial config set'`, 'ConfigError');
  return data as ConfigData;
}

/**
 * The file is edited by hand too; a value of the wrong type is reported with its
 * path rather than crashing a command later. (A plain check: zod costs startup.)
 */
export function configShapeProblem(data: unknown): string | undefined {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(data)) return 'the top level must be an object';
  if (data.profiles === undefined) return undefined;
  if (!isObject(data.profiles)) return 'profiles must be an object';
  for (const [name, profile] of Object.entries(data.profiles)) {
    if (!isObject(profile)) return `profiles.${name} must be an object`;
    for (const field of ['apiKey', 'baseUrl'] as const) {
      if (profile[field] !== undefined && typeof profile[field] !== 'string') return `profiles.${name}.${field} must be a string`;
    }
    if (profile.defaults === undefined) continue;
    if (!isObject(profile.defaults)) return `profiles.${name}.defaults must be an object`;
    for (const [field, value] of Object.entries(profile.defaults)) {
      const expected = (BOOLEAN_SCENE_FIELDS as readonly string[]).includes(field) ? 'boolean' : 'string';
      if (typeof value !== expected) return `profiles.${name}.defaults.${field} must be a ${expected}`;
    }
  }
  return undefined;
}

export interface GlobalFlags {
  apiKey?: string;
  baseUrl?: string;
  profile?: string;
}

export interface Settings {
  profile: Resolved<string>;
  apiKey: Resolved<string | undefined>;
  baseUrl: Resolved<string | undefined>;
  /** Scene defaults after profile and built-ins; flags are applied by the command. */
  sceneDefaults: { [K in SceneEnumField]: Resolved<string> } & {
    [K in BooleanSceneField]: Resolved<boolean | undefined>;
  };
}

function pick<T>(flag: T | undefined, envValue: T | undefined, profileValue: T | undefined, fallback: T): Resolved<T> {
  if (flag !== undefined) return { value: flag, source: 'flag' };
  if (envValue !== undefined) return { value: envValue, source: 'env' };
  if (profileValue !== undefined) return { value: profileValue, source: 'profile' };
  return { value: fallback, source: 'default' };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

export function resolveSettings(flags: GlobalFlags, env: Record<string, string | undefined>, config: ConfigData): Settings {
  const profile = pick(nonEmpty(flags.profile), nonEmpty(env.AERIAL_PROFILE), undefined, DEFAULT_PROFILE);
  const data = config.profiles?.[profile.value] ?? {};
  if (profile.source !== 'default' && !config.profiles?.[profile.value]) {
    // Naming a profile that does not exist is almost always a typo; say so rather than run unconfigured.
    const known = Object.keys(config.profiles ?? {});
    throw new UsageError(
      `profile '${profile.value}' does not exist${known.length ? ` (profiles: ${known.join(', ')})` : ''}; create it with 'aerial config set api-key --profile ${profile.value}'`,
    );
  }
  const defaults = data.defaults ?? {};
  const sceneDefaults = {} as Settings['sceneDefaults'];
  for (const field of SCENE_ENUM_FIELDS) {
    let stored = defaults[field];
    if (stored !== undefined) {
      // A hand-edited value is held to the same rules as `config set`, and the error says where it came from.
      const parsed = parseSceneEnum(field, stored, `config defaults.${flagName(field)} (profile ${profile.value})`);
      if (!parsed.ok) throw new UsageError(parsed.message, 'ConfigError');
      stored = parsed.value;
    }
    (sceneDefaults as Record<string, Resolved<unknown>>)[field] = pick(undefined, undefined, stored, SCENE_DEFAULTS[field]);
  }
  for (const field of BOOLEAN_SCENE_FIELDS) {
    (sceneDefaults as Record<string, Resolved<unknown>>)[field] = pick(undefined, undefined, defaults[field], undefined);
  }
  return {
    profile,
    apiKey: pick(nonEmpty(flags.apiKey), nonEmpty(env.AERIAL_API_KEY), nonEmpty(data.apiKey), undefined),
    baseUrl: pick(nonEmpty(flags.baseUrl), nonEmpty(env.AERIAL_BASE_URL), nonEmpty(data.baseUrl), undefined),
    sceneDefaults,
  };
}

/** The user-facing config keys: api-key, base-url, defaults.<scene flag>. */
export type ConfigKey =
  | { kind: 'apiKey'; name: 'api-key' }
  | { kind: 'baseUrl'; name: 'base-url' }
  | { kind: 'enumDefault'; name: string; field: SceneEnumField }
  | { kind: 'booleanDefault'; name: string; field: BooleanSceneField };

export function configKeys(): ConfigKey[] {
  return [
    { kind: 'apiKey', name: 'api-key' },
    { kind: 'baseUrl', name: 'base-url' },
    ...SCENE_ENUM_FIELDS.map((field) => ({ kind: 'enumDefault' as const, name: `defaults.${flagName(field)}`, field })),
    ...BOOLEAN_SCENE_FIELDS.map((field) => ({ kind: 'booleanDefault' as const, name: `defaults.${flagName(field)}`, field })),
  ];
}

export function parseConfigKey(input: string): ConfigKey {
  const normalized = input.trim().replace(/^defaults\.(.*)$/, (_, rest: string) => `defaults.${flagName(rest)}`).toLowerCase();
  const aliases: Record<string, string> = { apikey: 'api-key', api_key: 'api-key', baseurl: 'base-url', base_url: 'base-url' };
  const key = configKeys().find((k) => k.name === (aliases[normalized] ?? normalized));
  if (!key) {
    const names = configKeys().map((k) => k.name);
    const suggestion = nearestKey(normalized, names);
    throw new UsageError(`unknown config key '${input}'${suggestion ? ` (did you mean ${suggestion}?)` : ''}; keys: ${names.join(', ')}`);
  }
  return key;
}

/** The key (or keys) a typo or a cut-short name was meant to be, with or without its "defaults." (zoom → defaults.zoom). */
function nearestKey(typed: string, names: string[]): string | undefined {
  const bare = (name: string) => name.replace(/^defaults\./, '');
  const short = names.map(bare);
  const started = names.filter((name) => bare(name).startsWith(bare(typed)));
  if (typed !== '' && started.length > 0 && started.length <= 3) return started.join(' or ');
  // Measured without "defaults.", which would make any two scene keys look alike.
  const match = nearest(bare(typed), short);
  return match === undefined ? undefined : names[short.indexOf(match)];
}

/** Validates a value for a key and returns what is stored. */
export function parseConfigValue(key: ConfigKey, raw: string): string | boolean {
  switch (key.kind) {
    case 'apiKey':
      if (!raw.trim()) throw new UsageError('api-key must not be empty');
      if (/\s/.test(raw.trim())) throw new UsageError('api-key must not contain whitespace');
      return raw.trim();
    case 'baseUrl':
      return validateBaseUrl(raw.trim(), 'base-url');
    case 'enumDefault': {
      const parsed = parseSceneEnum(key.field, raw, key.name);
      if (!parsed.ok) throw new UsageError(parsed.message);
      return parsed.value;
    }
    case 'booleanDefault': {
      const value = raw.trim().toLowerCase();
      if (['true', 'yes', '1', 'on'].includes(value)) return true;
      if (['false', 'no', '0', 'off'].includes(value)) return false;
      throw new UsageError(`${key.name} must be true or false; got '${raw}'`);
    }
  }
}

export function validateBaseUrl(raw: string, label: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${label} must be an absolute http(s) URL; got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${label} must be an absolute http(s) URL; got '${raw}'`);
  }
  if (url.username || url.password) throw new UsageError(`${label} must not contain credentials`);
  return url.toString().replace(/\/+$/, '');
}

/** Shows enough of a key to recognise it, never enough to use it. */
export function maskKey(key: string | undefined): string {
  if (!key) return '(not set)';
  if (key.length <= 8) return '****';
  return `${key.slice(0, 4)}…${key.slice(-2)} (${key.length} chars)`;
}

/** Opens the config file for writing through conf: atomic writes, mode 0600. */
export async function openConfigStore(env: Record<string, string | undefined>) {
  const { default: Conf } = await import('conf');
  return new Conf<ConfigData>({
    cwd: configDir(env),
    configName: 'config',
    projectName: 'aerial',
    projectSuffix: '',
    configFileMode: 0o600,
    accessPropertiesByDotNotation: false,
  });
}
