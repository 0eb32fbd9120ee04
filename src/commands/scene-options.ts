// The scene flags shared by generate, generate-async and batch: they mirror
// the request body in kebab-case, and enum help lists the allowed values.
import { Option, type Command } from 'commander';
import { SCENE_DEFAULTS, SCENE_ENUMS, flagName, type SceneEnumField } from '../api/enums.js';
import type { SceneInput } from '../request.js';

const ENUM_HELP: Record<SceneEnumField, string> = {
  resolution: 'output resolution',
  zoom: 'how close the camera is',
  bearing: 'compass direction the camera faces (also N, NE, E, …)',
  angle: 'camera angle from the ground',
  weather: 'weather in the scene',
  daytime: 'time of day',
  aspectRatio: 'image shape',
  epoch: 'era the scene depicts',
};

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function addLocationOptions(command: Command, required = true): Command {
  const note = required ? ' (required, or --at)' : '';
  return command
    .option('--lat <degrees>', `latitude, -90 to 90${note}`)
    .option('--lng <degrees>', `longitude, -180 to 180${note}`)
    .option('--at <lat,lng>', 'location as "LAT,LNG" or a geo: URI, instead of --lat/--lng');
}

export function addSceneOptions(command: Command): Command {
  for (const [field, values] of Object.entries(SCENE_ENUMS) as [SceneEnumField, readonly string[]][]) {
    command.addOption(
      new Option(`--${flagName(field)} <value>`, `${ENUM_HELP[field]}: ${values.join(', ')} (default ${SCENE_DEFAULTS[field]}, or config)`),
    );
  }
  return command
    .option('--include-context', 'landmark-specific enhancement for recognised locations')
    .option('--no-include-context', 'turn landmark enhancement off')
    .option('--include-surroundings', 'include the surrounding area (the service default)')
    .option('--no-include-surroundings', 'leave out the surrounding area')
    .option('--improve-output', 'apply quality enhancement')
    .option('--no-improve-output', 'turn quality enhancement off')
    .option('--save-image', 'keep the image in your history (the service default)')
    .option('--no-save-image', 'do not keep the image in your history')
    .option('--tag <tag>', 'descriptive tag, repeatable, at most 10', collect)
    .option('--prompt <text>', 'custom enhancement instructions');
}

/** Picks the scene fields out of a command's parsed options. */
export function sceneInputFrom(options: Record<string, unknown>): SceneInput {
  const input: Record<string, unknown> = {};
  for (const key of ['lat', 'lng', 'at', 'tag', 'prompt', ...Object.keys(SCENE_ENUMS)]) {
    if (options[key] !== undefined) input[key] = options[key];
  }
  for (const key of ['includeContext', 'includeSurroundings', 'improveOutput', 'saveImage']) {
    if (typeof options[key] === 'boolean') input[key] = options[key];
  }
  return input as SceneInput;
}
