// `aerial init`: first-run setup for a person at a terminal — service URL,
// API key (hidden), optional scene defaults, then one real `list` call to
// prove the pair works before it is saved. Scripts use `aerial config set`.
import type { Command } from 'commander';
import { ApiError, CliError, ExitCode } from '../api/errors.js';
import type { ActionFactory } from '../cli.js';
import type { Context } from '../context.js';

export function register(program: Command, action: ActionFactory): void {
  program
    .command('init')
    .helpGroup('Setup:')
    .description('set up aerial step by step: service URL, API key, defaults, and a test call')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial init                        # sets up the default profile
  $ aerial init --profile work         # a second account, used with --profile work
  $ AERIAL_CONFIG_DIR=./.aerial aerial init

Without a terminal use 'aerial config set base-url <url>' and 'aerial config set api-key' instead.`,
    )
    .action(action(runInit));
}

export async function runInit(ctx: Context): Promise<void> {
  const prompts = await import('../interactive.js');
  prompts.requireTerminal(ctx, "aerial init (use 'aerial config set base-url|api-key' in scripts)");
  const config = await import('../config.js');
  const profile = config.selectedProfile(ctx.globals, ctx.env).value;
  const current = config.profileOf(config.readConfig(ctx.env), profile) ?? {};
  const { style } = ctx.io;

  ctx.io.info(`Setting up ${style.bold(`profile ${profile}`)} in ${style.dim(config.configPath(ctx.env))}`);
  const baseUrl = config.validateBaseUrl(
    await prompts.promptText(ctx, 'Service base URL', {
      default: ctx.globals.baseUrl ?? current.baseUrl,
      validate: (value) => {
        try {
          config.validateBaseUrl(value.trim(), 'the base URL');
          return true;
        } catch (error) {
          return (error as Error).message;
        }
      },
    }),
    'base URL',
  );
  const apiKey = (await prompts.promptApiKey(ctx, Boolean(current.apiKey))) ?? current.apiKey!;
  ctx.io.addSecret(apiKey);

  let defaults = current.defaults;
  if (await prompts.promptConfirm(ctx, 'Choose default scene settings now? (each can also be a flag)', false)) {
    defaults = await chooseDefaults(ctx, current.defaults ?? {});
  }

  const connected = await testConnection(ctx, baseUrl, apiKey);
  if (!connected.ok && !(await prompts.promptConfirm(ctx, 'Save these settings anyway?', false))) {
    throw connected.error;
  }

  const data = { ...current, baseUrl, apiKey, defaults };
  if (!defaults || Object.keys(defaults).length === 0) delete data.defaults;
  await config.updateConfig(ctx.env, (file) => config.withProfile(file, profile, data));

  ctx.io.success(`Saved profile ${profile} (API key ${config.maskKey(apiKey)})`);
  for (const name of ['AERIAL_API_KEY', 'AERIAL_BASE_URL'] as const) {
    if (ctx.env[name]) ctx.io.warn(`${name} is set in your environment and takes precedence over this profile`);
  }
  const profileFlag = profile === config.DEFAULT_PROFILE ? '' : ` --profile ${profile}`;
  ctx.io.info(`Next: ${style.cyan(`aerial generate${profileFlag} --lat 48.8584 --lng 2.2945 -o eiffel.jpg`)}`);
}

/** Selects for every scene default; only choices that differ from the built-in defaults are stored. */
async function chooseDefaults(
  ctx: Context,
  stored: Partial<Record<string, string | boolean>>,
): Promise<Record<string, string | boolean>> {
  const [{ SCENE_DEFAULTS, SCENE_ENUM_FIELDS }, { resolveSettings }, prompts] = await Promise.all([
    import('../api/enums.js'),
    import('../config.js'),
    import('../interactive.js'),
  ]);
  const builtIn = resolveSettings({}, {}, {}).sceneDefaults;
  const current = Object.fromEntries(
    SCENE_ENUM_FIELDS.map((field) => [field, typeof stored[field] === 'string' ? stored[field] : SCENE_DEFAULTS[field]]),
  ) as Record<(typeof SCENE_ENUM_FIELDS)[number], string>;
  const chosen = await prompts.promptSceneChoices(ctx, current, builtIn);
  const next: Record<string, string | boolean> = {};
  for (const [field, value] of Object.entries(stored)) if (value !== undefined) next[field] = value;
  for (const field of SCENE_ENUM_FIELDS) {
    if (chosen[field] === SCENE_DEFAULTS[field]) delete next[field];
    else next[field] = chosen[field];
  }
  return next;
}

/** One real request (`list`, a single item) with the new URL and key; a refusal is reported, not thrown. */
async function testConnection(
  ctx: Context,
  baseUrl: string,
  apiKey: string,
): Promise<{ ok: true } | { ok: false; error: CliError }> {
  const { GenAerialClient, createDispatcher } = await import('../api/client.js');
  const dispatcher = createDispatcher();
  ctx.onCleanup(() => dispatcher.close());
  const client = new GenAerialClient({ baseUrl, apiKey, dispatcher, maxRateLimitRetries: 1 });
  const spinner = await ctx.io.spinner(`Checking the key against ${baseUrl} (listing one image)…`);
  try {
    const page = await client.list({ page: 0, size: 1 }, { signal: ctx.signal });
    spinner.succeed(`Connected: ${page.totalElements} image${page.totalElements === 1 ? '' : 's'} in your history`);
    return { ok: true };
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const failure = error instanceof CliError ? error : new CliError(String(error), ExitCode.Unexpected, 'Unexpected');
    const why =
      failure instanceof ApiError && failure.exitCode === ExitCode.Auth
        ? 'the service refused this API key'
        : failure instanceof ApiError
          ? `${failure.code} — ${failure.message}`
          : failure.message;
    spinner.fail(`Test call failed: ${why}`);
    return { ok: false, error: failure };
  }
}
