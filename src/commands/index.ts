// Every command registers itself on the program; the order here is the order in
// --help. A new command is a file of its own in this directory (its options and
// a CommandBody, see context.ts) and one line here.
import type { CommandRegistration } from '../context.js';
import { register as batch } from './batch.js';
import { register as completion } from './completion.js';
import { register as config } from './config.js';
import { register as del } from './delete.js';
import { register as exportImages } from './export.js';
import { register as generateAsync } from './generate-async.js';
import { register as generate } from './generate.js';
import { register as init } from './init.js';
import { register as list } from './list.js';
import { register as sandbox } from './sandbox.js';
import { register as view } from './view.js';

export const registrations: CommandRegistration[] = [
  generate,
  generateAsync,
  batch,
  list,
  exportImages,
  view,
  del,
  init,
  config,
  sandbox,
  completion,
];
