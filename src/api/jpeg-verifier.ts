// JPEG verification as the bytes pass: the signature at the start and the
// end-of-image marker near the end (the spec's "magic bytes are checked"). The
// image path checks every image it receives with it (image-download.ts), and
// a resumed batch or export checks the files it finds (bulk/files.ts).
import { BadResponseError } from './errors.js';

const SOI = [0xff, 0xd8, 0xff];
/** How far from the end the end-of-image marker is looked for. */
export const JPEG_CHECK_TAIL_BYTES = 64;

export class CorruptImageError extends BadResponseError {
  constructor(message: string) {
    super(message, 'InvalidImage');
  }
}

/** The checks, for code that handles the chunks itself: feed every chunk to add(), then call finish(). */
export class JpegCheck {
  bytes = 0;
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);

  /** Takes the next chunk; the error once the start is not a JPEG signature. */
  add(chunk: Buffer): CorruptImageError | undefined {
    if (this.head.length < SOI.length) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, SOI.length - this.head.length)]);
      if (this.head.length >= SOI.length || chunk.length === 0) {
        if (!SOI.every((byte, i) => this.head[i] === byte)) return new CorruptImageError('response is not a JPEG (bad signature)');
      }
    }
    this.bytes += chunk.length;
    // Copy only the last bytes: slicing a concat of the whole chunk would churn a chunk-sized buffer per chunk.
    this.tail = Buffer.from(Buffer.concat([this.tail, chunk.subarray(-JPEG_CHECK_TAIL_BYTES)]).subarray(-JPEG_CHECK_TAIL_BYTES));
    return undefined;
  }

  /** At the end of the image: the error when it is too short or has no end-of-image marker. */
  finish(): CorruptImageError | undefined {
    if (this.bytes < SOI.length) return new CorruptImageError('response is not a JPEG (too short)');
    for (let i = this.tail.length - 2; i >= 0; i--) {
      if (this.tail[i] === 0xff && this.tail[i + 1] === 0xd9) return undefined;
    }
    return new CorruptImageError('JPEG is truncated (no end-of-image marker)');
  }
}
