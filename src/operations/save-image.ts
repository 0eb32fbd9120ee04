// Saving a generated image, for every face: `generate`, `generate-async
// --listen` and `get`, the library's generateToFile, the MCP server's
// generate_image. Each makes one call before sending, prepareImageTarget, and
// one save after, which takes what it prepared. The target is checked before
// anything is sent (an existing file needs `overwrite`; a directory, a
// dangling link, a block device are refused; a missing directory is made; a
// temp file is created there and removed), and with a `root` it must be a
// plain name inside that directory, no link leading out
// (files/confined-path.ts); a device or FIFO is opened then too, for a face
// that writes into one (the CLI), a FIFO waiting for its reader. The image
// then takes the one path from socket to file (api/image-download.ts into
// files/jpeg-file.ts): a temp file beside the target, renamed into place once
// whole and checked, with the GPS EXIF and the AI-generated note spliced in
// as it streams (files/image-metadata.ts). Failures are the neutral ones of
// api/errors.ts.
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type { Writable } from 'node:stream';
import type { GenAerialClient } from '../api/client.js';
import { FileError } from '../api/errors.js';
import type { ChunkEditor, ImageSink, ReceivedImage } from '../api/image-download.js';
import type { GenerationRequest, ImageRecord } from '../api/schema.js';
import { confinedPath, isInside } from '../files/confined-path.js';
import { checkOutputPath, JpegFileDestination, openSpecialOutput, saveImage, StreamDestination, type OutputTarget, type WrittenJpeg } from '../files/jpeg-file.js';
import type { Redact } from '../text/secrets.js';

export type { OutputTarget } from '../files/jpeg-file.js';

/** Where an image may go and how the caller names it. */
export interface TargetRules {
  /** Replace a file already there; otherwise one is never replaced, even one that appears while the image arrives. */
  overwrite: boolean;
  /** When given, the target must be a plain relative name that stays inside this directory, whatever links say. */
  root?: string;
  /** How messages name the target before its path (the CLI names its flag, the MCP server its argument), or nothing. */
  label: string;
}

/** How a message names a path: after the caller's label for it (its flag, its argument's name), or alone. */
function named(label: string, path: string): string {
  return label ? `${label} ${path}` : path;
}

/**
 * Checks a target before anything is sent, under `rules`: the checked target,
 * or the FileError that refuses it. With a root, the directories the check
 * made are looked at once more: they must still be inside it.
 */
export async function checkImageTarget(path: string, rules: TargetRules): Promise<OutputTarget> {
  if (rules.root === undefined) return checkOutputPath(path, rules.overwrite, rules.label);
  const inside = await confinedPath(rules.root, path, rules.label || 'the name');
  const target = await checkOutputPath(inside, rules.overwrite, rules.label);
  const [top, where] = await Promise.all([realpath(rules.root), realpath(dirname(target.file))]);
  if (!isInside(top, where) || !isAbsolute(target.file)) {
    throw new FileError(`${named(rules.label, JSON.stringify(path))} leads out of the output directory; name a file inside it`, 'OutsideRoot', path);
  }
  return target;
}

/**
 * Where an image will be saved, made ready before anything is sent
 * (prepareImageTarget, or streamTarget for standard output), then given to one
 * save, which owns it from there.
 */
export type PreparedTarget = PreparedFile | PreparedStream;

interface Prepared {
  /** What is printed: absolute, as named; or the stream's name (`standard output`). */
  readonly path: string;
  /** Lets go of an opened device or FIFO (the run stopped, the request failed); nothing for a file or a given stream. Idempotent. */
  close(): void;
}

/** A regular file, replaced atomically. */
export interface PreparedFile extends Prepared {
  readonly kind: 'file';
  /** The file replaced: `path`, or for a symbolic link the file it points to, so the link stays. */
  readonly file: string;
}

/** A device or FIFO, opened and written into, never replaced; or a stream the face gave (standard output). */
export interface PreparedStream extends Prepared {
  readonly kind: NonNullable<OutputTarget['special']> | 'stream';
  readonly stream: Writable;
  /** Ended once the image is whole (an opened device or FIFO), or left open (a given stream). */
  readonly end: boolean;
}

/** How a face that writes into a device or FIFO (the CLI) opens one. */
export interface SpecialTargetOpening {
  /** Stops the wait for a FIFO's reader. */
  signal: AbortSignal;
  /** Told once when a FIFO has had no reader for a while. */
  onWait: (message: string) => void;
}

/**
 * The one step before anything is sent: checks `path` under `rules`
 * (checkImageTarget) and, when it is a device or FIFO, opens it, a FIFO
 * waiting for its reader. Without `opening`, a device or FIFO is refused: only
 * regular files are saved then. Refusals are FileErrors naming the target as
 * `rules.label` does; an abort while waiting is the signal's reason.
 */
export async function prepareImageTarget(path: string, rules: TargetRules, opening?: SpecialTargetOpening): Promise<PreparedTarget> {
  const target = await checkImageTarget(path, rules);
  if (!target.special) return { path: target.path, kind: 'file', file: target.file, close: () => {} };
  if (!opening) {
    throw new FileError(`${named(rules.label, target.path)} is a ${target.special}; only regular files are saved here`, 'NotARegularFile', target.path);
  }
  const stream = await openSpecialOutput(target, rules.label, opening.signal, opening.onWait);
  return { path: target.path, kind: target.special, stream, end: true, close: () => void stream.destroy() };
}

