// Every field of the scene vocabulary reaches every place that is derived from
// it: generate, generate-async and batch take its flag and send its value, a
// batch column sets it, the config holds its default, the request schema knows
// it, the image metadata names it when the table says so, the completions and
// the prompts offer it, and the property-test model generates it. A place that
// lists fields by hand instead of reading the table fails here as soon as a
// field is added, rather than dropping the value without a word.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeIssues, generationRequestSchema, type GenerationRequest } from '../../../src/api/schema.js';
import { planBatch } from '../../../src/batch/plan.js';
import { sceneFieldOf } from '../../../src/batch/row-columns.js';
import { compileTemplate } from '../../../src/batch/template.js';
import { batchFile } from '../../helpers/batch-input.js';
import { buildProgram } from '../../../src/main.js';
import type { ActionFactory } from '../../../src/cli/context.js';
import { sceneInputFrom } from '../../../src/commands/shared/scene-options.js';
import { describeCommand } from '../../../src/commands/completion/scripts.js';
import { configKeys, configShapeProblem, parseConfigKey, parseConfigValue, resolveSettings } from '../../../src/config/config.js';
import { preselectedScene } from '../../../src/commands/shared/prompts.js';
import { describeScene } from '../../../src/files/image-metadata.js';
import { buildGenerationRequest, type SceneInput } from '../../../src/input/scene-request.js';
import {
  columnNames,
  configKeyOf,
  DEFAULTABLE_FIELDS,
  fieldsOfKind,
  flagName,
  LOCATION_FIELDS,
  readWire,
  SCENE_FIELD_NAMES,
  SCENE_FIELDS,
  sceneSpec,
  wirePath,
  writeWire,
  type DefaultableField,
  type SceneField,
} from '../../../src/scene/vocabulary.js';
import { sceneArgv, sceneCase } from '../../property/scene-model.js';
import { ROOT } from '../../helpers/cli.js';
import { usageMessage } from '../../helpers/usage-error.js';

const builtIn = resolveSettings({}, {}, {}).sceneDefaults;
const isLocation = (field: SceneField) => (LOCATION_FIELDS as SceneField[]).includes(field);

/** What a request needs besides `field`: the location, or the rest of it. */
function givenWith(field: SceneField): Record<string, string> {
  const spec = sceneSpec(field);
  if (spec.kind === 'location') return {};
  if (spec.kind === 'coordinate') return Object.fromEntries(fieldsOfKind('coordinate').filter((other) => other !== field).map((other) => [other, '1']));
  return { lat: '1', lng: '2' };
}

const asFlags = (given: Record<string, string>) => Object.entries(given).flatMap(([field, value]) => [`--${flagName(field)}`, value]);

/** One way to give a field a value: its flag (with its value), a batch cell, and what the request must then hold. */
interface Sample {
  argv: string[];
  cell: string;
  check(request: GenerationRequest): void;
}

function samplesOf(field: SceneField): Sample[] {
  const spec = sceneSpec(field);
  const flag = `--${flagName(field)}`;
  const wireIs = (expected: unknown) => (request: GenerationRequest) => expect(readWire(request, field), field).toEqual(expected);
  switch (spec.kind) {
    case 'coordinate': {
      const value = spec.range[1] / 4 + 0.125;
      return [{ argv: [flag, String(value)], cell: String(value), check: wireIs(value) }];
    }
    case 'location':
      return [{ argv: [flag, '12.5,-33.25'], cell: '12.5,-33.25', check: (request) => expect(request.coordinates).toEqual({ lat: 12.5, lng: -33.25 }) }];
    case 'enum': {
      // Not the default, so a dropped value cannot pass; typed in another case, as users do.
      const value = spec.values.find((candidate) => candidate !== spec.default)!;
      return [{ argv: [flag, value.toLowerCase()], cell: value.toUpperCase(), check: wireIs(value) }];
    }
    case 'boolean':
      return [
        { argv: [flag], cell: 'yes', check: wireIs(true) },
        { argv: [`--no-${flagName(field)}`], cell: 'false', check: wireIs(false) },
      ];
    case 'list':
      return [{ argv: [flag, ' a ', flag, 'b'], cell: 'a;b', check: wireIs(['a', 'b']) }];
    case 'text':
      return [{ argv: [flag, 'a lighthouse at dusk'], cell: 'a lighthouse at dusk', check: wireIs('a lighthouse at dusk') }];
  }
}

/** The options commander hands a command's action for `argv`, without running it. */
async function parsedOptions(argv: string[]): Promise<Record<string, unknown>> {
  let options: Record<string, unknown> | undefined;
  const capture: ActionFactory = () => async (...args: unknown[]) => {
    options = (args.at(-1) as Command).opts();
  };
  // commander's own error line is the test's to check, not the terminal's.
  await buildProgram(capture, { writeErr: () => {} }).parseAsync(argv, { from: 'user' });
  return options!;
}

