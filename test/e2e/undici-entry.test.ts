// aerial takes undici through its public entry point (src/api/undici.ts),
// bundled tree-shaken down to its dispatchers (scripts/build.mjs). What is left
// out must stay out of start-up: the Node built-ins only fetch, WebSocket, the
// mocks and the caches take, and Node's own copy of undici, which on Node 20 the
// first use of the web Headers global loads (undici's cookie helpers touched it
// as they loaded). These tests run the CLI as users do and look, as it exits,
// at what Node loaded and at the global: never touched, still Node's own.
import { readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** Node 22.15 and later tell a preload which files it loads (module.registerHooks). */
const hasLoadHooks = typeof (module as { registerHooks?: unknown }).registerHooks === 'function';
const work = tempDir('aerial-undici-entry-');
afterAll(() => work.remove());

/** Runs `aerial args` with a preload that reports, at exit, what Node loaded and what globalThis.Headers is. */
async function runReporting(args: string[], name: string, env: Record<string, string> = {}, { filesLoaded = false } = {}) {
  const report = join(work.path, `${name}.json`);
  const preload = join(work.path, `${name}.cjs`);
  writeFileSync(
    preload,
    `const { registerHooks } = require('node:module');
    // Only where asked: the hooks themselves load some of what the other reports look for.
    if (${filesLoaded} && registerHooks) {
      globalThis.__aerialLoaded = [];
      registerHooks({ load(url, context, next) { globalThis.__aerialLoaded.push(url); return next(url, context); } });
    }
    process.on('exit', () => {
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'Headers');
      const lazy = typeof descriptor?.get === 'function';
      const loaded = process.moduleLoadList.filter((m) => m.startsWith('NativeModule internal/deps/undici'));
      const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
      const fs = require('node:fs');
      // The bundle files loaded that hold undici or use it (by the name of its proxy agent); null where
      // Node has no synchronous module hooks to tell which files were loaded (before 22.15).
      const undici = globalThis.__aerialLoaded ? globalThis.__aerialLoaded.filter((url) => url.includes('/dist/') && fs.readFileSync(new URL(url), 'utf8').includes('EnvHttpProxyAgent')).length : null;
      const headers = new globalThis.Headers({ 'x-probe': 'yes' });
      fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify({ lazy, loaded, builtins, undici, probe: headers.get('x-probe'), native: Object.prototype.toString.call(headers) }));
    });`,
  );
  // An empty args list is a bare `node -e 0` with the same preload: what Node itself loads, to compare with.
  const result =
    args.length > 0
      ? await runCli(args, { configDir: home.path, env: { NODE_OPTIONS: `--require ${preload}`, ...env } })
      : await execa('node', ['--require', preload, '-e', env.IMPORT ? `import(${JSON.stringify(env.IMPORT)})` : '0']);
  return { result, report: JSON.parse(readFileSync(report, 'utf8')) as { lazy: boolean; loaded: string[]; builtins: string[]; undici: number | null; probe: string; native: string } };
}

/** What a bare `node -e 0` loads: Node 22 and later load their own undici at start, Node 20 on first use of its globals. */
const bare = () => runReporting([], 'bare');

describe('undici through its public entry point', () => {
  it('list --json makes its request without Node loading its own copy of undici, and leaves Node’s Headers as it found it', async () => {
    const { result, report } = await runReporting(['list', '--json'], 'list', { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
    // Read before the preload's own `new Headers` below loads it: untouched until then.
    const node = (await bare()).report;
    expect(report.lazy).toBe(node.lazy);
    expect(report.loaded).toEqual(node.loaded);
    expect([report.probe, report.native]).toEqual(['yes', '[object Headers]']);
  });

  it.runIf(hasLoadHooks)('list --json loads the bundle’s undici, and config path does not', async () => {
    const list = await runReporting(['list', '--json'], 'list-files', { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key }, { filesLoaded: true });
    expect(list.result.exitCode).toBe(0);
    expect(list.report.undici).toBeGreaterThan(0);
    const config = await runReporting(['config', 'path'], 'config-files', {}, { filesLoaded: true });
    expect(config.result.exitCode).toBe(0);
    expect(config.report.undici).toBe(0);
  });

  it('list --json loads none of the Node built-ins that only the parts of undici aerial does not use take', async () => {
    const { result, report } = await runReporting(['list', '--json'], 'list-builtins', { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key });
    expect(result.exitCode).toBe(0);
    expect(report.builtins).toContain('net');
    // node:http neither: undici takes only a limit and a class from it, which stand in (scripts/shims/undici-http.cjs).
    // node:dns is not among them: aerial's own download guard resolves through it, as node:net does any host name.
    const unused = ['worker_threads', 'perf_hooks', 'console', 'crypto', 'util/types', 'zlib', 'fs/promises', 'http', '_http_client', 'http2', 'sqlite'];
    const node = new Set((await bare()).report.builtins);
    expect(report.builtins.filter((name) => !node.has(name)).filter((name) => unused.includes(name) || /^internal\/webstreams\/(readable|writable)stream$/.test(name))).toEqual([]);
  });

  it('a command that sends no request does not load undici at all', async () => {
    const { result, report } = await runReporting(['config', 'path'], 'config');
    expect(result.exitCode).toBe(0);
    const node = (await bare()).report;
    expect(report.loaded).toEqual(node.loaded);
    expect(report.lazy).toBe(node.lazy);
  });
});

describe('Node built-ins, taken with require() by the bundle', () => {
  it('config path loads none of what an ES import of node:fs would (fs/promises, readline, the fs streams and watchers)', async () => {
    const { result, report } = await runReporting(['config', 'path'], 'config-builtins');
    expect(result.exitCode).toBe(0);
    // What Node's own ES module loader takes to import a module (on Node 20, fs/promises among them).
    const empty = join(work.path, 'empty.mjs');
    writeFileSync(empty, 'export {};\n');
    const node = new Set((await runReporting([], 'bare-esm', { IMPORT: empty })).report.builtins);
    const eager = ['internal/fs/promises', 'internal/readline/interface', 'internal/fs/streams', 'internal/fs/watchers'];
    expect(report.builtins.filter((name) => !node.has(name) && eager.includes(name))).toEqual([]);
  });
});
