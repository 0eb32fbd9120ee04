// `aerial generate`: one synchronous generation, streamed to a JPEG on disk.
import type { Command } from 'commander';
import { asCliError, BrokenPipeError, UsageError } from '../../lifecycle/errors.js';
import { formatBytes } from '../../text/bytes.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { VERSION } from '../../build-outputs/version.js';
import { addLocationOptions, addSceneOptions, sceneInputFrom } from '../shared/scene-options.js';
import { PREVIEW_HELP } from '../shared/help.js';
import { defaultOutputName, prepareOutput, wantsPreview } from '../shared/saved-image.js';

interface GenerateOptions {
  output?: string;
  force?: boolean;
  interactive?: boolean;
  /** false with --no-metadata. */
  metadata?: boolean;
  /** --preview / --no-preview; the config's defaults.preview when neither. */
  preview?: boolean;
  [scene: string]: unknown;
}

export const registration: CommandRegistration = { name: 'generate', register };

function register(command: Command, action: ActionFactory): void {
  command
    .description('generate an aerial image and save it as a JPEG')
    .helpGroup('Images:');
  addLocationOptions(command);
  addSceneOptions(command);
  command
    .option('-o, --output <file>', 'where to save the JPEG ("-" for stdout when it is not a terminal; a device or FIFO is written into)')
    .option('-f, --force', 'overwrite the output file if it exists')
    .option('-i, --interactive', 'ask for the location and scene choices (the default on a terminal when --lat/--lng are missing)')
    .option('--no-metadata', 'save the bytes exactly as received: no GPS EXIF, no AI-generated note')
    .option('--preview', PREVIEW_HELP)
    .option('--no-preview', 'do not show the image (when config defaults.preview is true)')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial generate --lat 40.6892 --lng -74.0445 -o liberty.jpg
  $ aerial generate --at "48.8584,2.2945" --zoom High --angle Low --bearing NE -o eiffel.jpg
  $ aerial generate --lat 35.6586 --lng 139.7454 --resolution UHD -o - > tokyo.jpg
  $ aerial generate --sandbox --interactive      # asks for the location and each scene choice

Before anything is sent, --output is checked: an existing file needs --force, a
dangling link or a directory is refused, and a temp file is created beside it and
removed (a read-only or full disk, a missing permission, a name too long: exit 2,
nothing charged). A device or FIFO is written into, never replaced; a FIFO is opened
first, waiting for its reader.

Saved JPEGs (files and -o -) carry GPS EXIF of the location, the scene parameters and
an "AI-generated" note (EXIF ImageDescription/UserComment, XMP with the IPTC digital
source type); --no-metadata keeps the bytes exactly as the service sent them.`,
    )
    .action(action<GenerateOptions>(runGenerate));
}

/** The help of --preview, which generate-async --listen shares. */
export async function runGenerate(ctx: Context, options: GenerateOptions): Promise<void> {
  const { buildGenerationRequest, placeNotes } = await import('../../input/scene-request.js');
  const defaults = ctx.settings().sceneDefaults;
  let input = sceneInputFrom(options);
  let output = options.output;
  const toStdout = output === '-';
  if (toStdout && ctx.io.stdoutIsTTY) {
    throw new UsageError('--output - writes binary JPEG data to stdout; redirect it to a file or pipe (stdout is a terminal)');
  }
  const { checkImageTarget, saveGeneratedImage } = await import('../../operations/save-image.js');
  const rules = { overwrite: Boolean(options.force), label: '--output' };
  const prompts = await import('../shared/prompts.js');
  const interactive = prompts.mustPrompt(ctx, input, Boolean(options.interactive)) ? prompts : undefined;
  if (interactive) {
    // A refused --output is reported before any question, not after them (a FIFO is opened once they are answered).
    if (output !== undefined && !toStdout) await checkImageTarget(output, rules);
    input = await interactive.promptForScene(ctx, input, defaults);
  }
  const request = buildGenerationRequest(input, defaults, undefined, placeNotes((message) => ctx.io.info(message)));
  if (interactive) {
    output ??= await interactive.promptOutputPath(ctx, defaultOutputName(request.coordinates.lat, request.coordinates.lng), Boolean(options.force));
    ctx.io.info(ctx.io.style.dim(`Same without questions: aerial generate ${interactive.equivalentFlags(input, defaults, output)}`));
  }

  // Before anything is paid for: checked, and a device or FIFO opened (a FIFO waits here for its reader).
  const target = await prepareOutput(ctx, output ?? defaultOutputName(request.coordinates.lat, request.coordinates.lng), rules);

  const client = await ctx.client();
  const where = `${request.coordinates.lat}, ${request.coordinates.lng}`;
  const spinner = await ctx.io.spinner(`Generating ${request.resolution} image of ${where}…`);
  const started = Date.now();
  const tick = setInterval(() => spinner.update(`Generating ${request.resolution} image of ${where}… ${Math.round((Date.now() - started) / 1000)}s`), 1000);
  try {
    const written = await saveGeneratedImage(client, {
      ...rules,
      request,
      target,
      metadata: options.metadata === false ? false : { software: `aerial ${VERSION}`, redact: ctx.io.redact },
      signal: ctx.signal,
      onImage: () => spinner.update(`Downloading ${request.resolution} image of ${where}…`),
    });
    if (toStdout) {
      spinner.stop();
      ctx.io.info(`${ctx.io.style.green('✔')} Wrote ${formatBytes(written.bytes)} JPEG to stdout`);
      return;
    }
    const fileBytes = written.bytes;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    spinner.succeed(`Saved ${target.path} (${formatBytes(fileBytes)}, ${seconds}s)`);
    if (ctx.io.json) {
      ctx.io.outJson({ file: target.path, bytes: fileBytes, request });
    } else {
      ctx.io.out(target.path);
    }
    // A device or FIFO cannot be read back; the preview itself happens only on a terminal, never with --json.
    if (target.kind === 'file' && wantsPreview(ctx, options.preview as boolean | undefined)) {
      await import('../../preview/show.js').then((preview) => preview.previewSavedImage(ctx.io, target.path));
    }
  } catch (error) {
    // Interrupted (a signal, a reader gone) is said once, by the error line that follows, not as a failure.
    if (ctx.signal.aborted || asCliError(error) instanceof BrokenPipeError) spinner.stop();
    else spinner.fail('Generation failed');
    throw error;
  } finally {
    clearInterval(tick);
  }
}

