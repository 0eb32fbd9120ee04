// Configuration: where it lives, its profiles, and how flags, environment,
// profile and built-in defaults combine (flag > environment > profile > default).
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import envPaths from 'env-paths';
import { CliError, fileSystemProblem, UsageError } from '../lifecycle/errors.js';
import {
  configKeyOf,
  DEFAULTABLE_FIELDS,
  flagName,
  parseSceneEnum,
  isSceneField,
  SCENE_FIELDS,
  sceneSpec,
  type BooleanField,
  type DefaultableField,
  type EnumField,
} from '../scene/vocabulary.js';
import { DEFAULT_BASE_URL } from '../api/spec.js';
import { parseSwitch, validateBaseUrl } from '../input/flags.js';
import { nearest } from '../text/suggest.js';

export const DEFAULT_PROFILE = 'default';
export { DEFAULT_BASE_URL };
export const CONFIG_FILE_NAME = 'config.json';

export interface ProfileData {
  apiKey?: string;
  baseUrl?: string;
  /** Scene defaults by field name (an enum's value, or a boolean), and whether generate shows a preview. */
  defaults?: Partial<Record<EnumField, string>> & Partial<Record<BooleanField, boolean>> & { [PREVIEW_FIELD]?: boolean };
}

/** Where `defaults.preview` is kept among the scene defaults: `generate --preview` unless --no-preview. */
export const PREVIEW_FIELD = 'preview';


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

/**
 * Where aerial keeps data that is not configuration: `$XDG_DATA_HOME/aerial`
 * (`~/.local/share/aerial`) on Linux and other Unixes, the platform's own
 * place on macOS and Windows. Read from `env`, not from this process's.
 */
export function dataDir(env: Record<string, string | undefined>): string {
  if (process.platform === 'darwin' || process.platform === 'win32') return envPaths('aerial', { suffix: '' }).data;
  const xdg = env.XDG_DATA_HOME;
  // The XDG rule: a relative path is to be ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'aerial');
}

/**
 * Where the CLI keeps the sandbox's accounts and images (aerial sandbox,
 * --sandbox): with its data, not its configuration, which people keep in
 * dotfiles and sync (the images grow to tens of megabytes).
 */
export function defaultSandboxDir(env: Record<string, string | undefined>): string {
  return join(dataDir(env), 'sandbox');
}

/**
 * Moves the sandbox's data from where earlier versions kept it (the config
 * directory) to defaultSandboxDir, once: only when it is there and nothing is
 * at the new place yet. Says where it moved it from, or undefined.
 */
export async function moveOldSandboxData(env: Record<string, string | undefined>): Promise<string | undefined> {
  const from = join(configDir(env), 'sandbox');
  const to = defaultSandboxDir(env);
  if (from === to) return undefined;
  const { cp, lstat, rename, rm } = await import('node:fs/promises');
  const exists = (path: string) => lstat(path).then(() => true, () => false);
  if (!(await exists(from)) || (await exists(to))) return undefined;
  const { makeDirectories } = await import('../files/directories.js');
  await makeDirectories(dirname(to), 0o700);
  try {
    await rename(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another process moved it first.
    if (code === 'ENOENT' || code === 'EEXIST' || code === 'ENOTEMPTY') return undefined;
    if (code !== 'EXDEV') throw error;
    // Another disk: copied beside the target and renamed into place, so a half copy is never taken for the data.
    const staging = `${to}.moving-${process.pid}`;
    await cp(from, staging, { recursive: true, errorOnExist: true, force: false });
    await rename(staging, to);
    await rm(from, { recursive: true, force: true });
  }
  return from;
}

export function configPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), CONFIG_FILE_NAME);
}

/**
 * Reads the config file with a plain JSON parse and a shape check. A file
 * that is not valid JSON, or holds a value of the wrong type, is an error
 * naming the file and the problem: it is never silently replaced. Anything
 * but a regular file in its place (a FIFO would block the open for ever, even
 * through SIGTERM; a device may never end) is refused before it is opened.
 */
