// `aerial init`: first-run setup for a person at a terminal — service URL,
// API key (hidden), checked at once with one real `list` call and asked for
// again while the service refuses it, then optional scene defaults, saved
// together at the end. Scripts use `aerial config set`.
import type { Command } from 'commander';
import { ApiError } from '../../api/errors.js';
import { asCliError, CliError, ExitCode } from '../../lifecycle/errors.js';
import type { Network } from '../../api/network.js';
import { formatTrace, type ActionFactory, type CommandRegistration, type Context } from '../../cli/context.js';

export const registration: CommandRegistration = { name: 'init', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('set up aerial step by step: service URL, API key (checked at once), defaults')
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
  const prompts = await import('../shared/prompts.js');
  prompts.requireTerminal(ctx, "aerial init (use 'aerial config set base-url|api-key' in scripts)");
  // The environment's network settings are checked before any question is asked.
  const network = await ctx.network();
  const config = await import('../../config/config.js');
  const profile = config.selectedProfile(ctx.globals, ctx.env).value;
  const current = config.profileOf(config.readConfig(ctx.env), profile) ?? {};
  const { style } = ctx.io;

  ctx.io.info(`Setting up ${style.bold(`profile ${profile}`)} in ${style.dim(config.configPath(ctx.env))}`);
  const baseUrl = await chooseService(ctx, ctx.globals.baseUrl ?? current.baseUrl);
  // The key is checked as soon as it is typed, and asked for again while the service refuses it.
  let apiKey: string;
  for (let keep = Boolean(current.apiKey); ; keep = false) {
    apiKey = (await prompts.promptApiKey(ctx, keep)) ?? current.apiKey!;
    ctx.io.addSecret(apiKey);
    const connected = await testConnection(ctx, network, baseUrl, apiKey);
    if (connected.ok) break;
    if (connected.error.exitCode === ExitCode.Auth) {
      ctx.io.info('Enter the key again (Ctrl-C stops; nothing has been saved).');
      continue;
    }
    if (await prompts.promptConfirm(ctx, 'Go on and save these settings anyway?', false)) break;
    throw connected.error;
  }

  let defaults = current.defaults;
  if (await prompts.promptConfirm(ctx, 'Choose default scene settings now? (each can also be a flag)', false)) {
    defaults = await chooseDefaults(ctx, current.defaults ?? {});
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

/**
 * Where the profile's requests go: the public service (the default), the
 * bundled sandbox as `aerial sandbox` serves it, or a URL of the user's. A URL
 * pasted with the API path is taken without it, and the user is told.
 */
async function chooseService(ctx: Context, current: string | undefined): Promise<string> {
  const [config, { validateBaseUrl, hadApiPath }, prompts, { DEFAULT_HOST, DEFAULT_PORT }] = await Promise.all([
    import('../../config/config.js'),
    import('../../input/flags.js'),
    import('../shared/prompts.js'),
    import('../../sandbox/server.js'),
  ]);
  const sandboxUrl = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;
  let known: string | undefined;
  try {
    known = current === undefined ? undefined : validateBaseUrl(current, 'base URL');
  } catch {
    // A broken stored value is simply not offered again.
  }
  const choice = await prompts.promptSelect(
    ctx,
    'Service',
    [
      { value: 'public', name: `GenAerial (${config.DEFAULT_BASE_URL})`, description: 'the public service: sign up at genaerial.com for a key with free credits' },
      { value: 'sandbox', name: `The bundled sandbox (${sandboxUrl})`, description: "a local stand-in with no real credits; start it with 'aerial sandbox', which prints its key" },
      { value: 'custom', name: 'Another URL…', description: 'a GenAerial-compatible service of your own' },
    ],
    known === undefined || known === config.DEFAULT_BASE_URL ? 'public' : known === sandboxUrl ? 'sandbox' : 'custom',
  );
  if (choice === 'public') return config.DEFAULT_BASE_URL;
  if (choice === 'sandbox') {
    ctx.io.info(`Start the sandbox in another terminal with ${ctx.io.style.cyan('aerial sandbox')}; it prints the API key to enter next.`);
    return sandboxUrl;
  }
  const typed = await prompts.promptText(ctx, 'Service base URL', {
    default: known === config.DEFAULT_BASE_URL || known === sandboxUrl ? undefined : known,
    validate: (value) => {
      try {
        validateBaseUrl(value.trim(), 'the base URL');
        return true;
      } catch (error) {
        return (error as Error).message;
      }
    },
  });
  const baseUrl = validateBaseUrl(typed, 'the base URL');
  if (hadApiPath(typed)) ctx.io.info(`Using ${baseUrl}: aerial adds the API path (/api/external/v1/…) itself.`);
  return baseUrl;
}

/** Selects for every scene default; only choices that differ from the built-in defaults are stored. */
async function chooseDefaults(
  ctx: Context,
  stored: Partial<Record<string, string | boolean>>,
): Promise<Record<string, string | boolean>> {
  const [{ SCENE_DEFAULTS, SCENE_ENUM_FIELDS }, { resolveSettings }, prompts] = await Promise.all([
    import('../../api/enums.js'),
    import('../../config/config.js'),
    import('../shared/prompts.js'),
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
  network: Network,
  baseUrl: string,
  apiKey: string,
): Promise<{ ok: true } | { ok: false; error: CliError }> {
  const [{ GenAerialClient }, { DEFAULT_RETRY_POLICY }] = await Promise.all([import('../../api/client.js'), import('../../api/retry.js')]);
  // A test call retries a 429 once: it is a check, not a job.
  const retry = { ...DEFAULT_RETRY_POLICY, rateLimitedAttempts: 2 };
  const client = new GenAerialClient({ baseUrl, apiKey, ...network, retry, onTrace: (trace) => ctx.io.debug(formatTrace(trace)) });
  const spinner = await ctx.io.spinner(`Checking the key against ${baseUrl} (listing one image)…`);
  try {
    const page = await client.list({ page: 0, size: 1 }, { signal: ctx.signal });
    spinner.succeed(`Connected: ${page.totalElements} image${page.totalElements === 1 ? '' : 's'} in your history`);
    return { ok: true };
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const failure = asCliError(error) ?? new CliError(String(error), ExitCode.Unexpected, 'Unexpected');
    const why =
      error instanceof ApiError && failure.exitCode === ExitCode.Auth
        ? 'the service refused this API key'
        : error instanceof ApiError
          ? `${failure.code} — ${failure.message}`
          : failure.message;
    spinner.fail(`Test call failed: ${why}`);
    return { ok: false, error: failure };
  }
}