/** A request with every field given a value that is not its default. */
function fullRequest(): GenerationRequest {
  const input: Record<string, unknown> = { lat: '1', lng: '2' };
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    if (spec.kind === 'enum') input[field] = spec.values.find((value) => value !== spec.default);
    if (spec.kind === 'boolean') input[field] = true;
    if (spec.kind === 'list') input[field] = ['a'];
    if (spec.kind === 'text') input[field] = 'p';
  }
  return buildGenerationRequest(input as SceneInput, builtIn);
}

describe('every scene field', () => {
  for (const field of SCENE_FIELD_NAMES) {
    describe(field, () => {
      const spec = sceneSpec(field);
      const flag = `--${flagName(field)}`;

      it('is a flag of generate and generate-async whose value reaches the request', async () => {
        for (const command of ['generate', 'generate-async']) {
          for (const sample of samplesOf(field)) {
            const input = sceneInputFrom(await parsedOptions([command, ...asFlags(givenWith(field)), ...sample.argv]));
            sample.check(buildGenerationRequest(input, builtIn));
          }
        }
      });

      it(isLocation(field) ? 'is not a flag of batch, which reads the location from its columns' : 'is a flag of batch whose value every row takes', async () => {
        for (const sample of samplesOf(field)) {
          const argv = ['batch', 'places.csv', ...sample.argv];
          if (isLocation(field)) {
            await expect(parsedOptions(argv)).rejects.toThrow(`unknown option '${flag}'`);
            continue;
          }
          const flags = sceneInputFrom(await parsedOptions(argv));
          sample.check(buildGenerationRequest({ ...flags, ...givenWith(field) }, builtIn));
        }
      });

      it('is set by a batch column under each of its names, in camelCase and kebab-case', async () => {
        const names = columnNames(field).flatMap((name) => [name, flagName(name)]);
        for (const name of names) expect(sceneFieldOf(name), name).toBe(field);
        const given = givenWith(field);
        for (const sample of samplesOf(field)) {
          for (const name of names) {
            const csv = `${[...Object.keys(given), name].join(',')}\n${[...Object.values(given), sample.cell].map((cell) => JSON.stringify(cell)).join(',')}\n`;
            const plan = await planBatch({ file: await batchFile(csv, 'rows.csv'), flags: {}, sceneDefaults: builtIn, template: compileTemplate('out/{row}.jpg'), cwd: '/work' });
            expect(plan.rows[0]!.error, csv).toBeUndefined();
            sample.check(plan.rows[0]!.request!);
          }
        }
      });

      if ((DEFAULTABLE_FIELDS as SceneField[]).includes(field)) {
        const defaultable = field as DefaultableField;
        it(`has a config key, ${configKeyOf(defaultable)}, whose stored default the request takes`, () => {
          const name = configKeyOf(defaultable);
          expect(configKeys().map((key) => key.name)).toContain(name);
          const key = parseConfigKey(name);
          expect(key).toMatchObject({ name, field });
          for (const sample of samplesOf(field)) {
            const stored = parseConfigValue(key, sample.cell);
            const config = { profiles: { default: { defaults: { [field]: stored } } } };
            expect(configShapeProblem(config)).toBeUndefined();
            const defaults = resolveSettings({}, {}, config).sceneDefaults;
            expect(defaults[defaultable].source).toBe('profile');
            sample.check(buildGenerationRequest(givenWith(field), defaults));
          }
          // The file holds each default as its JSON type; a hand edit of the wrong type is named.
          const wrong = spec.kind === 'boolean' ? 'yes' : true;
          expect(configShapeProblem({ profiles: { p: { defaults: { [field]: wrong } } } })).toBe(
            `profiles.p.defaults.${field} must be a ${spec.kind === 'boolean' ? 'boolean' : 'string'}`,
          );
        });
      } else {
        it('has no config key', () => {
          expect(usageMessage(() => parseConfigKey(`defaults.${flagName(field)}`))).toMatch(/^unknown config key/);
        });
      }

      const path = wirePath(field);
      if (path !== undefined) {
        it(`is known to the request schema at ${path}, which refuses a value of the wrong type`, () => {
          const body = JSON.parse(JSON.stringify(fullRequest())) as Record<string, unknown>;
          expect(generationRequestSchema().safeParse(body).success).toBe(true);
          const wrongType = { coordinate: 'north', location: 0, enum: 'Sideways', boolean: 'yes', list: 'a;b', text: 5 }[spec.kind];
          writeWire(body, field, wrongType);
          const result = generationRequestSchema().safeParse(body);
          expect(result.success).toBe(false);
          expect(describeIssues(result.error!)).toMatch(new RegExp(`^${path.replace('.', '\\.')}\\b`));
        });
      }

      it(spec.describe ? 'is named in the scene description of the image metadata' : 'is not named in the scene description', () => {
        const request = fullRequest();
        const named = describeScene(request).includes(` ${field}=${String(readWire(request, field))}`);
        expect(named).toBe(spec.describe);
      });

      it('completes as a flag (and its values) in every command that takes it', () => {
        const program = describeCommand(buildProgram());
        for (const name of isLocation(field) ? ['generate', 'generate-async'] : ['generate', 'generate-async', 'batch']) {
          const options = program.subcommands.find((command) => command.name === name)!.options;
          const option = options.find((candidate) => candidate.long === flag);
          expect(option, `${name} ${flag}`).toBeDefined();
          if (spec.kind === 'enum') expect(option!.value).toEqual({ kind: 'words', words: [...spec.values] });
          if (spec.kind === 'boolean') expect(options.map((candidate) => candidate.long)).toContain(`--no-${flagName(field)}`);
        }
      });

      it('is generated by the property-test model', () => {
        const argv = fc.sample(sceneCase(), { numRuns: 400, seed: 15 }).flatMap(sceneArgv);
        expect(argv).toContain(flag);
        if (spec.kind === 'boolean') expect(argv).toContain(`--no-${flagName(field)}`);
      });
    });
  }

  it('that has a prompt label is asked for by generate --interactive', () => {
    const prompted = SCENE_FIELD_NAMES.filter((field) => 'prompt' in SCENE_FIELDS[field]);
    expect(prompted.length).toBeGreaterThan(0);
    expect(Object.keys(preselectedScene({}, builtIn))).toEqual(prompted);
  });
});