export function readConfig(env: Record<string, string | undefined>, onWarning?: (message: string) => void): ConfigData {
  const path = configPath(env);
  let text: string;
  let mode = 0o600;
  try {
    const info = statSync(path);
    if (!info.isFile()) throw notRegularFile(path, info);
    // Non-blocking, in case something else was put there since: the check below then refuses it at once.
    const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    try {
      const opened = fstatSync(fd);
      if (!opened.isFile()) throw notRegularFile(path, opened);
      mode = opened.mode;
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw configFileError(error, path, 'read') ?? error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`config file ${path} is not valid JSON (${(error as Error).message}); fix or delete it`, 'ConfigError');
  }
  const problem = configShapeProblem(data);
  if (problem) throw new UsageError(`config file ${path}: ${problem}; fix it or use 'aerial config set'`, 'ConfigError');
  const config = data as ConfigData;
  // As ssh warns of a private key others can read (Windows has no such mode bits).
  if (onWarning && process.platform !== 'win32' && (mode & 0o044) !== 0 && holdsApiKey(config)) {
    onWarning(`config file ${path} holds an API key and other users can read it (mode ${(mode & 0o777).toString(8).padStart(4, '0')}); fix it with: chmod 600 ${path}`);
  }
  return config;
}

function holdsApiKey(config: ConfigData): boolean {
  return Object.values(config.profiles ?? {}).some((profile) => typeof profile.apiKey === 'string' && profile.apiKey !== '');
}

function notRegularFile(path: string, info: Stats): UsageError {
  const what = info.isDirectory()
    ? 'a directory'
    : info.isFIFO()
      ? 'a FIFO (named pipe)'
      : info.isCharacterDevice()
        ? 'a character device'
        : info.isBlockDevice()
          ? 'a block device'
          : info.isSocket()
            ? 'a socket'
            : 'not a regular file';
  return new UsageError(`cannot read config file ${path}: it is ${what}, not a regular file; move it out of the way, or set AERIAL_CONFIG_DIR to another directory`, 'ConfigError');
}

/**
 * A file-system failure on the config file as one line: what failed, where,
 * and what fixes it. Undefined for what is not a system error (a bug).
 * `where` is the file as the user knows it (with the file behind a link).
 */
function configFileError(error: unknown, where: string, doing: 'read' | 'write'): UsageError | undefined {
  const { code, message } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string' || !/^E[A-Z0-9]+$/.test(code)) return undefined;
  // A code without a meaning of our own keeps the system's words: "EBUSY: resource busy or locked".
  const problem = fileSystemProblem(error) ?? String(message).split(',')[0];
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'free some space there, or set AERIAL_CONFIG_DIR to a directory on another disk'
      : doing === 'read'
        ? code === 'EACCES' || code === 'EPERM'
          ? 'fix its permissions, or set AERIAL_CONFIG_DIR to another directory'
          : 'set AERIAL_CONFIG_DIR to another directory'
        : 'set AERIAL_CONFIG_DIR to a directory you can write';
  return new UsageError(`cannot ${doing} config file ${where}: ${problem} (${fix})`, 'ConfigError');
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
      const expected = field === PREVIEW_FIELD || (isSceneField(field) && SCENE_FIELDS[field].kind === 'boolean') ? 'boolean' : 'string';
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
  baseUrl: Resolved<string>;
  /** Scene defaults after profile and built-ins; flags are applied by the command. */
  sceneDefaults: { [F in EnumField]: Resolved<string> } & {
    [F in BooleanField]: Resolved<boolean | undefined>;
  };
  /** Whether generate and generate-async --listen show the saved image on a terminal (defaults.preview). */
  preview: Resolved<boolean>;
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

/**
 * Profile names: letters, digits, '-' and '_', starting with a letter or digit.
 * No separators (a name is a key in the file, and shown in messages), and none
 * of the names every JavaScript object already has (`constructor`, `__proto__`,
 * `toString`…), which would read as a profile that is not there or store nothing.
 */
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const RESERVED_PROFILE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

export function checkProfileName(name: string, label: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`${label} must be 1 to 64 letters, digits, '-' or '_', starting with a letter or digit; got ${JSON.stringify(name)}`);
  }
  if (RESERVED_PROFILE_NAMES.has(name)) throw new UsageError(`${label} '${name}' is reserved; choose another profile name`);
  return name;
}

/**
 * The profile a command uses (flag > environment > default), its name checked.
 * An empty name is refused, not taken as the default: `--profile "$UNSET"` in a
 * script must not act on the main account.
 */
export function selectedProfile(flags: GlobalFlags, env: Record<string, string | undefined>): Resolved<string> {
  const profile = pick(flags.profile, env.AERIAL_PROFILE, undefined, DEFAULT_PROFILE);
  if (profile.source === 'default') return profile;
  const label = profile.source === 'flag' ? '--profile' : 'AERIAL_PROFILE';
  if (profile.value === '') {
    const leaveOut = profile.source === 'flag' ? 'leave --profile out' : 'unset AERIAL_PROFILE';
    throw new UsageError(`${label} is empty; name a profile, or ${leaveOut} for the default one`);
  }
  checkProfileName(profile.value, label);
  return profile;
}

