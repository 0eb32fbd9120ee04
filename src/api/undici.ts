// undici's public entry point, as the rest of aerial takes it: import undici's
// values from here, not from 'undici'; elsewhere only its types.
//
// The entry point requires all of undici as it loads (fetch, WebSocket, mocks,
// cache stores and the Node built-ins they take), where aerial needs only its
// dispatchers. So the build (scripts/build.mjs) bundles 'undici' as its entry
// point tree-shaken down to the names exported here: name a new one here and
// the build takes it in. That leaves out undici's cookie helpers too, which
// looked up globalThis.Headers as they loaded and so made Node 20 load its own,
// internal copy of undici (test/e2e/undici-entry.test.ts holds both).
// Commands that send no request never load this module (cli/context.ts imports the
// client on first use).
export { Agent, EnvHttpProxyAgent, errors, Pool, type Dispatcher } from 'undici';
