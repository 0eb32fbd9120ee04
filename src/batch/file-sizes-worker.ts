// The thread behind FileSizes (./file-sizes.ts): sizes of the paths it is sent.
import { parentPort } from 'node:worker_threads';
import { fileSize, type SizeReply, type SizeRequest } from './file-sizes.js';

parentPort!.on('message', ({ id, paths }: SizeRequest) => {
  const list = paths.split('\0');
  list.pop();
  const sizes = new Float64Array(list.length);
  for (let i = 0; i < list.length; i++) sizes[i] = fileSize(list[i]!);
  parentPort!.postMessage({ id, sizes } satisfies SizeReply, [sizes.buffer]);
});