/** Standard output (or another stream the face holds) as a target: written into, left open, named `path`. */
export function streamTarget(stream: Writable, path: string): PreparedTarget {
  return { path, kind: 'stream', stream, end: false, close: () => {} };
}

/** GPS EXIF, the scene and the AI-generated note, as `generate` writes them. */
export interface ImageMetadata {
  /** The program that wrote the file (EXIF Software, XMP CreatorTool): `aerial 0.1.0`. */
  software: string;
  /** What every text written goes through first (secrets.ts). */
  redact: Redact;
}

/** Where a listed image (`saveListedImage`) is saved: its request and time come from the record. */
export type ListedImageOptions = Omit<SaveImageOptions, 'request'>;

export interface SaveImageOptions extends TargetRules {
  /** The request the image is made from: sent, and described in its metadata. */
  request: GenerationRequest;
  /**
   * A target made ready by prepareImageTarget or streamTarget, or a path,
   * prepared here before anything is sent (a device or FIFO refused). A
   * device, FIFO or stream is written into, never replaced, never asked for
   * twice.
   */
  target: string | PreparedTarget;
  /** Written into the file as it streams; false keeps the bytes exactly as received. */
  metadata: ImageMetadata | false;
  signal?: AbortSignal;
  /** Told when the image starts arriving. */
  onImage?: () => void;
}

export interface SavedImage {
  /** Absolute (or the stream's name). */
  path: string;
  /** As written, metadata included. */
  bytes: number;
}

/** Generates the image of `options.request` (the synchronous endpoint) and saves it under `options`. */
export function saveGeneratedImage(client: GenAerialClient, options: SaveImageOptions): Promise<SavedImage> {
  const editor = metadataEditor(options.metadata, (m) => m.createMetadataSplicer({ request: options.request, software: options.metadata ? options.metadata.software : '', redact: options.metadata ? options.metadata.redact : undefined }));
  return writeImage(options, editor, (sink) => client.generateInto(options.request, sink, { signal: options.signal, onImage: options.onImage }));
}

/** Downloads the image an async generation made, from its temporary URL (`signedUrl`), and saves it under `options`. */
export function saveImageFromUrl(client: GenAerialClient, url: string, options: SaveImageOptions): Promise<SavedImage> {
  const editor = metadataEditor(options.metadata, (m) => m.createMetadataSplicer({ request: options.request, software: options.metadata ? options.metadata.software : '', redact: options.metadata ? options.metadata.redact : undefined }));
  return writeImage(options, editor, (sink) => client.downloadInto(url, sink, { signal: options.signal, onImage: options.onImage }));
}

/**
 * Saves an image of the history from the temporary URL its listing record
 * gives (never with the API key), with the metadata `generate` writes made from
 * what the record says: its scene and when it was made. A record whose place
 * cannot be read gets none.
 */
export function saveListedImage(client: GenAerialClient, record: ImageRecord, options: ListedImageOptions): Promise<SavedImage> {
  const created = Date.parse(record.createdAt);
  const editor = metadataEditor(options.metadata, (m, metadata) => {
    const request = m.sceneOfRecord(record as unknown as Record<string, unknown>);
    if (!request) return undefined;
    return m.createMetadataSplicer({ request, software: metadata.software, createdAt: Number.isNaN(created) ? null : new Date(created), redact: metadata.redact });
  });
  return writeImage(options, editor, (sink) => client.downloadInto(record.url, sink, { signal: options.signal, onImage: options.onImage }));
}

async function writeImage(options: ListedImageOptions, editor: Promise<ChunkEditor | undefined> | undefined, transfer: (sink: ImageSink) => Promise<ReceivedImage>): Promise<SavedImage> {
  const target = typeof options.target === 'string' ? await prepareImageTarget(options.target, options) : options.target;
  const destination =
    target.kind === 'file'
      ? new JpegFileDestination(target.file, { force: options.overwrite, editor })
      : new StreamDestination(target.stream, { path: target.path, editor, end: target.end });
  let written: WrittenJpeg;
  try {
    written = await saveImage(destination, transfer);
  } catch (error) {
    // An opened device or FIFO is let go of at once: its reader sees the end rather than waiting on.
    target.close();
    throw error;
  }
  return { path: target.path, bytes: written.bytes };
}

/**
 * The metadata writer, loaded while the image is being generated, not before
 * the request: the sink is asked for once the image starts arriving, and
 * waits for it then (image-download.ts).
 */
function metadataEditor(
  metadata: ImageMetadata | false,
  make: (m: typeof import('../files/image-metadata.js'), metadata: ImageMetadata) => ChunkEditor | undefined,
): Promise<ChunkEditor | undefined> | undefined {
  if (metadata === false) return undefined;
  const editor = import('../files/image-metadata.js').then((m) => make(m, metadata));
  editor.catch(() => {}); // a failed request must not leave an unhandled rejection behind
  return editor;
}
