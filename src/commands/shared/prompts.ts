// Interactive prompts for a person at a terminal: the location, the scene
// choices (selects preselected with the current values) and where to save.
// Scripts never get a prompt (see `mustPrompt`): a missing flag stays an
// exit-2 error for them. inquirer itself is loaded only when a prompt shows.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../../lifecycle/errors.js';
import { apiKeyProblem, type Settings } from '../../config/config.js';
import type { Context } from '../../cli/context.js';
import { checkCoordinates, parseLocation, type SceneInput } from '../../input/scene-request.js';
import { findPlace, looksLikeCoordinates } from '../../input/gazetteer.js';
import { ENUM_FIELDS, flagName, parseSceneEnum, SCENE_FIELD_NAMES, SCENE_FIELDS, type DefaultableField, type EnumField } from '../../scene/vocabulary.js';

/** The inquirer context every prompt uses: our streams (prompts go to stderr) and the Ctrl-C signal. */
function promptContext(ctx: Context) {
  return { input: ctx.io.stdin, output: ctx.io.stderr, signal: ctx.signal };
}

const same = (text: string) => text;

/**
 * inquirer colours by its own terminal sniffing; with --no-color (or NO_COLOR,
 * or colour otherwise off for our stderr) every prompt gets this plain theme.
 */
const PLAIN_THEME = {
  prefix: { idle: '?', done: '✔' },
  spinner: { interval: 80, frames: ['-', '\\', '|', '/'] },
  style: {
    answer: same,
    message: same,
    error: (text: string) => `> ${text}`,
    defaultAnswer: (text: string) => `(${text})`,
    help: same,
    highlight: same,
    key: (text: string) => `<${text}>`,
    disabled: (text: string) => `- ${text}`,
    description: same,
    keysHelpTip: (keys: [string, string][]) => keys.map(([key, action]) => `${key} ${action}`).join(' • '),
  },
};

function theme(ctx: Context) {
  return ctx.io.color ? undefined : PLAIN_THEME;
}

/**
 * Runs one prompt with inquirer loaded on first use. Ctrl-C inside a prompt
 * arrives as a keypress (raw mode, no SIGINT) and inquirer rejects with
 * ExitPromptError; main.ts maps that, like an aborted ctx.signal, to exit 130.
 */
export async function ask<T>(prompt: (inquirer: typeof import('@inquirer/prompts')) => Promise<T>): Promise<T> {
  return prompt(await import('@inquirer/prompts'));
}

/** Refuses to prompt where nobody can answer: stdin or stderr not a terminal, or --json. */
export function requireTerminal(ctx: Context, what: string): void {
  if (!ctx.io.interactive) {
    const why = ctx.io.json ? '--json output is for scripts' : 'stdin or stderr is not a terminal';
    throw new UsageError(`${what} needs a terminal to ask questions (${why})`);
  }
}

function hasLocation(input: SceneInput): boolean {
  return input.at !== undefined || (input.lat !== undefined && input.lat !== '' && input.lng !== undefined && input.lng !== '');
}

/**
 * Whether `generate` should prompt: always with --interactive (which then
 * requires a terminal), otherwise only when the location is missing and a
 * person is at the terminal. Scripts get the "--lat is required" error instead.
 */
export function mustPrompt(ctx: Context, input: SceneInput, forced: boolean): boolean {
  if (forced) {
    requireTerminal(ctx, '--interactive');
    return true;
  }
  return !hasLocation(input) && ctx.io.interactive;
}

/** "LAT,LNG" as prefilled text from whatever location flags were given. */
function locationText(input: SceneInput): string | undefined {
  if (input.at !== undefined) return input.at;
  if (hasLocation(input)) return `${input.lat},${input.lng}`;
  return undefined;
}

