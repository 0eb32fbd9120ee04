// Saving a generated image, for every face: `generate` and `generate-async
// --listen`, the library's generateToFile, the MCP server's generate_image.
// The target is checked before anything is sent (an existing file needs
// `overwrite`; a directory, a dangling link, a block device are refused; a
// missing directory is made; a temp file is created there and removed), and
// with a `root` it must be a plain name inside that directory, no link leading
// out (files/confined-path.ts). The image then takes the one path from socket
// to file (api/image-download.ts into files/jpeg-file.ts): a temp file beside
// the target, renamed into place once whole and checked, with the GPS EXIF and
// the AI-generated note spliced in as it streams (files/image-metadata.ts).
// Failures are the neutral ones of api/errors.ts.
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type { Writable } from 'node:stream';
import type { GenAerialClient } from '../api/client.js';
import { FileError } from '../api/errors.js';
import type { ChunkEditor, ImageSink, ReceivedImage } from '../api/image-download.js';
import type { GenerationRequest, ImageRecord } from '../api/schema.js';
import { confinedPath, isInside } from '../files/confined-path.js';
import { checkOutputPath, destinationFor, saveImage, StreamDestination, type OutputTarget, type WrittenJpeg } from '../files/jpeg-file.js';
import type { Redact } from '../text/secrets.js';

export type { OutputTarget } from '../files/jpeg-file.js';
/** For a face that writes into a device or FIFO (the CLI): opened before anything is sent, then given as `stream`. */
export { openSpecialOutput } from '../files/jpeg-file.js';

/** Where an image may go and how the caller names it. */
export interface TargetRules {
  /** Replace a file already there; otherwise one is never replaced, even one that appears while the image arrives. */
  overwrite: boolean;
  /** When given, the target must be a plain relative name that stays inside this directory, whatever links say. */
  root?: string;
  /** How messages name the target before its path (the CLI names its flag, the MCP server its argument), or nothing. */
  label: string;
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
    throw new FileError(`${rules.label ? `${rules.label} ` : ''}${JSON.stringify(path)} leads out of the output directory; name a file inside it`, 'OutsideRoot', path);
  }
  return target;
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
   * A path (checked here, before anything is sent) or a target checked
   * already by checkImageTarget. Absent: the image goes into `stream` alone
   * (standard output).
   */
  target?: string | OutputTarget;
  /** Written into the file as it streams; false keeps the bytes exactly as received. */
  metadata: ImageMetadata | false;
  /**
   * Where a special target (a device or FIFO the face opened) or standard
   * output is written, `path` naming it: written into, never replaced, never
   * asked for twice. Without one, a special target is refused.
   */
  stream?: { stream: Writable; path: string; end: boolean };
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
  const target = typeof options.target === 'string' ? await checkImageTarget(options.target, options) : options.target;
  const { stream } = options;
  if (target?.special && !stream) {
    throw new FileError(`${options.label ? `${options.label} ` : ''}${target.path} is a ${target.special}; only regular files are saved here`, 'NotARegularFile', target.path);
  }
  if (!target && !stream) throw new TypeError('saveGeneratedImage needs a target or a stream');
  const destination =
    target && !target.special ? destinationFor(target, undefined, { force: options.overwrite, editor }) : new StreamDestination(stream!.stream, { path: stream!.path, editor, end: stream!.end });
  const written: WrittenJpeg = await saveImage(destination, transfer);
  return { path: target?.path ?? stream!.path, bytes: written.bytes };
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
