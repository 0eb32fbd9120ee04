// Every command registers itself on the program; the order here is the order in
// --help. A new command is a file of its own in this directory (its options and
// a CommandBody, see context.ts) and one line here.
import type { CommandRegistration } from '../context.js';
import { registration as batch } from './batch.js';
import { registration as completion } from './completion.js';
import { registration as config } from './config.js';
import { registration as del } from './delete.js';
import { registration as exportImages } from './export.js';
import { registration as generateAsync } from './generate-async.js';
import { registration as generate } from './generate.js';
import { registration as init } from './init.js';
import { registration as list } from './list.js';
import { registration as sandbox } from './sandbox.js';
import { registration as view } from './view.js';

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
