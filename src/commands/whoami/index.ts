// `aerial whoami`: which profile, service and key a command would use, where
// each comes from, and whether the service takes the key (one list call of a
// single image, which also gives the size of the history). The v1 API has no
// credit balance to show.
import type { Command } from 'commander';
import { asCliError, CliError, ExitCode } from '../../lifecycle/errors.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';

export const registration: CommandRegistration = { name: 'whoami', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('show the profile, service and API key in use, and check the key with the service')
    .addHelpText(
      'after',
      `
The key is named by where it comes from (--api-key, AERIAL_API_KEY, the profile, or
the sandbox) and its last 4 characters at most. The check is one list request of one
image: exit 0 when the service takes the key, 3 when it refuses it or there is none.
The v1 API reports no credit balance: a generation it refuses for credits exits 4.

Examples:
  $ aerial whoami
  $ aerial whoami --profile work
  $ aerial whoami --json | jq -r .keySource`,
    )
    .action(action(runWhoami));
}

/** The key's last 4 characters, when it is long enough that they give nothing away. */
export function keyEnding(key: string): string | undefined {
  return key.length >= 12 ? key.slice(-4) : undefined;
}

interface Identity {
  profile: string;
  profileSource: string;
  baseUrl: string;
  baseUrlSource: string;
  keySource: 'flag' | 'env' | 'profile' | 'sandbox' | null;
  keyEnding: string | null;
  /** Whether the service took the key: null when it was not asked (no key). */
  accepted: boolean | null;
  images: number | null;
  /** Always null: the v1 API has no balance endpoint. */
  credits: null;
}

const KEY_SOURCES = { flag: '--api-key', env: 'AERIAL_API_KEY', profile: 'the config profile', sandbox: 'the sandbox (its default account)' } as const;
const SOURCES: Record<string, string> = { flag: 'flag', env: 'environment', profile: 'config profile', default: 'default' };

async function runWhoami(ctx: Context): Promise<void> {
  const settings = ctx.settings();
  const sandbox = Boolean(ctx.globals.sandbox);
  const key = settings.apiKey.value?.trim();
  const keySource = sandbox && settings.apiKey.source !== 'flag' ? 'sandbox' : key ? (settings.apiKey.source as 'flag' | 'env' | 'profile') : null;
  const identity: Identity = {
    profile: settings.profile.value,
    profileSource: settings.profile.source,
    baseUrl: settings.baseUrl.value,
    baseUrlSource: settings.baseUrl.source,
    keySource,
    keyEnding: null,
    accepted: null,
    images: null,
    credits: null,
  };
  let failure: CliError | undefined;
  if (keySource !== null) {
    const endpoint = await ctx.endpoint();
    identity.baseUrl = endpoint.baseUrl;
    if (sandbox) identity.baseUrlSource = 'sandbox';
    identity.keyEnding = keyEnding(endpoint.apiKey) ?? null;
    const client = await ctx.client();
    const spinner = await ctx.io.spinner(`Checking the key with ${endpoint.baseUrl}…`);
    try {
      const page = await client.list({ page: 0, size: 1 }, { signal: ctx.signal });
      spinner.stop();
      identity.accepted = true;
      identity.images = page.totalElements;
    } catch (error) {
      spinner.stop();
      const cause = asCliError(error);
      // A refusal of the key is this command's answer; anything else (no network, a server down) is its failure.
      if (!cause || cause.exitCode !== ExitCode.Auth || ctx.signal.aborted) throw error;
      identity.accepted = false;
      failure = cause;
    }
  } else {
    // The endpoint's own refusal (exit 3), said once the rest is shown.
    failure = await ctx.endpoint().then(
      () => undefined,
      (error: unknown) => asCliError(error) ?? new CliError(String(error), ExitCode.Unexpected, 'Unexpected'),
    );
  }
  print(ctx, identity);
  if (failure) throw failure;
}

function print(ctx: Context, identity: Identity): void {
  const { io } = ctx;
  if (io.json) {
    io.outJson(identity);
    return;
  }
  const { style } = io;
  const key =
    identity.keySource === null
      ? style.red('none')
      : `from ${KEY_SOURCES[identity.keySource]}${identity.keyEnding ? `, ending …${identity.keyEnding}` : ''}`;
  const accepted =
    identity.accepted === null ? 'not checked (no key)' : identity.accepted ? `${style.green('✔')} accepted; ${identity.images} image${identity.images === 1 ? '' : 's'} in the history` : `${style.red('✖')} refused`;
  const lines = [
    ['profile', `${identity.profile} (${SOURCES[identity.profileSource] ?? identity.profileSource})`],
    ['service', `${identity.baseUrl} (${SOURCES[identity.baseUrlSource] ?? identity.baseUrlSource})`],
    ['API key', key],
    ['check', accepted],
    ['credits', 'not reported: the v1 API has no balance (a generation refused for credits exits 4)'],
  ];
  io.out(lines.map(([label, value]) => `${label!.padEnd(8)} ${value}`).join('\n'));
}