export function validateLocation(text: string): true | string {
  try {
    if (looksLikeCoordinates(text)) {
      const { lat, lng } = parseLocation(text, 'location');
      checkCoordinates(lat, lng, 'latitude', 'longitude');
    } else {
      // The gazetteer is read at the first name typed; an ambiguous one lists its candidates here.
      findPlace(text, 'location');
    }
    return true;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function promptLocation(ctx: Context, current?: string): Promise<string> {
  const answer = await ask(({ input }) =>
    input(
      {
        message: 'Location (latitude,longitude, a geo: URI, or a place such as "Paris, FR")',
        default: current,
        theme: theme(ctx),
        validate: validateLocation,
      },
      promptContext(ctx),
    ),
  );
  return answer.trim();
}

/** Current value of each enum: the flag if given (checked now, before any question), else the configured default. */
export function preselectedScene(input: SceneInput, defaults: Settings['sceneDefaults']): Record<EnumField, string> {
  const chosen = {} as Record<EnumField, string>;
  for (const field of ENUM_FIELDS) {
    const raw = input[field];
    if (raw === undefined || raw === '') {
      chosen[field] = defaults[field].value;
      continue;
    }
    const parsed = parseSceneEnum(field, raw);
    if (!parsed.ok) throw new UsageError(parsed.message);
    chosen[field] = parsed.value;
  }
  return chosen;
}

export async function promptSceneChoices(
  ctx: Context,
  current: Record<EnumField, string>,
  defaults: Settings['sceneDefaults'],
): Promise<Record<EnumField, string>> {
  const chosen = { ...current };
  for (const field of ENUM_FIELDS) {
    const { values, prompt } = SCENE_FIELDS[field];
    const choices = (values as readonly string[]).map((value) => ({
      value,
      name: value === defaults[field].value ? `${value} ${ctx.io.style.dim('(default)')}` : value,
      short: value,
    }));
    chosen[field] = await ask(({ select }) =>
      select({ message: prompt, choices, default: current[field], pageSize: choices.length, theme: theme(ctx) }, promptContext(ctx)),
    );
  }
  return chosen;
}

/** Asks where to save, offering `suggested`; an existing file is refused unless --force. */
export async function promptOutputPath(ctx: Context, suggested: string, force: boolean): Promise<string> {
  const answer = await ask(({ input }) =>
    input(
      {
        message: 'Save as',
        default: suggested,
        theme: theme(ctx),
        validate: (value) => {
          const path = value.trim();
          if (!path) return 'enter a file name';
          if (path === '-') return 'choose a file; use -o - on the command line to write to stdout';
          if (!force && existsSync(resolve(path))) return `${path} already exists; choose another name (or pass --force)`;
          return true;
        },
      },
      promptContext(ctx),
    ),
  );
  return answer.trim();
}

/**
 * The interactive part of `generate`: asks for the location and the scene
 * choices, and returns the input as if they had been typed as flags.
 */
export async function promptForScene(ctx: Context, given: SceneInput, defaults: Settings['sceneDefaults']): Promise<SceneInput> {
  const current = preselectedScene(given, defaults);
  if (given.at !== undefined && looksLikeCoordinates(given.at) && (given.lat !== undefined || given.lng !== undefined)) {
    throw new UsageError('--at cannot be combined with --lat/--lng');
  }
  const at = await promptLocation(ctx, locationText(given));
  const scene = await promptSceneChoices(ctx, current, defaults);
  const { lat: _lat, lng: _lng, ...rest } = given;
  return { ...rest, ...scene, at };
}

/**
 * The flags that would repeat these answers without prompting: every scene
 * field given (only what differs from the defaults), so the line makes the
 * same request, shell-quoted.
 */
export function equivalentFlags(input: SceneInput, defaults: Settings['sceneDefaults'], output?: string): string {
  const flags = [`--at ${shellWord(input.at ?? '')}`];
  for (const field of SCENE_FIELD_NAMES) {
    const spec = SCENE_FIELDS[field];
    const value = input[field];
    if (value === undefined) continue;
    const flag = `--${flagName(field)}`;
    switch (spec.kind) {
      case 'enum':
      case 'boolean':
        if (value === defaults[field as DefaultableField].value) continue;
        if (spec.kind === 'enum') flags.push(`${flag} ${shellWord(String(value))}`);
        else flags.push(value ? flag : `--no-${flagName(field)}`);
        break;
      case 'list':
        for (const entry of value as string[]) flags.push(`${flag} ${shellWord(entry)}`);
        break;
      case 'text':
        flags.push(`${flag} ${shellWord(String(value))}`);
        break;
      default: // the location is --at, above
    }
  }
  if (output) flags.push(`-o ${shellWord(output)}`);
  return flags.join(' ');
}

/**
 * A word a POSIX shell reads back as `text`: bare when it has nothing the
 * shell treats specially, in double quotes when only spaces and the like need
 * hiding, otherwise in single quotes (which expand nothing).
 */
export function shellWord(text: string): string {
  if (/^[\w@%+=:,./-]+$/.test(text)) return text;
  if (!/[$`\\"!']/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** For `init`: a hidden key entry; an empty answer keeps `current` when there is one. */
export async function promptApiKey(ctx: Context, hasCurrent: boolean): Promise<string | undefined> {
  const answer = await ask(({ password }) =>
    password(
      {
        message: hasCurrent ? 'API key (hidden; leave empty to keep the current one)' : 'API key (hidden)',
        mask: '*',
        theme: theme(ctx),
        validate: (value) => {
          const key = value.trim();
          if (!key) return hasCurrent ? true : 'the API key is required';
          const problem = apiKeyProblem(key);
          if (problem) return `the API key contains ${problem}; paste it again without that`;
          return true;
        },
      },
      promptContext(ctx),
    ),
  );
  const key = answer.trim();
  if (key) ctx.io.addSecret(key);
  return key || undefined;
}

export async function promptText(
  ctx: Context,
  message: string,
  options: { default?: string; validate?: (value: string) => true | string } = {},
): Promise<string> {
  return (await ask(({ input }) => input({ message, default: options.default, validate: options.validate, theme: theme(ctx) }, promptContext(ctx)))).trim();
}

/** One choice among a few, each with a line of description under the list. */
export async function promptSelect<T extends string>(
  ctx: Context,
  message: string,
  choices: Array<{ value: T; name: string; description?: string }>,
  defaultValue: T,
): Promise<T> {
  return ask(({ select }) => select({ message, choices, default: defaultValue, theme: theme(ctx) }, promptContext(ctx)));
}

export async function promptConfirm(ctx: Context, message: string, defaultAnswer: boolean): Promise<boolean> {
  return ask(({ confirm }) => confirm({ message, default: defaultAnswer, theme: theme(ctx) }, promptContext(ctx)));
}
