// Streams a JPEG response to disk: never buffered whole, verified as JPEG,
// written to a temp file beside the target and moved into place only when
// complete, so a failure or Ctrl-C never leaves a half-written image. Before
// anything is sent, checkOutputPath finds out whatever about the target can be
// known without paying: the directory, a file that may create there, links,
// names too long, and special files (written into, never replaced).
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, open as openCallback, WriteStream } from 'node:fs';
import { link, lstat, mkdir, open, readlink, realpath, rename, stat, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable, Transform, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { isatty } from 'node:tty';
import { promisify } from 'node:util';
import { BrokenPipeError, CliError, FileSystemError, fileSystemError, InterruptedError, UsageError } from './api/errors.js';
import { CorruptImageError, JpegVerifier } from './api/jpeg-verifier.js';
import { MAX_NAME_BYTES, partFileName, utf8Length } from './file-names.js';

export { CorruptImageError, JpegVerifier } from './api/jpeg-verifier.js';

/** A fresh temp name beside `target` (file-names.ts: a target of the longest name allowed still gets one that fits). */
export function tempPathFor(target: string): string {
  return join(dirname(target), partFileName(basename(target), randomBytes(6).toString('hex')));
}

/** Where an image goes, as checkOutputPath found it. */
export interface OutputTarget {
  /** Absolute, as the user named it (what is printed). */
  path: string;
  /** The file replaced atomically: `path`, or for a symbolic link the file it points to, so the link stays. */
  file: string;
  /** A device or FIFO: written into, never replaced (see openSpecialOutput). */
  special?: 'character device' | 'FIFO';
}

/**
 * Checks, before any request is sent, everything about an output target that
 * can be known without paying: an existing file needs --force; a directory,
 * a dangling link, a block device or a socket is refused; the directory is
 * made if missing; and a temp file of the very name the image will use is
 * created there and removed, which proves the directory writable, the file
 * system writable and the names short enough. Problems are usage errors (exit
 * 2) naming `flag`.
 */
export async function checkOutputPath(path: string, force: boolean, flag = '--output'): Promise<OutputTarget> {
  const target = resolve(path);
  if (path.endsWith('/') || basename(target) === '') throw new UsageError(`${flag} must name a file, not a directory`);
  let info;
  try {
    info = await lstat(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      await checkOutputDirectory(dirname(target), basename(target), `${flag} ${path}`);
      return { path: target, file: target };
    }
    throw outputPathError(error, path, flag);
  }
  let file = target;
  if (info.isSymbolicLink()) {
    try {
      info = await stat(target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw outputPathError(error, path, flag);
      const to = await readlink(target).catch(() => '?');
      throw new UsageError(`${flag} ${path} is a symbolic link to ${to}, which does not exist; remove the link or name another file`);
    }
    // A link to a file: the file is replaced, the link kept. (Links to special files, like /dev/stdout, are written through.)
    if (info.isFile()) file = await realpath(target).catch(() => target);
  }
  if (info.isDirectory()) throw new UsageError(`${flag} ${path} is a directory; name a file`);
  if (info.isCharacterDevice() || info.isFIFO()) {
    return { path: target, file: target, special: info.isFIFO() ? 'FIFO' : 'character device' };
  }
  if (!info.isFile()) {
    const what = info.isBlockDevice() ? 'a block device' : info.isSocket() ? 'a socket' : 'not a regular file';
    throw new UsageError(`${flag} ${path} is ${what}; an image is never written there`);
  }
  if (!force) throw new UsageError(`${flag} ${path} already exists; pass --force to overwrite`);
  await checkOutputDirectory(dirname(file), basename(file), `${flag} ${path}`);
  return { path: target, file };
}

/**
 * Makes `dir` if it is missing, then creates and removes the temp file an
 * image named `name` would be written through: so a read-only or full file
 * system, a directory without write permission, and a name too long are all
 * found before anything is sent. `what` names the flag (and path) in errors.
 */
export async function checkOutputDirectory(dir: string, name: string, what: string): Promise<void> {
  const bytes = utf8Length(name);
  if (bytes > MAX_NAME_BYTES) throw new FileSystemError(`${what}: the file name is too long (${bytes} bytes; file systems allow ${MAX_NAME_BYTES})`, 'NameTooLong');
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new UsageError(`${what}: cannot create directory ${dir}: a file is in the way, where a directory must be`);
    throw fileSystemError(error, `${what}: cannot create directory ${dir}`) ?? error;
  }
  const probe = tempPathFor(join(dir, name));
  try {
    await (await open(probe, 'wx', 0o644)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw new FileSystemError(`${what}: the file name is too long for this file system (${bytes} bytes)`, 'NameTooLong');
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw fileSystemError(error, `${what}: cannot create files in ${dir}`) ?? new UsageError(`${what}: cannot create files in ${dir} (${code})`);
  }
  await unlink(probe).catch(() => {});
}

/** An error met looking at the user's path (a file in the way, a loop of links): theirs to fix, so exit 2. */
function outputPathError(error: unknown, path: string, flag: string): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR') return new UsageError(`${flag} ${path}: part of that path is a file, not a directory`);
  if (code === 'ENAMETOOLONG') return new FileSystemError(`${flag} ${path}: the name is too long for this file system`, 'NameTooLong');
  return fileSystemError(error, `${flag} ${path}`) ?? new UsageError(`${flag} ${path} cannot be used (${code ?? String(error)})`);
}

/** A bare descriptor (a FileHandle would close it when collected, under the socket that owns it). */
const openDescriptor = promisify(openCallback) as (path: string, flags: number) => Promise<number>;

/** How long to wait for a FIFO's reader before saying so. */
const READER_NOTICE_MS = 1_000;

/**
 * Opens a special file given as the output, before the request is sent: a
 * device (not a terminal: that would show binary data), or a FIFO once it has
 * a reader, waiting for one as `cat > fifo` does, but interruptibly and without
 * anything paid for yet. The image is then written into it as it arrives.
 */
export async function openSpecialOutput(target: OutputTarget, flag: string, signal: AbortSignal, onWait: (message: string) => void): Promise<Writable> {
  const fail = (error: unknown) => fileSystemError(error, `${flag} ${target.path}`) ?? new UsageError(`${flag} ${target.path} cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  if (target.special === 'FIFO') {
    const started = Date.now();
    let told = false;
    for (;;) {
      if (signal.aborted) throw signal.reason ?? new InterruptedError();
      try {
        // Non-blocking: no reader yet is ENXIO at once, rather than a thread stuck in open().
        const fd = await openDescriptor(target.path, constants.O_WRONLY | constants.O_NONBLOCK);
        // A pipe, written through libuv as stdout is, which copes with a reader slower than us.
        return new Socket({ fd, readable: false, writable: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw fail(error);
      }
      if (!told && Date.now() - started >= READER_NOTICE_MS) {
        told = true;
        onWait(`waiting for a reader to open the FIFO ${target.path}; nothing is sent before one does`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  let handle;
  try {
    handle = await open(target.path, constants.O_WRONLY);
  } catch (error) {
    throw fail(error);
  }
  if (isatty(handle.fd)) {
    await handle.close();
    throw new UsageError(`${flag} ${target.path} is a terminal; redirect the JPEG to a file or pipe`);
  }
  return createWriteStream(target.path, { fd: handle });
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
    this.temp = tempPathFor(this.target);
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
      throw this.explain(error);
    }
  }

  /** A failure to write this file in the user's terms: a full disk or a permission is theirs to fix (exit 2). */
  explain(error: unknown): unknown {
    return fileSystemError(error, `cannot write ${this.path}`) ?? error;
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
    throw file.explain(error);
  }
  return file.commit();
}

/** How metadata is added on the way: by the file writer for a file, by a stream stage for a device or FIFO. */
export interface MetadataWriters {
  editor(): ChunkEditor;
  transform(): Transform & { insertedBytes: number };
}

/**
 * Saves an image to a target checked by checkOutputPath: atomically for a
 * file (see writeJpegAtomically), written into for a special file opened by
 * openSpecialOutput. A FIFO's reader that went away is a broken pipe, as for
 * stdout; a full device is a file-system error.
 */
export async function saveJpeg(
  source: Readable,
  target: OutputTarget,
  special: Writable | undefined,
  options: Omit<WriteJpegOptions, 'editor'> & { metadata?: MetadataWriters },
): Promise<WrittenJpeg> {
  if (!special) {
    const written = await writeJpegAtomically(source, target.file, { ...options, editor: options.metadata?.editor() });
    return { path: target.path, bytes: written.bytes };
  }
  const inserter = options.metadata?.transform();
  try {
    const bytes = await pipeJpeg(source, special, { signal: options.signal, transforms: inserter ? [inserter] : [], end: true });
    return { path: target.path, bytes: bytes + (inserter?.insertedBytes ?? 0) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') throw new BrokenPipeError();
    throw fileSystemError(error, `cannot write ${target.path}`) ?? error;
  }
}

/**
 * Streams a verified JPEG into a writable, through optional extra stages
 * (metadata): stdout for `-o -` (left open), or a special file (ended).
 */
export async function pipeJpeg(
  source: Readable,
  destination: NodeJS.WritableStream,
  options: { signal?: AbortSignal; transforms?: Transform[]; end?: boolean } = {},
): Promise<number> {
  const verifier = verifierOf(source);
  await pipeline([...verifier.stages, ...(options.transforms ?? []), destination], { signal: options.signal, end: options.end ?? false } as never);
  return verifier.bytes();
}
