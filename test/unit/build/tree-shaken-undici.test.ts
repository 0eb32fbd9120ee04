// The build bundles undici's entry point tree-shaken down to what aerial
// imports (scripts/bundle-plugins.mjs, scripts/tree-shake.mjs) into the
// program and the library. These tests bundle src/api/undici.ts with the
// build's own plugins (as CommonJS, to load it here) and hold the result to
// the real 'undici': the same dispatchers with the same methods (the request,
// stream and pipeline the entry point puts on every dispatcher among them), the
// same errors, requests that work, and none of the parts aerial does not use,
// loaded or even bundled. This is the check to run when undici is upgraded
// (docs/development.md).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import * as undici from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

const plugins = (await import(pathToFileURL(join(ROOT, 'scripts', 'bundle-plugins.mjs')).href)) as { builtinShims: Plugin; treeShakenUndici: () => Promise<Plugin> };
const work = mkdtempSync(join(tmpdir(), 'aerial-tree-shaken-undici-'));
const SCRIPT = join(work, 'undici.cjs');
await build({
  entryPoints: [join(ROOT, 'src', 'api', 'undici.ts')],
  outfile: SCRIPT,
  plugins: [await plugins.treeShakenUndici(), plugins.builtinShims],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'external',
  logLevel: 'warning',
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The script that holds undici, and the files its source map names. */
function undiciScript(): { file: string; sources: string[] } {
  const { sources } = JSON.parse(readFileSync(`${SCRIPT}.map`, 'utf8')) as { sources: string[] };
  expect(sources.some((source) => source.endsWith('node_modules/undici/index.js'))).toBe(true);
  return { file: SCRIPT, sources };
}

/** undici's files (relative to its directory) that went into the script. */
const undiciFiles = (sources: string[]) => sources.flatMap((s) => /node_modules\/undici\/(.*)$/.exec(s)?.[1] ?? []);

type Bundled = { Agent: typeof undici.Agent; EnvHttpProxyAgent: typeof undici.EnvHttpProxyAgent; Pool: typeof undici.Pool; errors: typeof undici.errors };

/** The name a class was declared with (Rollup numbers the ones it renames apart: `Agent$3`). */
const declaredName = (value: { name: string }) => value.name.replace(/\$\d+$/, '');

/** The script's exports: what src/api/undici.ts hands on in the bundle. */
function bundled(): Bundled {
  const exports = createRequire(import.meta.url)(undiciScript().file) as Record<string, unknown>;
  expect(Object.keys(exports).sort()).toEqual(['Agent', 'EnvHttpProxyAgent', 'Pool', 'errors']);
  for (const name of ['Agent', 'EnvHttpProxyAgent', 'Pool']) expect(declaredName(exports[name] as { name: string })).toBe(name);
  return exports as unknown as Bundled;
}

/** Every method name along a prototype chain, up to Object.prototype. */
function methodsAlong(prototype: object | null): string[] {
  const names: string[] = [];
  for (let p = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    const className = declaredName(p.constructor);
    names.push(...Object.getOwnPropertyNames(p).map((name) => `${className}: ${name}`));
  }
  return names;
}

describe('undici’s version', () => {
  it('is one exact version in package.json and the lockfile, the one installed: the build rewrites its entry point, so an upgrade is a change of its own', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; devDependencies?: Record<string, string> }> };
    const installed = (createRequire(import.meta.url)('undici/package.json') as { version: string }).version;
    expect(manifest.devDependencies.undici).toMatch(/^\d+\.\d+\.\d+$/);
    expect([manifest.devDependencies.undici, lock.packages['']!.devDependencies!.undici, lock.packages['node_modules/undici']!.version]).toEqual([installed, installed, installed]);
  });
});

