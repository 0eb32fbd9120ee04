// The body of one render worker thread (see pool.ts): renders each
// request it is sent and hands the JPEG's memory back to the main thread
// (copied into memory of its own, then transferred). The bundle has it as its own entry point,
// dist/render-worker.js (scripts/build.mjs).
import { parentPort } from 'node:worker_threads';
import type { GenerationRequest } from '../../api/schema.js';
import { renderAerialJpeg, type FrameSize } from './aerial-image.js';

export interface RenderJob {
  id: number;
  request: GenerationRequest;
  /** Only for warm-up frames: otherwise the request's own dimensions. */
  size?: FrameSize;
}

export type RenderReply = { id: number; jpeg: ArrayBuffer } | { id: number; error: string };

/**
 * The JPEG's bytes copied into an ArrayBuffer of this thread's own, which can
 * be transferred. sharp hands back memory it allocated itself (an external
 * buffer); from Node 22 on such memory cannot be transferred (DataCloneError).
 */
function transferableCopy(bytes: Buffer): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

/** An error's reason as text that survives the trip to the main thread. */
function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

if (parentPort) {
  const port = parentPort;
  port.on('message', async ({ id, request, size }: RenderJob) => {
    let reply: RenderReply;
    try {
      reply = { id, jpeg: transferableCopy(await renderAerialJpeg(request, size)) };
    } catch (error) {
      reply = { id, error: reasonOf(error) };
    }
    try {
      port.postMessage(reply, 'jpeg' in reply ? [reply.jpeg] : []);
    } catch (error) {
      // The job must still end, with its reason, or the main thread would wait for it for ever.
      port.postMessage({ id, error: `the render worker could not hand back the image: ${reasonOf(error)}` } satisfies RenderReply);
    }
  });
}
