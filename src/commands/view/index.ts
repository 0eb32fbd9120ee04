// `aerial view <file.jpg | id>…`: images shown in the terminal, by the
// terminal's own image protocol or in half-block characters. The work lives in
// ../preview/; this file declares the interface, so that --help loads nothing heavy.
import type { Command } from 'commander';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import type { ImageRecord } from '../../api/schema.js';
import type { PreviewFlags } from '../../preview/show.js';

/** Largest image read from standard input, as from the service. */
const MAX_STDIN_BYTES = 256 * 1024 * 1024;

export const registration: CommandRegistration = { name: 'view', aliases: ['show'], register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Images:')
    .description('show images in the terminal: JPEG files, or image ids from your history')
    .argument('<image...>', 'a JPEG file, "-" for standard input, or an image id (see aerial list)')
    .option('--protocol <name>', 'auto, kitty, iterm, sixel or blocks (half-block characters); default auto, from the environment')
    .option('--width <cols>', 'width in terminal columns (default: the terminal\'s width, and no taller than it)')
    .addHelpText(
      'after',
      `
The protocol is told from the environment: kitty and Ghostty (kitty graphics), iTerm2,
WezTerm and mintty (iTerm2 inline images), foot, mlterm and contour (sixel), anything
else half-block characters in 24-bit colour (COLORTERM=truecolor) or 256 colours.
Inside tmux the terminal's own protocol is used when tmux lets it through
(set -g allow-passthrough on), half-blocks otherwise; inside GNU screen, half-blocks.
The image keeps its proportions. An id, or its first characters (at least 4, the start
of one id only), is looked up in your history and its image downloaded from its
temporary URL (the API key is not sent there).

Without a terminal there is nothing to show the image on: exit 2, unless --protocol
names one, which writes its escape sequences to stdout anyway.

Examples:
  $ aerial view tokyo.jpg
  $ aerial view 0f8c2b1e 7d41a9c3 --width 60
  $ aerial view out/*.jpg --protocol blocks
  $ aerial generate --sandbox --lat 48.8584 --lng 2.2945 -o - | aerial view -`,
    )
    .action(action<PreviewFlags>(runView));
}

async function runView(ctx: Context, options: PreviewFlags, args: string[]): Promise<void> {
  const { planPreview, showImage } = await import('../../preview/show.js');
  // The flags and the terminal first: a command that can show nothing sends nothing.
  const plan = await planPreview(ctx.io, options);
  const { classifySources, readStdin } = await import('../../preview/sources.js');
  const { MemorySink } = await import('../../api/memory-sink.js');
  const sources = await classifySources(args);
  const ids = sources.flatMap((source) => (source.kind === 'id' ? [source.id] : []));
  const client = ids.length > 0 ? await ctx.client() : undefined;
  const { findImages } = await import('../shared/image-lookup.js');
  const records = client
    ? await findImages(client, ids, { signal: ctx.signal, notFoundNote: 'a file of that name does not exist either' })
    : new Map<string, ImageRecord>();
  const caption = sources.length > 1;
  for (const source of sources) {
    if (source.kind === 'file') {
      await showImage(ctx.io, plan, source.path, source.path, caption);
    } else if (source.kind === 'stdin') {
      await showImage(ctx.io, plan, await readStdin(ctx.io.stdin, MAX_STDIN_BYTES), 'standard input', caption);
    } else {
      const sink = new MemorySink();
      await client!.downloadInto(records.get(source.id)!.url, sink, { signal: ctx.signal });
      await showImage(ctx.io, plan, sink.bytes, records.get(source.id)!.id, caption);
    }
  }
}
