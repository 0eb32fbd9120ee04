// `aerial config`: set, get, unset, list and path, per profile. The API key is
// only ever shown masked, and can be entered on a hidden prompt or stdin.
import type { Command } from 'commander';
import { UsageError } from '../../lifecycle/errors.js';
import {
  configKeys,
  configPath,
  DEFAULT_PROFILE,
  maskKey,
  parseConfigKey,
  parseConfigValue,
  profileOf,
  readConfig,
  selectedProfile,
  updateConfig,
  withProfile,
  type ConfigKey,
  type ProfileData,
} from '../../config/config.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { MESSAGE_MAX, printable } from '../../text/printable.js';

export const registration: CommandRegistration = { name: 'config', register };

function register(command: Command, action: ActionFactory): void {
  const config = command
    .helpGroup('Setup:')
    .description('show and change settings: api-key, base-url, defaults.<scene flag>, defaults.preview')
    .addHelpText(
      'after',
      `
Keys: ${configKeys()
        .map((k) => k.name)
        .join(', ')}

Examples:
  $ aerial config set api-key                 # hidden prompt (or: echo "$KEY" | aerial config set api-key)
  $ aerial config set base-url https://genaerial.example.com
  $ aerial config set defaults.zoom High --profile work
  $ aerial config list`,
    );

  config
    .command('set')
    .description('set a value (api-key without a value reads a hidden prompt or stdin)')
    .argument('<key>', 'config key')
    .argument('[value]', 'new value')
    .addHelpText('after', `\nExamples:\n  $ aerial config set api-key\n  $ echo "$GENAERIAL_KEY" | aerial config set api-key\n  $ aerial config set defaults.aspect-ratio Square --profile work`)
    .action(action(async (ctx, _options, args) => setValue(ctx, args[0]!, args[1])));
  config
    .command('get')
    .description('print one value (the API key masked)')
    .argument('<key>', 'config key')
    .addHelpText('after', `\nExamples:\n  $ aerial config get base-url\n  $ aerial config get defaults.zoom --profile work`)
    .action(action(async (ctx, _options, args) => getValue(ctx, args[0]!)));
  config
    .command('unset')
    .description('remove a value from the profile')
    .argument('<key>', 'config key')
    .addHelpText('after', `\nExamples:\n  $ aerial config unset defaults.zoom\n  $ aerial config unset api-key --profile work`)
    .action(action(async (ctx, _options, args) => unsetValue(ctx, args[0]!)));
  config
    .command('list')
    .alias('ls')
    .description('show every setting, its value and where it comes from (flag, env, profile, default)')
    .addHelpText('after', `\nExamples:\n  $ aerial config list\n  $ AERIAL_PROFILE=work aerial config list --json`)
    .action(action(async (ctx) => listValues(ctx)));
  config
    .command('path')
    .description('print the path of the config file')
    .addHelpText('after', `\nExamples:\n  $ aerial config path\n  $ ls -l "$(aerial config path)"        # mode 0600: it holds the API key`)
    .action(action(async (ctx) => ctx.io.out(configPath(ctx.env))));
}

function profileName(ctx: Context): string {
  return selectedProfile(ctx.globals, ctx.env).value;
}

function storedValue(profile: ProfileData, key: ConfigKey): string | boolean | undefined {
  switch (key.kind) {
    case 'apiKey':
      return profile.apiKey;
    case 'baseUrl':
      return profile.baseUrl;
    default:
      return profile.defaults?.[key.field];
  }
}

function withValue(profile: ProfileData, key: ConfigKey, value: string | boolean | undefined): ProfileData {
  const next: ProfileData = { ...profile, defaults: { ...profile.defaults } };
  if (key.kind === 'apiKey') next.apiKey = value as string | undefined;
  else if (key.kind === 'baseUrl') next.baseUrl = value as string | undefined;
  else (next.defaults as Record<string, unknown>)[key.field] = value;
  for (const [k, v] of Object.entries(next.defaults ?? {})) if (v === undefined) delete (next.defaults as Record<string, unknown>)[k];
  if (next.defaults && Object.keys(next.defaults).length === 0) delete next.defaults;
  if (next.apiKey === undefined) delete next.apiKey;
  if (next.baseUrl === undefined) delete next.baseUrl;
  return next;
}

async function readSecretFromUser(ctx: Context): Promise<string> {
  if (ctx.io.stdinIsTTY) {
    const { password } = await import('@inquirer/prompts');
    return password({ message: 'API key', mask: '*' }, { input: ctx.io.stdin, output: ctx.io.stderr, signal: ctx.signal });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.io.stdin) chunks.push(Buffer.from(chunk as Buffer));
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) throw new UsageError('no API key on stdin; pipe it in (echo "$KEY" | aerial config set api-key) or run on a terminal');
  return text;
}

