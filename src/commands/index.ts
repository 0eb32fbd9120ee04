// Every command registers itself on the program; the order here is the order in
// --help. A new command is a file of its own in this directory (its options and
// a CommandBody, see cli/context.ts) and one line here.
import type { CommandRegistration } from '../cli/context.js';
import { registration as batch } from './batch/index.js';
import { registration as completion } from './completion/index.js';
import { registration as config } from './config/index.js';
import { registration as del } from './delete/index.js';
import { registration as exportImages } from './export/index.js';
import { registration as generateAsync } from './generate-async/index.js';
import { registration as generate } from './generate/index.js';
import { registration as get } from './get/index.js';
import { registration as init } from './init/index.js';
import { registration as list } from './list/index.js';
import { registration as mcp } from './mcp/index.js';
import { registration as sandbox } from './sandbox/index.js';
import { registration as version } from './version/index.js';
import { registration as view } from './view/index.js';
import { registration as whoami } from './whoami/index.js';

export const registrations: CommandRegistration[] = [
  generate,
  generateAsync,
  batch,
  list,
  get,
  exportImages,
  view,
  del,
  init,
  whoami,
  config,
  sandbox,
  mcp,
  completion,
  version,
];
