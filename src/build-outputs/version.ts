// The CLI's version, injected by the build (scripts/build.mjs defines
// __AERIAL_VERSION__); a dev placeholder when running from source.
declare const __AERIAL_VERSION__: string | undefined;
export const VERSION = typeof __AERIAL_VERSION__ === 'string' ? __AERIAL_VERSION__ : '0.0.0-dev';
