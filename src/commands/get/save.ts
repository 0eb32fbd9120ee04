// How `aerial get` saves one image of the history: through the one image path
// (client.downloadInto into a destination of files/jpeg-file.ts), with the GPS
// EXIF and AI-generated note `generate` writes, made from what the listing
// says of the image. One function, so that what saves it can change in one place.
import type { ImageRecord } from '../../api/schema.js';
import type { Context } from '../../cli/context.js';
import type { OutputTarget, WrittenJpeg } from '../../files/jpeg-file.js';
import { VERSION } from '../../bundle/version.js';

export interface HistoryImageOptions {
  /** A checked file, device or FIFO (checkOutputPath); standard output when absent. */
  target?: OutputTarget;
  force: boolean;
  /** False: the bytes exactly as the image's URL serves them. */
  metadata: boolean;
}

/** Downloads `record`'s image from its temporary URL (never with the API key) to the target. */
export async function saveHistoryImage(ctx: Context, record: ImageRecord, options: HistoryImageOptions): Promise<WrittenJpeg> {
  const [{ destinationFor, openSpecialOutput, saveImage, StreamDestination }, metadata] = await Promise.all([
    import('../../files/jpeg-file.js'),
    options.metadata ? import('../../files/image-metadata.js') : undefined,
  ]);
  const scene = metadata?.sceneOfRecord(record as unknown as Record<string, unknown>);
  const created = Date.parse(record.createdAt);
  const editor =
    metadata && scene
      ? metadata.createMetadataSplicer({ request: scene, software: `aerial ${VERSION}`, createdAt: Number.isNaN(created) ? null : new Date(created), redact: ctx.io.redact })
      : undefined;
  const { target } = options;
  // A FIFO waits here for its reader, before anything is downloaded.
  const special = target?.special ? await openSpecialOutput(target, '--output', ctx.signal, (message) => ctx.io.info(message)) : undefined;
  if (special) ctx.onCleanup(() => void special.destroy());
  const destination = target
    ? destinationFor(target, special, { force: options.force, editor })
    : new StreamDestination(ctx.io.stdout, { path: 'standard output', editor, end: false });
  const client = await ctx.client();
  return saveImage(destination, (sink) => client.downloadInto(record.url, sink, { signal: ctx.signal }));
}