describe('the vocabulary', () => {
  it('gives each enum a default among its values, and aliases that name its values', () => {
    for (const field of SCENE_FIELD_NAMES) {
      const spec = sceneSpec(field);
      if (spec.kind !== 'enum') continue;
      expect(spec.values, field).toContain(spec.default);
      for (const value of Object.values(spec.aliases ?? {})) expect(spec.values, field).toContain(value);
    }
  });

  it('gives no two fields one batch column or one flag', () => {
    const columns = SCENE_FIELD_NAMES.flatMap((field) => columnNames(field).map((name) => name.replace(/[\s_-]/g, '').toLowerCase()));
    const byField = SCENE_FIELD_NAMES.flatMap((field) => [...new Set(columnNames(field).map((name) => name.replace(/[\s_-]/g, '').toLowerCase()))]);
    expect(new Set(columns).size).toBe(byField.length);
    expect(new Set(SCENE_FIELD_NAMES.map(flagName)).size).toBe(SCENE_FIELD_NAMES.length);
  });

  it('keeps the wire body in the order earlier releases sent it (batch manifests hash the body to key their rows)', () => {
    const request = buildGenerationRequest(
      { lat: '1', lng: '2', prompt: 'p', tag: ['t'], saveImage: false, includeContext: true, zoom: 'high', bearing: 'ne' },
      builtIn,
    );
    expect(JSON.stringify(request)).toBe(
      '{"coordinates":{"lat":1,"lng":2},"resolution":"FHD","zoom":"High","bearing":"NorthEast","angle":"High","weather":"Sunny",' +
        '"daytime":"Day","aspectRatio":"Landscape","epoch":"Nowadays","includeContext":true,"saveImage":false,"tags":["t"],"prompt":"p"}',
    );
  });
});

// The scene flag table is written out in generate's page of the manual and in the interface contract.
describe.each(['docs/commands/generate.md', 'docs/contract.md'])('the scene flag table of %s', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const start = text.indexOf('| flag | values | default |');
  const table = text.slice(start);
  const rows = start === -1 ? [] : table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  const generate = buildProgram().commands.find((command) => command.name() === 'generate')!;

  it('names only flags generate takes', () => {
    const flags = rows.flatMap((row) => row.split('|')[1]!.match(/--[a-z-]+/g) ?? []).filter((flag) => flag !== '--no-');
    expect(flags.length).toBeGreaterThan(10);
    for (const flag of flags) expect(generate.options.map((option) => option.long), flag).toContain(flag);
  });

  it('lists the values and default of every enum it names, as the vocabulary gives them', () => {
    let checked = 0;
    for (const row of rows) {
      const [, flags, values, fallback] = row.split('|').map((cell) => cell.trim());
      const field = /^`--([a-z-]+)`$/.exec(flags!)?.[1]?.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      if (field === undefined || !(field in SCENE_FIELDS)) continue;
      const spec = sceneSpec(field as SceneField);
      if (spec.kind !== 'enum') continue;
      expect(values!.replace(/\s*\(.*\)$/, '').split(', '), field).toEqual(spec.values);
      expect(fallback, field).toBe(spec.default);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(5);
  });
});
