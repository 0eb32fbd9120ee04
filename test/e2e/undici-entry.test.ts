// aerial takes undici through its public entry point (src/api/undici.ts),
// bundled tree-shaken down to its dispatchers (scripts/build.mjs). What is left
// out must stay out of start-up: the Node built-ins only fetch, WebSocket, the
// mocks and the caches take, and Node's own copy of undici, which on Node 20 the
// first use of the web Headers global loads (undici's cookie helpers touched it
// as they loaded). These tests run the CLI as users do and look, as it exits,
// at what Node loaded and at the global: never touched, still Node's own.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

const work = tempDir('aerial-undici-entry-');
afterAll(() => work.remove());

/** Runs `aerial args` with a preload that reports, at exit, what Node loaded and what globalThis.Headers is. */
async function runReporting(args: string[], name: string, env: Record<string, string> = {}) {
  const report = join(work.path, `${name}.json`);
  const preload = join(work.path, 'report-at-exit.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => {
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'Headers');
      const lazy = typeof descriptor?.get === 'function';
      const loaded = process.moduleLoadList.filter((m) => m.startsWith('NativeModule internal/deps/undici'));
      const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
      const fs = require('node:fs');
      // The bundle files loaded that hold undici or use it (by the name of its proxy agent).
      const undici = Object.keys(require.cache).filter((file) => file.includes('dist') && fs.readFileSync(file, 'utf8').includes('EnvHttpProxyAgent')).length;
      const headers = new globalThis.Headers({ 'x-probe': 'yes' });
      fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify({ lazy, loaded, builtins, undici, probe: headers.get('x-probe'), native: Object.prototype.toString.call(headers) }));
    });`,
  );
  const result = await runCli(args, { configDir: home.path, env: { NODE_OPTIONS: `--require ${preload}`, ...env } });
  return { result, report: JSON.parse(readFileSync(report, 'utf8')) as { lazy: boolean; loaded: string[]; builtins: string[]; undici: number; probe: string; native: string } };
}

describe('undici through its public entry point', () => {
  it('list --json makes its request without Node loading its own copy of undici, and leaves Node’s Headers as it found it', async () => {
    const { result, report } = await runReporting(['list', '--json'], 'list', { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
    // Read before the preload's own `new Headers` below loads it: untouched until then.
    expect(report.undici).toBeGreaterThan(0);
    expect(report.lazy).toBe(true);
    expect(report.loaded).toEqual([]);
    expect([report.probe, report.native]).toEqual(['yes', '[object Headers]']);
  });

  it('list --json loads none of the Node built-ins that only the parts of undici aerial does not use take', async () => {
    const { result, report } = await runReporting(['list', '--json'], 'list-builtins', { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key });
    expect(result.exitCode).toBe(0);
    expect(report.builtins).toContain('http');
    // node:dns is not among them: aerial's own download guard resolves through it, as node:net does any host name.
    const unused = ['worker_threads', 'perf_hooks', 'console', 'crypto', 'util/types', 'zlib', 'fs/promises', 'http2', 'sqlite'];
    expect(report.builtins.filter((name) => unused.includes(name) || /^internal\/webstreams\/(readable|writable)stream$/.test(name))).toEqual([]);
  });

  it('a command that sends no request does not load undici at all', async () => {
    const { result, report } = await runReporting(['config', 'path'], 'config');
    expect(result.exitCode).toBe(0);
    expect(report.undici).toBe(0);
    expect(report.loaded).toEqual([]);
    expect(report.lazy).toBe(true);
  });
});
