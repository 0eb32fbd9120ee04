// `aerial get <id>`: saves one image of the history as a JPEG, found by its id
// or the first characters of one, as `delete` and `view` find them.
import type { Command } from 'commander';
import { UsageError } from '../../lifecycle/errors.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';

interface GetOptions {
  output?: string;
  force?: boolean;
  /** false with --no-metadata. */
  metadata?: boolean;
}

export const registration: CommandRegistration = { name: 'get', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Images:')
    .description('save one image of your history as a JPEG')
    .argument('<id>', 'an image id (see aerial list), or its first characters (at least 4)')
    .option('-o, --output <file>', 'where to save it ("-" for stdout when it is not a terminal; default aerial-<lat>_<lng>-<id>.jpg)')
    .option('-f, --force', 'overwrite the output file if it exists')
    .option('--no-metadata', 'save the bytes exactly as the image URL serves them: no GPS EXIF, no AI-generated note')
    .addHelpText(
      'after',
      `
The id is looked up in your history (the first characters do when they start one id
only; exit 2 when they start several, 5 when none). The image is downloaded from its
temporary URL, without the API key, checked, and saved as generate saves: atomically,
an existing file only with --force, with GPS EXIF and the AI-generated note unless
--no-metadata.

Examples:
  $ aerial get 0f8c2b1e
  $ aerial get 0f8c2b1e -o tokyo.jpg --force
  $ aerial get 0f8c2b1e --no-metadata -o - | sha256sum`,
    )
    .action(action<GetOptions>(runGet));
}

/** The default file name: the place, then the id (made safe: it is the service's text). */
export async function defaultGetName(lat: number, lng: number, id: string): Promise<string> {
  const { boundedName, safeNamePart } = await import('../../files/file-names.js');
  return boundedName(`aerial-${lat}_${lng}-${safeNamePart(id)}`, '.jpg');
}

async function runGet(ctx: Context, options: GetOptions, args: string[]): Promise<void> {
  const word = args[0]!.trim();
  const toStdout = options.output === '-';
  if (toStdout && ctx.io.stdoutIsTTY) {
    throw new UsageError('--output - writes binary JPEG data to stdout; redirect it to a file or pipe (stdout is a terminal)');
  }
  const [{ checkImageId }, { checkImageTarget, saveListedImage }, { prepareOutput }, { findImages }, { formatBytes }, { VERSION }] = await Promise.all([
    import('../../api/client.js'),
    import('../../operations/save-image.js'),
    import('../shared/saved-image.js'),
    import('../shared/image-lookup.js'),
    import('../../text/bytes.js'),
    import('../../build-outputs/version.js'),
  ]);
  checkImageId(word);
  const rules = { overwrite: Boolean(options.force), label: '--output' };
  // A refused --output is reported before the history is walked.
  if (options.output !== undefined && !toStdout) await checkImageTarget(options.output, rules);
  const client = await ctx.client();
  const record = (await findImages(client, [word], { signal: ctx.signal })).get(word)!;
  const { latitude, longitude } = record.coordinates;
  // Checked again, and a device or FIFO opened: a FIFO waits here for its reader, before anything is downloaded.
  const target = await prepareOutput(ctx, options.output ?? (await defaultGetName(latitude, longitude, record.id)), rules);
  const spinner = await ctx.io.spinner(`Downloading image ${record.id}…`);
  try {
    const written = await saveListedImage(client, record, {
      ...rules,
      target,
      metadata: options.metadata === false ? false : { software: `aerial ${VERSION}`, redact: ctx.io.redact },
      signal: ctx.signal,
    });
    if (toStdout) {
      spinner.stop();
      ctx.io.success(`Wrote ${formatBytes(written.bytes)} JPEG to stdout`);
      return;
    }
    spinner.succeed(`Saved ${target.path} (${formatBytes(written.bytes)})`);
    if (ctx.io.json) ctx.io.outJson({ id: record.id, file: target.path, bytes: written.bytes });
    else ctx.io.out(target.path);
  } catch (error) {
    if (ctx.signal.aborted) spinner.stop();
    else spinner.fail('Download failed');
    throw error;
  }
}
