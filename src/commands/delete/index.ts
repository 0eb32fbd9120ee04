// `aerial delete <id...>`: permanent deletion, confirmed on a terminal, of
// images found in the history first (by whole id or a unique start of one).
import type { Command } from 'commander';
import { asCliError, CliError, ExitCode, UsageError } from '../../lifecycle/errors.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { printable } from '../../text/printable.js';

interface DeleteOptions {
  yes?: boolean;
}

export const registration: CommandRegistration = { name: 'delete', aliases: ['rm'], register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Images:')
    .description('delete images from your history permanently')
    .argument('<id...>', 'image ids (see aerial list), or their first characters (at least 4)')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      `
Each id is looked up in your history first, so that nothing is asked or deleted for an
id that is not there (exit 5). The first characters of an id do, when they start one
id only; when they start several, nothing is deleted and the ids are listed (exit 2).

Examples:
  $ aerial delete 0f8c2b1e
  $ aerial delete 0f8c2b1e 7d41a9c3 --yes
  $ aerial list --json | jq -r '.content[].id' | xargs aerial delete --yes`,
    )
    .action(action<DeleteOptions>(runDelete));
}

export async function runDelete(ctx: Context, options: DeleteOptions, args: string[]): Promise<void> {
  const words = [...new Set(args.map((id) => id.trim()))];
  // Every id is checked before the first is sent: a bad third id must not leave the first two deleted.
  const { checkImageId } = await import('../../api/client.js');
  for (const word of words) checkImageId(word);
  if (!options.yes && !ctx.io.interactive) {
    throw new UsageError('refusing to delete without confirmation: pass --yes (no terminal to ask on)');
  }

  // What the words name, before asking: no question about an image that is not there, and
  // the question names the whole ids when the user typed their first characters.
  const client = await ctx.client();
  const { findImages } = await import('../shared/image-lookup.js');
  const records = await findImages(client, words, { signal: ctx.signal });
  const ids = [...new Set(words.map((word) => records.get(word)!.id))];

  if (!options.yes) {
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
