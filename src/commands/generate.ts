// `aerial generate`: one synchronous generation, streamed to a JPEG on disk.
import type { Command } from 'commander';
import { UsageError } from '../api/errors.js';
import type { ActionFactory } from '../cli.js';
import type { Context } from '../context.js';
import { addLocationOptions, addSceneOptions, sceneInputFrom } from './scene-options.js';

interface GenerateOptions {
  output?: string;
  force?: boolean;
  [scene: string]: unknown;
}

export function register(program: Command, action: ActionFactory): void {
  const command = program
    .command('generate')
    .description('generate an aerial image and save it as a JPEG')
    .helpGroup('Images:');
  addLocationOptions(command);
  addSceneOptions(command);
  command
    .option('-o, --output <file>', 'where to save the JPEG ("-" for stdout when it is not a terminal)')
    .option('-f, --force', 'overwrite the output file if it exists')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial generate --lat 40.6892 --lng -74.0445 -o liberty.jpg
  $ aerial generate --at "48.8584,2.2945" --zoom High --angle Low --bearing NE -o eiffel.jpg
  $ aerial generate --sandbox --lat 27.1751 --lng 78.0421 --weather GoldenHour --tag landmark -o taj.jpg
  $ aerial generate --lat 35.6586 --lng 139.7454 --resolution UHD -o - > tokyo.jpg`,
    )
    .action(action<GenerateOptions>(runGenerate));
}

export function defaultOutputName(lat: number, lng: number, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `aerial-${lat}_${lng}-${stamp}.jpg`;
}

export async function runGenerate(ctx: Context, options: GenerateOptions): Promise<void> {
  const { buildGenerationRequest } = await import('../request.js');
  const request = buildGenerationRequest(sceneInputFrom(options), ctx.settings().sceneDefaults);

  const toStdout = options.output === '-';
  if (toStdout && ctx.io.stdoutIsTTY) {
    throw new UsageError('--output - writes binary JPEG data to stdout; redirect it to a file or pipe (stdout is a terminal)');
  }
  const { checkOutputPath, pipeJpeg, writeJpegAtomically } = await import('../jpeg-file.js');
  const target = toStdout
    ? '-'
    : await checkOutputPath(options.output ?? defaultOutputName(request.coordinates.lat, request.coordinates.lng), Boolean(options.force));

  const client = await ctx.client();
  const where = `${request.coordinates.lat}, ${request.coordinates.lng}`;
  const spinner = await ctx.io.spinner(`Generating ${request.resolution} image of ${where}…`);
  const started = Date.now();
  const tick = setInterval(() => spinner.update(`Generating ${request.resolution} image of ${where}… ${Math.round((Date.now() - started) / 1000)}s`), 1000);
  try {
    const image = await client.generate(request, { signal: ctx.signal });
    spinner.update(`Downloading ${request.resolution} image of ${where}…`);
    if (target === '-') {
      const bytes = await pipeJpeg(image.body, ctx.io.stdout, ctx.signal);
      spinner.stop();
      ctx.io.info(`${ctx.io.style.green('✔')} Wrote ${formatBytes(bytes)} JPEG to stdout`);
      return;
    }
    const written = await writeJpegAtomically(image.body, target, {
      force: Boolean(options.force),
      signal: ctx.signal,
      expectedLength: image.contentLength,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    spinner.succeed(`Saved ${written.path} (${formatBytes(written.bytes)}, ${seconds}s)`);
    if (ctx.io.json) {
      ctx.io.outJson({ file: written.path, bytes: written.bytes, request });
    } else {
      ctx.io.out(written.path);
    }
  } catch (error) {
    spinner.fail('Generation failed');
    throw error;
  } finally {
    clearInterval(tick);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