describe('undici as bundled, tree-shaken', () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.end(`${req.method} ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('gives each dispatcher the methods the real one has, the request, stream and pipeline the entry point adds among them', async () => {
    const { Agent, EnvHttpProxyAgent, Pool } = bundled();
    const dispatcherMethods = ['request', 'stream', 'pipeline', 'upgrade', 'connect'];
    for (const [mine, real] of [
      [Agent, undici.Agent],
      [EnvHttpProxyAgent, undici.EnvHttpProxyAgent],
      [Pool, undici.Pool],
    ] as const) {
      expect(methodsAlong(mine.prototype)).toEqual(methodsAlong(real.prototype));
      for (const name of dispatcherMethods) expect([real.name, name, typeof (mine.prototype as unknown as Record<string, unknown>)[name]]).toEqual([real.name, name, 'function']);
    }
    expect(methodsAlong(Agent.prototype)).toEqual(expect.arrayContaining(dispatcherMethods.map((name) => `Dispatcher: ${name}`)));
  });

  it('has the same errors: each class, its name and its code', async () => {
    const { errors } = bundled();
    expect(Object.keys(errors).sort()).toEqual(Object.keys(undici.errors).sort());
    const describeError = (Class: unknown) => {
      // Enough for every constructor: (message, status code, details with headers).
      const error = new (Class as new (...args: unknown[]) => Error & { code?: string })('probe', 500, { headers: {}, data: {} });
      return { name: error.name, code: error.code, message: error.message, isError: error instanceof Error };
    };
    for (const [name, Class] of Object.entries(undici.errors)) {
      if (typeof Class !== 'function') continue;
      expect([name, describeError((errors as unknown as Record<string, unknown>)[name])]).toEqual([name, describeError(Class)]);
    }
    // Its own errors are instances of its own classes: one copy of each, as aerial's checks expect.
    expect(new errors.ConnectTimeoutError()).toBeInstanceOf(errors.UndiciError);
  });

  it('requests and streams through a real socket with an Agent, a Pool and an EnvHttpProxyAgent', async () => {
    const { Agent, EnvHttpProxyAgent, Pool, errors } = bundled();
    for (const dispatcher of [new Agent(), new Pool(origin), new EnvHttpProxyAgent({ httpProxy: '', httpsProxy: '', noProxy: '' })]) {
      const response = await dispatcher.request({ origin, path: '/probe?x=1', method: 'GET' });
      expect([response.statusCode, await response.body.text()]).toEqual([200, 'GET /probe?x=1']);
      const chunks: Buffer[] = [];
      const { Writable } = await import('node:stream');
      await dispatcher.stream({ origin, path: '/streamed', method: 'POST', body: 'x' }, () => new Writable({ write: (chunk: Buffer, _e, done) => (chunks.push(chunk), done()) }));
      expect(Buffer.concat(chunks).toString()).toBe('POST /streamed');
      await dispatcher.close();
    }
    // A closed dispatcher's refusal: the same error as the real undici's, and one of the bundle's own classes.
    const refusal = async (dispatcher: undici.Dispatcher): Promise<Error & { code?: string }> => {
      await dispatcher.close();
      return dispatcher.request({ origin, path: '/', method: 'GET' }).then(
        () => new Error('answered'),
        (error: Error) => error,
      );
    };
    const [mine, real] = [await refusal(new Agent()), await refusal(new undici.Agent())];
    expect([mine.name, mine.code]).toEqual([real.name, real.code]);
    expect(real.code).toMatch(/^UND_ERR_/);
    expect(mine).toBeInstanceOf((errors as unknown as Record<string, new () => Error>)[real.name]);
  });

  it('bundles the dispatchers, and none of fetch, WebSocket, EventSource, mocks, caches, interceptors or cookies', () => {
    const files = undiciFiles(undiciScript().sources);
    expect(files).toEqual(expect.arrayContaining(['index.js', 'lib/dispatcher/agent.js', 'lib/dispatcher/pool.js', 'lib/dispatcher/env-http-proxy-agent.js', 'lib/core/errors.js', 'lib/api/index.js']));
    const unused = /^lib\/(web\/(websocket|eventsource|cache|cookies)\/|web\/fetch\/(index|headers|request|response)\.js|mock\/|interceptor\/|handler\/(cache|retry|redirect|deduplication)|cache\/memory)/;
    expect(files.filter((file) => unused.test(file))).toEqual([]);
  });

  it('loads none of the Node built-ins only those parts take, and keeps undici’s own lazy parts lazy', () => {
    // A fresh Node that loads only the script, beside one that loads nothing.
    // Written to fd 1 as it is: process.stdout on a pipe would load node:net and the streams itself.
    const loadedBy = (file: string | undefined) =>
      JSON.parse(
        execFileSync(process.execPath, ['-e', `${file ? `require(${JSON.stringify(file)});` : ''} require('node:fs').writeSync(1, JSON.stringify(process.moduleLoadList));`], { encoding: 'utf8' }),
      ) as string[];
    const bare = new Set(loadedBy(undefined));
    const loaded = loadedBy(undiciScript().file).filter((name) => !bare.has(name));
    const builtin = (name: string) => loaded.includes(`NativeModule ${name}`);
    // The list sees the built-ins the script loads.
    expect(builtin('net')).toBe(true);
    // node:http, node:http2 and node:assert have stand-ins (scripts/shims/).
    expect(['worker_threads', 'perf_hooks', 'console', 'crypto', 'dns', 'util/types', 'http', 'http2', 'zlib', 'fs/promises', 'assert'].filter(builtin)).toEqual([]);
    // node:stream brings the web streams' helpers; the streams themselves, fetch's, stay unloaded.
    expect(loaded.filter((name) => /webstreams\/(readable|writable|transform)stream|internal\/deps\/undici/.test(name))).toEqual([]);
  });
});
