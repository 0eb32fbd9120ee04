// The body of one render worker thread (see render-pool.ts): renders each
// request it is sent and hands the JPEG's memory back to the main thread
// (transferred, not copied). The bundle has it as its own entry point,
// dist/render-worker.js (scripts/build.mjs).
import { parentPort } from 'node:worker_threads';
import type { GenerationRequest } from '../api/schema.js';
import { renderAerialJpeg, type FrameSize } from './render.js';

export interface RenderJob {
  id: number;
  request: GenerationRequest;
  /** Only for warm-up frames: otherwise the request's own dimensions. */
  size?: FrameSize;
}

export type RenderReply = { id: number; jpeg: ArrayBuffer } | { id: number; error: string };

/** The JPEG's bytes in an ArrayBuffer of their own, so it can be transferred without taking anything else along. */
function ownArrayBuffer(bytes: Buffer): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

if (parentPort) {
  const port = parentPort;
  port.on('message', async ({ id, request, size }: RenderJob) => {
    let reply: RenderReply;
    try {
      reply = { id, jpeg: ownArrayBuffer(await renderAerialJpeg(request, size)) };
    } catch (error) {
      reply = { id, error: (error as Error)?.message ?? String(error) };
    }
    port.postMessage(reply, 'jpeg' in reply ? [reply.jpeg] : []);
  });
}
