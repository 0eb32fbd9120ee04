// The bundle replaces a few Node built-ins with lazy stand-ins (scripts/shims/);
// these tests hold the stand-ins to the real modules.
import { AssertionError } from 'node:assert';
import http from 'node:http';
import http2 from 'node:http2';
import childProcess from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const undiciHttp2 = require('../../../scripts/shims/undici-http2.cjs') as { constants: Record<string, unknown>; connect: unknown };
const commanderChildProcess = require('../../../scripts/shims/commander-child-process.cjs') as typeof childProcess;
const undiciHttp = require('../../../scripts/shims/undici-http.cjs') as { maxHeaderSize: number; IncomingMessage: new () => object; STATUS_CODES: unknown };
const undiciAssert = require('../../../scripts/shims/undici-assert.cjs') as (value: unknown, message?: string | Error) => void;

describe('undici http2 stand-in', () => {
  it('carries exactly the constants node:http2 defines, for every name undici reads', () => {
    for (const [name, value] of Object.entries(undiciHttp2.constants)) {
      expect([name, value]).toEqual([name, (http2.constants as Record<string, unknown>)[name]]);
    }
  });

  it('covers every constant undici destructures from node:http2', async () => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(require.resolve('undici/lib/dispatcher/client-h2.js'), 'utf8');
    const block = /constants:\s*{([^}]*)}\s*}\s*=\s*http2/.exec(source)?.[1] ?? '';
    const names = block.split(',').map((n) => n.trim()).filter(Boolean);
    expect(names.length).toBeGreaterThan(5);
    expect(Object.keys(undiciHttp2.constants).sort()).toEqual(names.sort());
  });
});

describe('commander child_process stand-in', () => {
  it('forwards to the real module on first use', () => {
    expect(commanderChildProcess.spawn).toBe(childProcess.spawn);
    expect(commanderChildProcess.execFileSync).toBe(childProcess.execFileSync);
  });
});

describe('undici assert stand-in', () => {
  it('passes a truthy value and throws node:assert\'s own error for a falsy one', () => {
    expect(() => undiciAssert(1)).not.toThrow();
    expect(() => undiciAssert('x', 'unused')).not.toThrow();
    expect(() => undiciAssert(0)).toThrow(AssertionError);
    expect(() => undiciAssert(null, 'the message')).toThrow(new AssertionError({ message: 'the message', actual: null, expected: true, operator: '==' }));
    const own = new RangeError('an error of its own');
    expect(() => undiciAssert(false, own)).toThrow(own);
  });

  it('is all undici uses of node:assert: the function itself, never one of its methods', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const lib = join(require.resolve('undici/package.json'), '..', 'lib');
    const files = (await readdir(lib, { recursive: true })).filter((file) => file.endsWith('.js'));
    let importers = 0;
    for (const file of files) {
      const source = await readFile(join(lib, file), 'utf8');
      const binding = /const (\w+) = require\('node:assert'\)/.exec(source)?.[1];
      if (!binding) continue;
      importers++;
      expect([file, new RegExp(`\\b${binding}\\.\\w`).test(source)]).toEqual([file, false]);
    }
    expect(importers).toBeGreaterThan(10);
  });
});

describe('undici http stand-in', () => {
  it('gives Node\'s header limit: its default, or what --max-http-header-size sets', async () => {
    expect(undiciHttp.maxHeaderSize).toBe(http.maxHeaderSize);
    const { execFileSync } = await import('node:child_process');
    const shim = require.resolve('../../../scripts/shims/undici-http.cjs');
    const limitIn = (args: string[], env: Record<string, string>) =>
      Number(execFileSync(process.execPath, [...args, '-e', `process.stdout.write(String(require(${JSON.stringify(shim)}).maxHeaderSize))`], { env: { ...process.env, ...env }, encoding: 'utf8' }));
    expect(limitIn([], { NODE_OPTIONS: '' })).toBe(16 * 1024);
    expect(limitIn(['--max-http-header-size=32768'], { NODE_OPTIONS: '' })).toBe(32768);
    expect(limitIn([], { NODE_OPTIONS: '--max-http-header-size=40000' })).toBe(40000);
  });

  it('has an IncomingMessage nothing aerial sends is an instance of, and forwards every other name to node:http', async () => {
    const { Socket } = await import('node:net');
    const incoming = new http.IncomingMessage(new Socket());
    expect(Object.getPrototypeOf(incoming).constructor === undiciHttp.IncomingMessage).toBe(false);
    expect(undiciHttp.STATUS_CODES).toBe(http.STATUS_CODES);
  });

  // STATUS_CODES is taken by fetch and the mocks alone, which the bundle leaves out (the stand-in would forward it).
  it('is all undici takes from node:http as it loads: maxHeaderSize and IncomingMessage (and STATUS_CODES, outside the bundle)', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const lib = join(require.resolve('undici/package.json'), '..', 'lib');
    const files = (await readdir(lib, { recursive: true })).filter((file) => file.endsWith('.js'));
    const taken = new Set<string>();
    for (const file of files) {
      const source = await readFile(join(lib, file), 'utf8');
      const destructured = /const {([^}]*)} = require\('node:http'\)/.exec(source)?.[1];
      for (const name of destructured?.split(',') ?? []) taken.add(name.trim());
      const binding = /const (\w+) = require\('node:http'\)/.exec(source)?.[1];
      if (binding) for (const [, name] of source.matchAll(new RegExp(`\\b${binding}\\.(\\w+)`, 'g'))) taken.add(name!);
    }
    expect([...taken].filter(Boolean).sort()).toEqual(['IncomingMessage', 'STATUS_CODES', 'maxHeaderSize']);
  });
});