/** A profile stored in the file, looked up as the file's own key only. */
export function profileOf(config: ConfigData, name: string): ProfileData | undefined {
  return config.profiles && Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined;
}

export function resolveSettings(flags: GlobalFlags, env: Record<string, string | undefined>, config: ConfigData): Settings {
  const profile = selectedProfile(flags, env);
  const data = profileOf(config, profile.value) ?? {};
  if (profile.source !== 'default' && !profileOf(config, profile.value)) {
    // Naming a profile that does not exist is almost always a typo; say so rather than run unconfigured.
    const known = Object.keys(config.profiles ?? {});
    throw new UsageError(
      `profile '${profile.value}' does not exist${known.length ? ` (profiles: ${known.join(', ')})` : ''}; create it with 'aerial config set api-key --profile ${profile.value}'`,
    );
  }
  const defaults = data.defaults ?? {};
  const sceneDefaults = {} as Record<DefaultableField, Resolved<unknown>>;
  for (const field of DEFAULTABLE_FIELDS) {
    const spec = sceneSpec(field);
    let stored = defaults[field];
    if (spec.kind === 'enum' && stored !== undefined) {
      // A hand-edited value is held to the same rules as `config set`, and the error says where it came from.
      const parsed = parseSceneEnum(field as EnumField, stored as string, `config ${configKeyOf(field)} (profile ${profile.value})`);
      if (!parsed.ok) throw new UsageError(parsed.message, 'ConfigError');
      stored = parsed.value;
    }
    sceneDefaults[field] = pick(undefined, undefined, stored, spec.kind === 'enum' ? spec.default : undefined);
  }
  return {
    profile,
    apiKey: pick(nonEmpty(flags.apiKey), nonEmpty(env.AERIAL_API_KEY), nonEmpty(data.apiKey), undefined),
    baseUrl: pick(nonEmpty(flags.baseUrl), nonEmpty(env.AERIAL_BASE_URL), nonEmpty(data.baseUrl), DEFAULT_BASE_URL),
    sceneDefaults: sceneDefaults as Settings['sceneDefaults'],
    preview: pick(undefined, undefined, defaults[PREVIEW_FIELD], false),
  };
}

/** The user-facing config keys: api-key, base-url, defaults.<scene flag>, defaults.preview. */
export type ConfigKey =
  | { kind: 'apiKey'; name: 'api-key' }
  | { kind: 'baseUrl'; name: 'base-url' }
  | { kind: 'enumDefault'; name: string; field: EnumField }
  | { kind: 'booleanDefault'; name: string; field: BooleanField }
  | { kind: 'previewDefault'; name: `defaults.${typeof PREVIEW_FIELD}`; field: typeof PREVIEW_FIELD };

