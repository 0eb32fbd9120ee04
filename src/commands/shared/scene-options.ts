// The scene flags shared by generate, generate-async and batch, made from the
// scene vocabulary: they mirror the request body in kebab-case, and their help
// lists what each takes.
import { Option, type Command } from 'commander';
import type { SceneInput } from '../../input/scene-request.js';
import {
  flagName,
  LOCATION_FIELDS,
  SCENE_FIELD_NAMES,
  sceneSpec,
  type SceneField,
} from '../../scene/vocabulary.js';

/** Commander's parser for a repeatable flag: every value, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The option (two for a boolean: --flag and --no-flag) of one field. */
function optionsOf(field: SceneField, locationNote: string): Option[] {
  const spec = sceneSpec(field);
  const flag = `--${flagName(field)}`;
  switch (spec.kind) {
    case 'coordinate':
      return [new Option(`${flag} <${spec.placeholder}>`, `${spec.help}, ${spec.range[0]} to ${spec.range[1]}${locationNote}`)];
    case 'location':
    case 'text':
      return [new Option(`${flag} <${spec.placeholder}>`, spec.help)];
    case 'enum':
      return [new Option(`${flag} <value>`, `${spec.help}: ${spec.values.join(', ')} (default ${spec.default}, or config)`)];
    case 'boolean':
      return [new Option(flag, spec.help), new Option(`--no-${flagName(field)}`, spec.offHelp)];
    case 'list':
      return [new Option(`${flag} <${spec.placeholder}>`, `${spec.help}, at most ${spec.max}`).argParser(collect)];
  }
}

function addOptions(command: Command, fields: SceneField[], locationNote = ''): Command {
  for (const field of fields) for (const option of optionsOf(field, locationNote)) command.addOption(option);
  return command;
}

/** --lat, --lng and --at: generate and generate-async take the location as flags, batch from its columns. */
export function addLocationOptions(command: Command, required = true): Command {
  return addOptions(command, LOCATION_FIELDS, required ? ' (required, or --at)' : '');
}

/** Every other scene flag. */
export function addSceneOptions(command: Command): Command {
  return addOptions(
    command,
    SCENE_FIELD_NAMES.filter((field) => !(LOCATION_FIELDS as SceneField[]).includes(field)),
  );
}

/** Picks the scene fields out of a command's parsed options (commander names each after its field). */
export function sceneInputFrom(options: Record<string, unknown>): SceneInput {
  const input: Record<string, unknown> = {};
  for (const field of SCENE_FIELD_NAMES) {
    const value = options[field];
    if (sceneSpec(field).kind === 'boolean' ? typeof value === 'boolean' : value !== undefined) input[field] = value;
  }
  return input as SceneInput;
}

/**
 * The batch columns as `batch --help` lists them: lat, lng (or at / place: "LAT,LNG" or a place name),
 * resolution, …, aspectRatio / aspect-ratio, …, tags ("a;b" or "a|b"), prompt.
 */
export function sceneColumnsHelp(): string {
  const items: string[] = [];
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    const shown = spec.columns ?? [field];
    if (spec.kind === 'location') {
      // An alternative to the coordinates just listed (which win when a row has both).
      items.push(`${items.pop()!} (or ${shown.join(' / ')}: "LAT,LNG" or a place name such as "Paris, FR")`);
      continue;
    }
    items.push(spec.kind === 'list' ? `${shown[0]} ("a;b" or "a|b")` : shown.join(' / '));
  }
  return items.join(', ');
}
