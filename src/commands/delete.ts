// `aerial delete <id...>`: permanent deletion, confirmed on a terminal.
import type { Command } from 'commander';
import { asCliError, CliError, ExitCode, UsageError } from '../errors.js';
import type { ActionFactory, CommandRegistration, Context } from '../context.js';
import { printable } from '../printable.js';

interface DeleteOptions {
  yes?: boolean;
}

export const registration: CommandRegistration = { name: 'delete', aliases: ['rm'], register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Images:')
    .description('delete images from your history permanently')
    .argument('<id...>', 'image ids (see aerial list)')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial delete 0f8c2b1e
  $ aerial delete 0f8c2b1e 7d41a9c3 --yes
  $ aerial list --json | jq -r '.content[].id' | xargs aerial delete --yes`,
    )
    .action(action<DeleteOptions>(runDelete));
}

export async function runDelete(ctx: Context, options: DeleteOptions, args: string[]): Promise<void> {
  const ids = [...new Set(args.map((id) => id.trim()))];
  // Every id is checked before the first is sent: a bad third id must not leave the first two deleted.
  const { checkImageId } = await import('../api/client.js');
  for (const id of ids) checkImageId(id);

  if (!options.yes) {
    if (!ctx.io.interactive) {
      throw new UsageError('refusing to delete without confirmation: pass --yes (no terminal to ask on)');
    }
    const { confirm } = await import('@inquirer/prompts');
    const what = ids.length === 1 ? `image ${printable(ids[0]!, 80)}` : `${ids.length} images (${printable(ids.join(', '))})`;
    const sure = await confirm(
      { message: `Delete ${what} permanently?`, default: false },
      { input: ctx.io.stdin, output: ctx.io.stderr, signal: ctx.signal },
    );
    if (!sure) {
      ctx.io.info('Nothing deleted.');
      return;
    }
  }

  const client = await ctx.client();
  const deleted: string[] = [];
  const failed: Array<{ id: string; error: CliError }> = [];
  for (const id of ids) {
    try {
      await client.delete(id, { signal: ctx.signal });
      deleted.push(id);
      ctx.io.success(`Deleted ${printable(id, 80)}`);
    } catch (error) {
      const failure = asCliError(error);
      if (!failure || ctx.signal.aborted) throw error;
      failed.push({ id, error: failure });
      // Auth and network failures will fail every id alike: stop rather than repeat them.
      if (failed.length === 1 && failure.exitCode !== ExitCode.NotFound && failure.exitCode !== ExitCode.Server) break;
      if (ids.length > 1) ctx.io.warn(`${id}: ${failure.code} — ${failure.message}`);
    }
  }

  if (ctx.io.json) {
    ctx.io.outJson({ deleted, failed: failed.map(({ id, error }) => ({ id, ...error.toJSON() })) });
  } else if (!ctx.io.stdoutIsTTY) {
    // Scripts get the deleted ids as data; people already saw them on stderr.
    for (const id of deleted) ctx.io.out(id);
  }
  if (failed.length > 0) {
    const first = failed[0]!.error;
    if (ids.length === 1) throw first;
    throw new CliError(
      `${failed.length} of ${ids.length} deletions failed (first: ${failed[0]!.id}: ${first.message})`,
      first.exitCode,
      first.code,
      first.status,
    );
  }
}