export function configKeys(): ConfigKey[] {
  return [
    { kind: 'apiKey', name: 'api-key' },
    { kind: 'baseUrl', name: 'base-url' },
    ...DEFAULTABLE_FIELDS.map((field): ConfigKey =>
      SCENE_FIELDS[field].kind === 'enum'
        ? { kind: 'enumDefault', name: configKeyOf(field), field: field as EnumField }
        : { kind: 'booleanDefault', name: configKeyOf(field), field: field as BooleanField },
    ),
    { kind: 'previewDefault', name: `defaults.${PREVIEW_FIELD}`, field: PREVIEW_FIELD },
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

/** Characters pasted keys bring along unseen, by name: the user must know what to look for. */
const CHARACTER_NAMES: Record<string, string> = {
  ' ': 'a space',
  '\t': 'a tab',
  '\n': 'a line break',
  '\r': 'a carriage return',
  '\u00a0': 'a no-break space',
  '\u00ad': 'a soft hyphen',
  '\u200b': 'a zero-width space',
  '\u200c': 'a zero-width non-joiner',
  '\u200d': 'a zero-width joiner',
  '\u2060': 'a word joiner',
  '\ufeff': 'a byte order mark (zero-width no-break space)',
  '\u202f': 'a narrow no-break space',
  '\u2018': 'a typographic quote',
  '\u2019': 'a typographic quote',
  '\u201c': 'a typographic quote',
  '\u201d': 'a typographic quote',
  '\u2013': 'an en dash',
  '\u2014': 'an em dash',
};

/**
 * What, in an API key (already trimmed), no HTTP header can carry or no key
 * holds: a key is printable ASCII without spaces. Named with its place, never
 * shown with the key around it (a secret). Undefined when the key is usable.
 * Found where the key is set (prompt, stdin, --api-key, AERIAL_API_KEY), not
 * later as a network error of every call.
 */
export function apiKeyProblem(key: string): string | undefined {
  const chars = [...key];
  const at = chars.findIndex((char) => char < '!' || char > '~');
  if (at < 0) return undefined;
  const char = chars[at]!;
  const point = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = CHARACTER_NAMES[char] ?? (char < ' ' || char === '\u007f' ? 'a control character' : 'a character outside printable ASCII');
  return `${name} (${point}) at character ${at + 1} of ${chars.length}`;
}

/** Validates a value for a key and returns what is stored. */
export function parseConfigValue(key: ConfigKey, raw: string): string | boolean {
  switch (key.kind) {
    case 'apiKey': {
      if (!raw.trim()) throw new UsageError('api-key must not be empty');
      const problem = apiKeyProblem(raw.trim());
      if (problem) throw new UsageError(`api-key contains ${problem}; a key is printable ASCII without spaces: paste it again without that`);
      return raw.trim();
    }
    case 'baseUrl':
      return validateBaseUrl(raw.trim(), 'base-url');
    case 'enumDefault': {
      const parsed = parseSceneEnum(key.field, raw, key.name);
      if (!parsed.ok) throw new UsageError(parsed.message);
      return parsed.value;
    }
    case 'booleanDefault':
    case 'previewDefault': {
      return parseSwitch(raw, key.name);
    }
  }
}

/** Shows enough of a key to recognise it, never enough to use it. */
export function maskKey(key: string | undefined): string {
  if (!key) return '(not set)';
  if (key.length <= 8) return '****';
  return `${key.slice(0, 4)}…${key.slice(-2)} (${key.length} chars)`;
}

/**
 * Changes the config file: under a lock, the file is read again, `change`
 * makes the new content from it (undefined: no change), and it is written
 * atomically (temp file, fsync, rename) with mode 0600. Two processes setting
 * different keys at once both keep theirs. A file that is not valid JSON stops
 * the change with its error. Where users keep the file is respected: a
 * symbolic link (stow, chezmoi, home-manager) is kept and the file it names is
 * written; a file mounted on its own (`docker run -v …/config.json:…`), which
 * cannot be replaced, is written in place. Every file-system failure is one
 * line naming the file and the fix, and leaves no lock behind.
 */
export async function updateConfig(env: Record<string, string | undefined>, change: (data: ConfigData) => ConfigData | undefined): Promise<void> {
  const path = configPath(env);
  const { makeDirectories } = await import('../files/directories.js');
  const { withFileLock } = await import('../files/file-lock.js');
  const { writeFileAtomicOrInPlace } = await import('../files/atomic-file.js');
  const lock = `${path}.lock`;
  let where = path;
  try {
    // The file holds the API key: a directory made for it is the user's alone.
    await makeDirectories(dirname(path), 0o700);
    await withFileLock(lock, async () => {
      const next = change(readConfig(env));
      if (next === undefined) return;
      const file = await fileBehind(path);
      if (file !== path) where = `${path} (a link to ${file})`;
      await writeFileAtomicOrInPlace(file, `${JSON.stringify(next, null, '\t')}\n`, 0o600);
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    const { code, path: failed } = error as NodeJS.ErrnoException;
    if (code === 'ENOTREGULAR' && failed === lock) {
      throw new UsageError(`cannot lock config file ${path}: ${lock} is not a regular file; remove it`, 'ConfigError');
    }
    if ((error as Error).name === 'LockTimeoutError') throw new UsageError(`config file ${path} is locked: ${(error as Error).message}`, 'ConfigError');
    throw configFileError(error, where, 'write') ?? error;
  }
}

/**
 * The file a change of the config file is written to: the file itself, or the
 * one a symbolic link in its place leads to (the link belongs to a dotfiles
 * manager and is kept). A link to nothing is refused rather than followed.
 */
async function fileBehind(path: string): Promise<string> {
  const { lstat, readlink, realpath } = await import('node:fs/promises');
  const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!info?.isSymbolicLink()) return path;
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const to = await readlink(path).catch(() => '?');
    throw new UsageError(`config file ${path} is a symbolic link to ${to}, which does not exist; create that file, or remove the link`, 'ConfigError');
  }
}

/** `config` with `profile` replaced by `data`: the file's other profiles and fields are kept as they are. */
export function withProfile(config: ConfigData, profile: string, data: ProfileData): ConfigData {
  return { ...config, profiles: { ...config.profiles, [profile]: data } };
}
