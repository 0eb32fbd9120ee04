// What `aerial view` is given: JPEG files on disk, standard input ("-"), or
// image ids from the account's history. Every argument is checked before
// anything is shown: a missing file is a usage error, an id no page of the
// listing holds is not found. An id (or the start of one) is found through the
// list endpoint (../image-lookup.ts) and its image received into memory through
// the one image path, from its temporary URL, without the API key.
import { stat } from 'node:fs/promises';
import { UsageError } from '../lifecycle/errors.js';
import { checkImageId } from '../api/image-id.js';
import { printable } from '../text/printable.js';

export type ImageSource = { kind: 'file'; path: string } | { kind: 'stdin' } | { kind: 'id'; id: string };

/** Names that are plainly meant as files (a path, an image's extension), never looked up as ids. */
const LOOKS_LIKE_A_PATH = /[/\\]|^\.|\.(jpe?g|png|webp|gif|tiff?|avif|heic)$/i;

/** Reads each argument: an existing file, "-", or else an id (a name that looks like a path but is missing is an error). */
export async function classifySources(args: string[]): Promise<ImageSource[]> {
  const sources: ImageSource[] = [];
  for (const arg of args) {
    if (arg === '-') {
      sources.push({ kind: 'stdin' });
      continue;
    }
    const info = await stat(arg).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw new UsageError(`${printable(arg, 200)} cannot be read (${error.code ?? error.message})`);
    });
    if (info?.isDirectory()) throw new UsageError(`${printable(arg, 200)} is a directory; name JPEG files or image ids`);
    if (info) sources.push({ kind: 'file', path: arg });
    else if (LOOKS_LIKE_A_PATH.test(arg)) throw new UsageError(`no such file: ${printable(arg, 200)}`);
    else sources.push({ kind: 'id', id: checkImageId(arg) });
  }
  if (sources.filter((source) => source.kind === 'stdin').length > 1) throw new UsageError('"-" (standard input) may be given once');
  return sources;
}

/** Standard input read whole, up to `maxBytes`. */
export async function readStdin(stdin: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > maxBytes) throw new UsageError(`standard input holds more than ${Math.round(maxBytes / 1024 / 1024)} MiB; that is not an image aerial shows`);
    chunks.push(buffer);
  }
  if (size === 0) throw new UsageError('standard input is empty; pipe a JPEG into "aerial view -"');
  return Buffer.concat(chunks);
}