/**
 * Sets (or, with undefined, removes) one key of the profile, merged into the
 * file as it is when the lock is held; false when there was nothing to remove.
 */
async function saveValue(ctx: Context, profile: string, key: ConfigKey, value: string | boolean | undefined): Promise<boolean> {
  let changed = false;
  await updateConfig(ctx.env, (data) => {
    const current = profileOf(data, profile) ?? {};
    if (value === undefined && storedValue(current, key) === undefined) return undefined;
    changed = true;
    return withProfile(data, profile, withValue(current, key, value));
  });
  return changed;
}

async function setValue(ctx: Context, rawKey: string, rawValue: string | undefined): Promise<void> {
  const key = parseConfigKey(rawKey);
  if (rawValue === undefined && key.kind !== 'apiKey') throw new UsageError(`config set ${key.name} needs a value`);
  if (rawValue !== undefined && key.kind === 'apiKey' && ctx.io.stderrIsTTY) {
    ctx.io.warn('a key typed on the command line stays in your shell history; `aerial config set api-key` alone asks for it hidden');
  }
  const raw = rawValue ?? (await readSecretFromUser(ctx));
  if (key.kind === 'apiKey') ctx.io.addSecret(raw.trim());
  const value = parseConfigValue(key, raw);
  const profile = profileName(ctx);
  await saveValue(ctx, profile, key, value);
  const shown = key.kind === 'apiKey' ? maskKey(value as string) : String(value);
  ctx.io.success(`Set ${key.name} = ${shown}${profile !== DEFAULT_PROFILE ? ` in profile ${profile}` : ''}`);
}

async function getValue(ctx: Context, rawKey: string): Promise<void> {
  const key = parseConfigKey(rawKey);
  const row = rows(ctx).find((r) => r.key === key.name)!;
  if (ctx.io.json) ctx.io.outJson(row);
  else if (row.value === undefined) ctx.io.info(`${key.name} is not set`);
  else ctx.io.out(String(row.value));
}

async function unsetValue(ctx: Context, rawKey: string): Promise<void> {
  const key = parseConfigKey(rawKey);
  const profile = profileName(ctx);
  if (!(await saveValue(ctx, profile, key, undefined))) {
    ctx.io.info(`${key.name} was not set${profile !== DEFAULT_PROFILE ? ` in profile ${profile}` : ''}`);
    return;
  }
  ctx.io.success(`Unset ${key.name}${profile !== DEFAULT_PROFILE ? ` in profile ${profile}` : ''}`);
}

interface Row {
  key: string;
  value: string | boolean | undefined;
  source: string;
}

function rows(ctx: Context): Row[] {
  // A profile that does not exist is refused, as every other command refuses it: most likely a typo.
  const settings = ctx.settings();
  const out: Row[] = [{ key: 'profile', value: settings.profile.value, source: settings.profile.source }];
  for (const key of configKeys()) {
    if (key.kind === 'apiKey') {
      out.push({ key: key.name, value: settings.apiKey.value === undefined ? undefined : maskKey(settings.apiKey.value), source: settings.apiKey.source });
    } else if (key.kind === 'baseUrl') {
      out.push({ key: key.name, value: settings.baseUrl.value, source: settings.baseUrl.source });
    } else if (key.kind === 'previewDefault') {
      out.push({ key: key.name, value: settings.preview.value, source: settings.preview.source });
    } else {
      const resolved = settings.sceneDefaults[key.field];
      out.push({ key: key.name, value: resolved.value, source: resolved.source });
    }
  }
  return out;
}

async function listValues(ctx: Context): Promise<void> {
  const all = rows(ctx);
  if (ctx.io.json) {
    ctx.io.outJson(Object.fromEntries(all.map((r) => [r.key, { value: r.value ?? null, source: r.source }])));
    return;
  }
  const width = Math.max(...all.map((r) => r.key.length));
  for (const row of all) {
    const value = row.value === undefined ? ctx.io.style.dim('(not set)') : printable(String(row.value), MESSAGE_MAX);
    ctx.io.out(`${row.key.padEnd(width)}  ${value}  ${ctx.io.style.dim(`(${row.source})`)}`);
  }
  const profiles = Object.keys(readConfig(ctx.env).profiles ?? {});
  // The file is edited by hand too: its names and values are shown as plain text.
  if (profiles.length) ctx.io.info(ctx.io.style.dim(`profiles: ${printable(profiles.join(', '), MESSAGE_MAX)} — file: ${configPath(ctx.env)}`));
}
