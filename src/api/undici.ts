// undici's public entry point, as the rest of aerial takes it: import undici's
// values from here, not from 'undici'.
//
// As it loads, undici's cookie helpers look up globalThis.Headers, and on
// Node 20 the first use of that global loads Node's own, internal copy of
// undici (its fetch, web streams and more): about 20 ms more CPU at start-up for
// every command that makes a request, for a class aerial never uses. So the
// global is hidden while undici's entry point loads (./web-headers-hidden.ts
// is evaluated first) and put back, untouched, right after. undici's cookie
// helpers, which aerial does not call, then recognise only undici's own Headers.
// Commands that send no request never load this module (context.ts imports the
// client on first use).
import { restoreWebHeaders } from './web-headers-hidden.js';
export { Agent, EnvHttpProxyAgent, errors, Pool, type Dispatcher } from 'undici';

restoreWebHeaders();
