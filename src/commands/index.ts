// Every command registers itself on the program; the order here is the order in --help.
export { register as generate } from './generate.js';
export { register as generateAsync } from './generate-async.js';
export { register as list } from './list.js';
export { register as del } from './delete.js';
export { register as config } from './config.js';
export { register as sandbox } from './sandbox.js';
