// An image received whole into memory, for callers that need all of it at
// once (a preview, the library's generate()): a sink for the one image path.
import { Writable } from 'node:stream';
import type { ImageSink } from './image-download.js';

export class MemorySink implements ImageSink {
  private chunks: Buffer[] = [];

  open(): Writable {
    return new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        this.chunks.push(chunk);
        done();
      },
    });
  }

  /** Started over for another attempt after one that wrote into it. */
  async reset(): Promise<void> {
    this.chunks = [];
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
