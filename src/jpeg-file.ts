// Streams a JPEG response to disk: never buffered whole, verified as JPEG,
// written to a temp file beside the target and moved into place only when
// complete, so a failure or Ctrl-C never leaves a half-written image.
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, link, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UsageError } from './api/errors.js';
import { CorruptImageError, JpegVerifier } from './api/jpeg-verifier.js';

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

export interface WriteJpegOptions {
  force: boolean;
  signal?: AbortSignal;
  /** When the server announced a length, anything else means the transfer broke. */
  expectedLength?: number;
  /** Extra stages between verification and disk (e.g. metadata insertion). */
  transforms?: Transform[];
  /**
   * How many bytes may wait in memory for the disk (Node's default is 16 KiB).
   * More lets a response be read off the connection at network speed, so the
   * connection is free for the next request sooner; the image is still never held whole.
   */
  diskBufferBytes?: number;
}

export interface WrittenJpeg {
  path: string;
  bytes: number;
}

export async function writeJpegAtomically(source: Readable, path: string, options: WriteJpegOptions): Promise<WrittenJpeg> {
  const target = resolve(path);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.part`);
  const verifier = verifierOf(source);
  try {
    await pipeline([...verifier.stages, ...(options.transforms ?? []), createWriteStream(temp, { flags: 'wx', mode: 0o644, highWaterMark: options.diskBufferBytes })], {
      signal: options.signal,
    });
    if (options.expectedLength !== undefined && verifier.bytes() !== options.expectedLength) {
      throw new CorruptImageError(`JPEG is truncated: got ${verifier.bytes()} of ${options.expectedLength} bytes`);
    }
    if (options.force) {
      await rename(temp, target);
    } else {
      // link() fails if the target appeared meanwhile: never overwrite without --force.
      try {
        await link(temp, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new UsageError(`${path} already exists; pass --force to overwrite`);
        }
        throw error;
      }
      await unlink(temp);
    }
    return { path: target, bytes: verifier.bytes() };
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
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
