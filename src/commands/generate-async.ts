// `aerial generate-async`: accepted now, delivered later by webhook.
import type { Command } from 'commander';
import { UsageError } from '../api/errors.js';
import type { ActionFactory } from '../cli.js';
import type { Context } from '../context.js';
import { addLocationOptions, addSceneOptions, sceneInputFrom } from './scene-options.js';

interface GenerateAsyncOptions {
  callbackUrl?: string;
  [scene: string]: unknown;
}

export function register(program: Command, action: ActionFactory): void {
  const command = program
    .command('generate-async')
    .helpGroup('Images:')
    .description('start a generation whose result is POSTed to a webhook');
  addLocationOptions(command);
  addSceneOptions(command);
  command
    .option('--callback-url <url>', 'absolute http(s) URL that receives the result callback')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial generate-async --lat 40.6892 --lng -74.0445 --callback-url https://hooks.example.com/aerial
  $ aerial generate-async --sandbox --at "51.5007,-0.1246" --callback-url http://127.0.0.1:8080/hook --json`,
    )
    .action(action<GenerateAsyncOptions>(runGenerateAsync));
}

export function validateCallbackUrl(raw: string | undefined, flag = '--callback-url'): string {
  if (raw === undefined || raw.trim() === '') throw new UsageError(`${flag} is required: an absolute http(s) URL for the result callback`);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`${flag} must be an absolute http(s) URL; got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an absolute http(s) URL; got '${raw}'`);
  }
  return url.toString();
}

export async function runGenerateAsync(ctx: Context, options: GenerateAsyncOptions): Promise<void> {
  const { buildGenerationRequest } = await import('../request.js');
  const request = buildGenerationRequest(sceneInputFrom(options), ctx.settings().sceneDefaults);
  const callbackUrl = validateCallbackUrl(options.callbackUrl);

  const client = await ctx.client();
  const accepted = await client.generateAsync(request, callbackUrl, { signal: ctx.signal });
  if (ctx.io.json) {
    ctx.io.outJson({ requestId: accepted.requestId, status: accepted.status });
    return;
  }
  ctx.io.success(`Accepted: the result will be POSTed to ${callbackUrl}`);
  ctx.io.out(accepted.requestId);
}
