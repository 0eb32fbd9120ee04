// The thread behind FileSizes (./file-sizes.ts): sizes of the paths it is sent.
import { parentPort } from 'node:worker_threads';
import { fileSize, type SizeReply, type SizeRequest } from './file-sizes.js';

parentPort!.on('message', ({ id, paths }: SizeRequest) => {
  const sizes = new Float64Array(paths.length);
  for (let i = 0; i < paths.length; i++) sizes[i] = fileSize(paths[i]!);
  parentPort!.postMessage({ id, sizes } satisfies SizeReply, [sizes.buffer]);
});
