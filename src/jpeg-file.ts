// Streams a JPEG response to disk: never buffered whole, verified as JPEG,
// written to a temp file beside the target and moved into place only when
// complete, so a failure or Ctrl-C never leaves a half-written image.
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, WriteStream } from 'node:fs';
import { access, link, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { UsageError } from './api/errors.js';
import { CorruptImageError, JpegVerifier } from './api/jpeg-verifier.js';
import { partFileName } from './file-names.js';

export { CorruptImageError, JpegVerifier } from './api/jpeg-verifier.js';

/** Refuses an existing target before any request is sent (a refused image costs no credits). */
export async function checkOutputPath(path: string, force: boolean, flag = '--output'): Promise<string> {
  const target = resolve(path);
  if (target.endsWith('/') || basename(target) === '') throw new UsageError(`${flag} must name a file, not a directory`);
  try {
    const info = await stat(target);
    if (info.isDirectory()) throw new UsageError(`${flag} ${path} is a directory; name a file`);
    if (!force) throw new UsageError(`${flag} ${path} already exists; pass --force to overwrite`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // A path through a file (ENOTDIR), too long, looping links: the user's path, so a usage error, not a crash.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new UsageError(`${flag} ${path}: part of that path is a file, not a directory`);
    if (code !== 'ENOENT') throw new UsageError(`${flag} ${path} cannot be used (${code ?? String(error)})`);
  }
  const parent = dirname(target);
  try {
    await access(parent, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      await mkdir(parent, { recursive: true }).catch((cause: NodeJS.ErrnoException) => {
        throw new UsageError(`${flag}: cannot create directory ${parent} (${cause.code ?? cause.message})`);
      });
    } else {
      throw new UsageError(`${flag}: cannot write to directory ${parent}`);
    }
  }
  return target;
}

/**
 * The first stages of a JPEG's way to disk: the source alone when it is
 * already a verifier (the API client verifies the images it returns), else the
 * source and a new one. A stage less per image counts when a batch receives
 * sixteen at once.
 */
function verifierOf(source: Readable): { stages: [Readable, ...Transform[]]; bytes: () => number } {
  const verifier = source instanceof JpegVerifier ? source : new JpegVerifier();
  return { stages: verifier === source ? [source] : [source, verifier], bytes: () => verifier.bytes };
}

/** Changes chunks on their way into a file (metadata insertion); see MetadataSplicer. */
export interface ChunkEditor {
  /** What to write for this chunk; undefined to hold it back for now. */
  edit(chunk: Buffer): Buffer | undefined;
  /** Whatever is still held back when the stream ends. */
  rest(): Buffer | undefined;
}

export interface JpegFileOptions {
  force: boolean;
  /** Applied to the bytes as they are written (metadata insertion), without a stream stage of its own. */
  editor?: ChunkEditor;
  /**
   * How many bytes may wait in memory for the disk (Node's default is 16 KiB).
   * More lets a response be read off the connection at network speed, so the
   * connection is free for the next request sooner; the image is still never held whole.
   */
  diskBufferBytes?: number;
}

export interface WriteJpegOptions extends JpegFileOptions {
  signal?: AbortSignal;
  /** When the server announced a length, anything else means the transfer broke. */
  expectedLength?: number;
}

export interface WrittenJpeg {
  path: string;
  /** Size of the file written. */
  bytes: number;
}

// fs.WriteStream's typings declare no constructor of its own.
const FileWriteStream = WriteStream as unknown as new (path: string, options: object) => WriteStream;

/** A file write stream that passes what it writes through an editor first. */
class EditedWriteStream extends FileWriteStream {
  constructor(
    path: string,
    options: object,
    private readonly editor: ChunkEditor,
  ) {
    super(path, options);
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const edited = this.editor.edit(chunk);
    if (!edited) return callback();
    super._write(edited, encoding, callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>, callback: (error?: Error | null) => void): void {
    const edited = chunks.flatMap(({ chunk, encoding }) => {
      const out = this.editor.edit(chunk);
      return out ? [{ chunk: out, encoding }] : [];
    });
    if (edited.length === 0) return callback();
    super._writev!(edited, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const rest = this.editor.rest();
    if (!rest) return callback();
    super._write(rest, 'buffer' as BufferEncoding, callback);
  }
}

/**
 * A JPEG on its way to disk: a temp file beside the target, opened at once
 * (a batch opens it while the request is on the wire), written through `sink`,
 * then moved into place by commit() or removed by discard(). A failure or
 * Ctrl-C never leaves a half-written image under the target's name.
 */
export class TempJpegFile {
  readonly target: string;
  readonly temp: string;
  readonly sink: WriteStream;
  private readonly closed: Promise<void>;

  constructor(
    /** As the user gave it, for messages. */
    private readonly path: string,
    private readonly options: JpegFileOptions,
  ) {
    this.target = resolve(path);
    // Named by partFileName: a target of the longest name allowed still gets a temp name that fits.
    this.temp = join(dirname(this.target), partFileName(basename(this.target), randomBytes(6).toString('hex')));
    const streamOptions = { flags: 'wx', mode: 0o644, highWaterMark: options.diskBufferBytes };
    this.sink = options.editor ? new EditedWriteStream(this.temp, streamOptions, options.editor) : createWriteStream(this.temp, streamOptions);
    // Errors (an unwritable directory, a full disk) are reported by whoever writes, and by commit();
    // this listener only keeps one nobody has waited for yet from crashing the process.
    this.sink.on('error', () => {});
    this.closed = new Promise((done) => this.sink.once('close', done));
  }

  /** Ends the file and moves it into place; the temp file is removed if that fails. */
  async commit(): Promise<WrittenJpeg> {
    try {
      if (!this.sink.writableEnded) this.sink.end();
      await finished(this.sink);
      await this.closed;
      if (this.options.force) {
        await rename(this.temp, this.target);
      } else {
        // link() fails if the target appeared meanwhile: never overwrite without --force.
        try {
          await link(this.temp, this.target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new UsageError(`${this.path} already exists; pass --force to overwrite`);
          }
          throw error;
        }
        await unlink(this.temp);
      }
      return { path: this.target, bytes: this.sink.bytesWritten };
    } catch (error) {
      await this.discard();
      throw error;
    }
  }

  /** Closes and removes the temp file (nothing under the target's name is touched). */
  async discard(): Promise<void> {
    this.sink.destroy();
    await this.closed;
    await unlink(this.temp).catch(() => {});
  }
}

export async function writeJpegAtomically(source: Readable, path: string, options: WriteJpegOptions): Promise<WrittenJpeg> {
  const file = new TempJpegFile(path, options);
  const verifier = verifierOf(source);
  try {
    await pipeline([...verifier.stages, file.sink], { signal: options.signal });
    if (options.expectedLength !== undefined && verifier.bytes() !== options.expectedLength) {
      throw new CorruptImageError(`JPEG is truncated: got ${verifier.bytes()} of ${options.expectedLength} bytes`);
    }
  } catch (error) {
    await file.discard();
    throw error;
  }
  return file.commit();
}

/** Streams a verified JPEG to a writable (stdout for `-o -`), through optional extra stages (metadata). */
export async function pipeJpeg(
  source: Readable,
  destination: NodeJS.WritableStream,
  signal?: AbortSignal,
  transforms: Transform[] = [],
): Promise<number> {
  const verifier = verifierOf(source);
  await pipeline([...verifier.stages, ...transforms, destination], { signal, end: false } as never);
  return verifier.bytes();
}
