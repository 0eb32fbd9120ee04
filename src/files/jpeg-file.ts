// Where images are saved: a temp file beside the target, moved into place only
// when the image is whole, so a failure or Ctrl-C never leaves a half-written
// image; a device or FIFO written into; standard output. The client writes
// each image into the destination's sink as it arrives (api/image-download.ts),
// checked and with its metadata spliced in on the way. Before
// anything is sent, checkOutputPath finds out whatever about the target can be
// known without paying: the directory, a file that may create there, links,
// names too long, and special files (written into, never replaced). Its
// failures are neutral (api/errors.ts: FileError, AbortError), naming the file
// as the caller names it (`--output x.jpg`, `output x.jpg`, `x.jpg`); each face
// says what can be done about them.
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, open as openCallback, type WriteStream } from 'node:fs';
import { link, lstat, open, readlink, realpath, rename, stat, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { isatty } from 'node:tty';
import { promisify } from 'node:util';
import { AbortError, FileError, fileErrorOf } from '../api/errors.js';
import type { ChunkEditor, ImageSink, ReceivedImage } from '../api/image-download.js';
import { drained } from '../lifecycle/streams.js';
import { MAX_NAME_BYTES, partFileName, utf8Length } from './file-names.js';
import { makeDirectories } from './directories.js';

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

/** How a message names a path: after the caller's label for it (`--output x.jpg`), or alone. */
function named(label: string, path: string): string {
  return label ? `${label} ${path}` : path;
}

/**
 * Checks, before any request is sent, everything about an output target that
 * can be known without paying: an existing file needs `overwrite`; a
 * directory, a dangling link, a block device or a socket is refused; the
 * directory is made if missing; and a temp file of the very name the image
 * will use is created there and removed, which proves the directory writable,
 * the file system writable and the names short enough. Problems are
 * FileErrors naming the path after `label` (how the caller names the output:
 * `--output`, `output`, or nothing).
 */
export async function checkOutputPath(path: string, overwrite: boolean, label: string): Promise<OutputTarget> {
  const target = resolve(path);
  if (path.endsWith('/') || basename(target) === '') throw new FileError(`${label || 'the path'} must name a file, not a directory`, 'NotAFile', path);
  let info;
  try {
    info = await lstat(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      await checkOutputDirectory(dirname(target), basename(target), named(label, path));
      return { path: target, file: target };
    }
    throw outputPathError(error, path, label);
  }
  let file = target;
  if (info.isSymbolicLink()) {
    try {
      info = await stat(target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw outputPathError(error, path, label);
      const to = await readlink(target).catch(() => '?');
      throw new FileError(`${named(label, path)} is a symbolic link to ${to}, which does not exist; remove the link or name another file`, 'DanglingLink', path);
    }
    // A link to a file: the file is replaced, the link kept. (Links to special files, like /dev/stdout, are written through.)
    if (info.isFile()) file = await realpath(target).catch(() => target);
  }
  if (info.isDirectory()) throw new FileError(`${named(label, path)} is a directory; name a file`, 'IsADirectory', path);
  if (info.isCharacterDevice() || info.isFIFO()) {
    return { path: target, file: target, special: info.isFIFO() ? 'FIFO' : 'character device' };
  }
  if (!info.isFile()) {
    const what = info.isBlockDevice() ? 'a block device' : info.isSocket() ? 'a socket' : 'not a regular file';
    throw new FileError(`${named(label, path)} is ${what}; an image is never written there`, 'NotARegularFile', path);
  }
  if (!overwrite) throw new FileError(`${named(label, path)} already exists`, 'AlreadyExists', path, { remedy: 'overwrite' });
  await checkOutputDirectory(dirname(file), basename(file), named(label, path));
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
  const path = join(dir, name);
  if (bytes > MAX_NAME_BYTES) throw new FileError(`${what}: the file name is too long (${bytes} bytes; file systems allow ${MAX_NAME_BYTES})`, 'NameTooLong', path, { errno: 'ENAMETOOLONG' });
  try {
    await makeDirectories(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new FileError(`${what}: cannot create directory ${dir}: a file is in the way, where a directory must be`, 'NotADirectory', dir, { cause: error });
    // The level that could not be made (its parents are there), which may be above `dir`.
    const level = (error as NodeJS.ErrnoException).path ?? dir;
    throw fileErrorOf(error, `${what}: cannot create directory ${level}`, level) ?? error;
  }
  const probe = tempPathFor(path);
  try {
    await (await open(probe, 'wx', 0o644)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw new FileError(`${what}: the file name is too long for this file system (${bytes} bytes)`, 'NameTooLong', path, { errno: 'ENAMETOOLONG', cause: error });
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw fileErrorOf(error, `${what}: cannot create files in ${dir}`, dir) ?? new FileError(`${what}: cannot create files in ${dir} (${code})`, 'CannotCreateFiles', dir, { cause: error });
  }
  await unlink(probe).catch(() => {});
}

/** An error met looking at the caller's path (a file in the way, a loop of links): theirs to fix. */
function outputPathError(error: unknown, path: string, label: string): FileError {
  const code = (error as NodeJS.ErrnoException).code;
  const what = named(label, path);
  if (code === 'ENOTDIR') return new FileError(`${what}: part of that path is a file, not a directory`, 'NotADirectory', path, { cause: error });
  if (code === 'ENAMETOOLONG') return new FileError(`${what}: the name is too long for this file system`, 'NameTooLong', path, { errno: code, cause: error });
  return fileErrorOf(error, what, path) ?? new FileError(`${what} cannot be used (${code ?? String(error)})`, 'Unusable', path, { cause: error });
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
export async function openSpecialOutput(target: OutputTarget, label: string, signal: AbortSignal, onWait: (message: string) => void): Promise<Writable> {
  const what = named(label, target.path);
  const fail = (error: unknown) =>
    fileErrorOf(error, what, target.path) ?? new FileError(`${what} cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Unusable', target.path, { cause: error });
  if (target.special === 'FIFO') {
    const started = Date.now();
    let told = false;
    for (;;) {
      if (signal.aborted) throw signal.reason ?? new AbortError();
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
    throw new FileError(`${what} is a terminal; redirect the JPEG to a file or pipe`, 'IsATerminal', target.path);
  }
  return createWriteStream(target.path, { fd: handle });
}

export interface JpegFileOptions {
  /** Replace a file already at the target (else the image is never moved over one that appeared meanwhile). */
  force: boolean;
  /**
   * Applied to the bytes on their way into the file (metadata insertion). A
   * promise while it is still being made (the EXIF writer loading as the
   * request is on the wire): the sink is handed out once it is ready.
   */
  editor?: ChunkEditor | Promise<ChunkEditor | undefined>;
  /**
   * How many bytes may wait in memory for the disk (Node's default is 16 KiB).
   * More lets a response be read off the connection at network speed, so the
   * connection is free for the next request sooner; the image is still never held whole.
   */
  diskBufferBytes?: number;
}

export interface WrittenJpeg {
  path: string;
  /** Size of what was written, metadata included. */
  bytes: number;
}

/**
 * One JPEG on its way to disk: a temp file beside the target, opened at once,
 * written through `sink`, then moved into place by commit() or removed by
 * discard(). A failure or Ctrl-C never leaves a half-written image under the
 * target's name.
 */
export class TempJpegFile {
  readonly target: string;
  readonly temp: string;
  readonly sink: WriteStream;
  private readonly closed: Promise<void>;

  constructor(
    /** As the user gave it, for messages. */
    private readonly path: string,
    private readonly options: Pick<JpegFileOptions, 'force' | 'diskBufferBytes'>,
  ) {
    this.target = resolve(path);
    this.temp = tempPathFor(this.target);
    this.sink = createWriteStream(this.temp, { flags: 'wx', mode: 0o644, highWaterMark: options.diskBufferBytes });
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
        // link() fails if the target appeared meanwhile: never overwrite unless told to.
        try {
          await link(this.temp, this.target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new FileError(`${this.path} already exists`, 'AlreadyExists', this.path, { remedy: 'overwrite', cause: error });
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

  /** A failure to write this file in the user's terms: a full disk or a permission is theirs to fix. */
  explain(error: unknown): unknown {
    return fileErrorOf(error, `cannot write ${this.path}`, this.path) ?? error;
  }

  /** Closes and removes the temp file (nothing under the target's name is touched). */
  async discard(): Promise<void> {
    this.sink.destroy();
    await this.closed;
    await unlink(this.temp).catch(() => {});
  }
}

/**
 * Where an image is saved: the sink the client writes it into
 * (image-download.ts), and what becomes of that once the image is whole, or
 * once the transfer failed.
 */
export interface ImageDestination extends ImageSink {
  /** After the whole image is in the sink: the file moved into place, or the special file ended. */
  finish(): Promise<WrittenJpeg>;
  /** After a failure: removes what was written where that can be, and says the error in the user's terms. */
  abandon(error: unknown): Promise<unknown>;
}

/** The editor of a destination, which may still be being made when the destination is. */
class EditorSlot {
  editor?: ChunkEditor;
  private pending?: Promise<unknown>;

  constructor(editor: ChunkEditor | Promise<ChunkEditor | undefined> | undefined) {
    if (editor instanceof Promise) this.pending = editor.then((ready) => (this.editor = ready));
    else this.editor = editor;
  }

  /** `open()` once the editor is ready: at once (no promise) when it already is. */
  whenReady(open: () => Writable): Writable | Promise<Writable> {
    if (!this.pending) return open();
    return this.pending.then(() => {
      this.pending = undefined;
      return open();
    });
  }
}

/**
 * A regular file, written atomically: a temp file per attempt beside the
 * target, moved into place when the image is whole.
 */
export class JpegFileDestination implements ImageDestination {
  private readonly slot: EditorSlot;
  private file?: TempJpegFile;

  constructor(
    private readonly path: string,
    private readonly options: JpegFileOptions,
  ) {
    this.slot = new EditorSlot(options.editor);
  }

  /** Opens the temp file now, so it is ready before the image arrives (a batch opens it as the request goes out). */
  prepare(): void {
    this.file ??= new TempJpegFile(this.path, this.options);
  }

  get editor(): ChunkEditor | undefined {
    return this.slot.editor;
  }

  open(): Writable | Promise<Writable> {
    return this.slot.whenReady(() => (this.file ??= new TempJpegFile(this.path, this.options)).sink);
  }

  async reset(): Promise<void> {
    await this.file?.discard();
    this.file = undefined;
    this.editor?.reset?.();
  }

  finish(): Promise<WrittenJpeg> {
    return (this.file ??= new TempJpegFile(this.path, this.options)).commit();
  }

  async abandon(error: unknown): Promise<unknown> {
    const file = this.file;
    this.file = undefined;
    await file?.discard();
    return fileErrorOf(error, `cannot write ${this.path}`, this.path) ?? error;
  }
}

/**
 * A stream the image is written into as it comes: a device or FIFO opened by
 * openSpecialOutput (ended once the image is whole), or standard output for
 * `-o -` (left open). What was written cannot be taken back, so such an image
 * is never asked for twice. A reader that went away is a broken pipe, as for
 * standard output; a full device is a file-system error.
 */
export class StreamDestination implements ImageDestination {
  private readonly slot: EditorSlot;
  private written = 0;
  /** The stream's own first failure. */
  private failure?: Error;

  constructor(
    private readonly stream: Writable,
    private readonly options: { path: string; editor?: ChunkEditor | Promise<ChunkEditor | undefined>; end: boolean },
  ) {
    this.slot = new EditorSlot(options.editor);
    // Kept for abandon(): reported there or by finish(), and none may crash the process meanwhile.
    stream.on('error', (error) => (this.failure ??= error));
  }

  get editor(): ChunkEditor | undefined {
    return this.slot.editor;
  }

  open(): Writable | Promise<Writable> {
    return this.slot.whenReady(() => this.stream);
  }

  async finish(): Promise<WrittenJpeg> {
    try {
      if (this.options.end) {
        this.stream.end();
        await finished(this.stream);
      } else {
        // Standard output stays open, but the image is not written until the OS has taken all of it.
        await drained(this.stream);
        const failure = this.stream.errored ?? this.failure;
        if (failure) throw failure;
      }
    } catch (error) {
      throw this.explain(error);
    }
    return { path: this.options.path, bytes: this.written };
  }

  /** The transfer's count of what it wrote, metadata included. */
  received(image: ReceivedImage): void {
    this.written = image.written;
  }

  async abandon(error: unknown): Promise<unknown> {
    // The stream's own failure (a reader gone, a bad descriptor) is the cause of whatever stopped the transfer.
    return this.explain(this.failure ?? error);
  }

  private explain(error: unknown): unknown {
    // A reader that went away: a face that wrote to standard output ends quietly (the CLI's exit 141).
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return new FileError(`the reader of ${this.options.path} went away`, 'BrokenPipe', this.options.path, { errno: 'EPIPE', cause: error });
    return fileErrorOf(error, `cannot write ${this.options.path}`, this.options.path) ?? error;
  }
}

/**
 * Saves an image through `transfer` (a client call that writes it into the
 * destination's sink): the image is then put in place, or, after a failure,
 * whatever was written is removed and the error said in the user's terms.
 */
export async function saveImage(destination: ImageDestination, transfer: (sink: ImageSink) => Promise<ReceivedImage>): Promise<WrittenJpeg> {
  let image: ReceivedImage;
  try {
    image = await transfer(destination);
  } catch (error) {
    throw await destination.abandon(error);
  }
  if (destination instanceof StreamDestination) destination.received(image);
  return destination.finish();
}
