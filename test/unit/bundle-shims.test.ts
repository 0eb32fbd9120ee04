// The bundle replaces a few Node built-ins with lazy stand-ins (scripts/shims/);
// these tests hold the stand-ins to the real modules.
import { AssertionError } from 'node:assert';
import http2 from 'node:http2';
import childProcess, { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const undiciHttp2 = require('../../scripts/shims/undici-http2.cjs') as { constants: Record<string, unknown>; connect: unknown };
const commanderChildProcess = require('../../scripts/shims/commander-child-process.cjs') as typeof childProcess;
const undiciAssert = require('../../scripts/shims/undici-assert.cjs') as (value: unknown, message?: string | Error) => void;
const { nodeHas } = require('../../scripts/shims/lazy-builtin.cjs') as { nodeHas: (firstReleases: Record<number, number>, version?: string) => boolean };

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

/** The lazy stand-ins built on scripts/shims/lazy-builtin.cjs, by the built-in each replaces in undici. */
const LAZY_STAND_INS = {
  'node:fs/promises': 'undici-fs-promises.cjs',
  'node:zlib': 'undici-zlib.cjs',
} as const;
type LazyBuiltin = keyof typeof LAZY_STAND_INS;
const standInPath = (builtin: LazyBuiltin) => require.resolve(`../../scripts/shims/${LAZY_STAND_INS[builtin]}`);
const standIn = (builtin: LazyBuiltin) => require(standInPath(builtin)) as Record<string, unknown>;

/**
 * Every name undici reads from `builtin` while it loads, from its sources:
 * destructured from the require, read off it (`require('node:x').name`), or
 * probed by its runtime-features (`['node:x', 'name']`).
 */
function namesUndiciReadsAtLoad(builtin: string): string[] {
  const lib = join(dirname(require.resolve('undici/package.json')), 'lib');
  const names = new Set<string>();
  const quoted = builtin.replace('/', '\\/');
  for (const file of readdirSync(lib, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(join(lib, file), 'utf8');
    for (const [, list] of source.matchAll(new RegExp(`const \\{([^}]*)\\} = require\\('${quoted}'\\)`, 'g'))) {
      for (const name of list.split(',')) names.add(name.trim().split(':')[0].trim());
    }
    for (const [, name] of source.matchAll(new RegExp(`require\\('${quoted}'\\)\\.(\\w+)`, 'g'))) names.add(name);
    for (const [, name] of source.matchAll(new RegExp(`\\['${quoted}', '(\\w+)'\\]`, 'g'))) names.add(name);
  }
  names.delete('');
  return [...names].sort();
}

describe('lazy stand-ins for undici (fs/promises, zlib)', () => {
  const work = mkdtempSync(join(tmpdir(), 'aerial-shims-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('finds what undici reads from each at load (the check below has something to hold)', () => {
    expect(namesUndiciReadsAtLoad('node:fs/promises')).toEqual(['mkdir', 'readFile', 'writeFile']);
    expect(namesUndiciReadsAtLoad('node:zlib')).toEqual(
      expect.arrayContaining(['createBrotliDecompress', 'createGunzip', 'createInflate', 'createInflateRaw', 'createZstdDecompress', 'Z_DEFAULT_WINDOWBITS']),
    );
  });

  for (const builtin of Object.keys(LAZY_STAND_INS) as LazyBuiltin[]) {
    describe(builtin, () => {
      const real = require(builtin) as Record<string, unknown>;

      it('answers every name undici reads at load without loading the built-in', () => {
        const names = namesUndiciReadsAtLoad(builtin);
        // A fresh Node: this test's own process has long loaded them all.
        const script = `
          const standIn = require(${JSON.stringify(standInPath(builtin))});
          const read = ${JSON.stringify(names)}.map((name) => [name, typeof standIn[name]]);
          const loaded = process.moduleLoadList.includes('NativeModule ' + ${JSON.stringify(builtin.slice('node:'.length))});
          process.stdout.write(JSON.stringify({ read, loaded }));`;
        const { read, loaded } = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { read: [string, string][]; loaded: boolean };
        expect(loaded).toBe(false);
        expect(read).toEqual(names.map((name) => [name, typeof real[name]]));
      });

      it('gives, for each of those names, what the built-in gives: the same constant, or a function exactly where it has one', () => {
        const module = standIn(builtin);
        for (const name of namesUndiciReadsAtLoad(builtin)) {
          expect([name, typeof module[name]]).toEqual([name, typeof real[name]]);
          if (typeof real[name] !== 'function') expect([name, module[name]]).toEqual([name, real[name]]);
        }
      });

      it('is the built-in itself for every other name it exports', () => {
        const module = standIn(builtin);
        const own = new Set(namesUndiciReadsAtLoad(builtin));
        const others = Object.keys(real).filter((name) => !own.has(name));
        expect(others.length).toBeGreaterThan(0);
        for (const name of others) expect([name, module[name] === real[name]]).toEqual([name, true]);
      });
    });
  }

  it('fs/promises: the deferred functions read, write and make directories as the real ones do', async () => {
    const fsPromises = standIn('node:fs/promises') as unknown as typeof import('node:fs/promises');
    const nested = join(work, 'a', 'b');
    await fsPromises.mkdir(nested, { recursive: true });
    await fsPromises.writeFile(join(nested, 'f.txt'), 'written through the stand-in');
    expect(await fsPromises.readFile(join(nested, 'f.txt'), 'utf8')).toBe('written through the stand-in');
    await expect(fsPromises.readFile(join(work, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('zlib: the deferred constructors make the real streams, which decompress', async () => {
    const standInZlib = standIn('node:zlib') as unknown as typeof zlib & { Z_DEFAULT_WINDOWBITS: number };
    const text = 'aerial '.repeat(1000);
    const through = async (stream: NodeJS.ReadWriteStream, input: Buffer) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      const ended = new Promise((resolve, reject) => stream.on('end', resolve).on('error', reject));
      stream.end(input);
      await ended;
      return Buffer.concat(chunks).toString();
    };
    const gunzip = standInZlib.createGunzip();
    expect(gunzip).toBeInstanceOf(zlib.Gunzip);
    expect(await through(gunzip, await promisify(zlib.gzip)(text))).toBe(text);
    expect(await through(standInZlib.createInflate(), await promisify(zlib.deflate)(text))).toBe(text);
    expect(await through(standInZlib.createInflateRaw({ windowBits: standInZlib.Z_DEFAULT_WINDOWBITS }), await promisify(zlib.deflateRaw)(text))).toBe(text);
    expect(await through(standInZlib.createBrotliDecompress(), await promisify(zlib.brotliCompress)(text))).toBe(text);
    expect(() => standInZlib.createGunzip({ chunkSize: -1 })).toThrow(RangeError);
  });

  it('tells a feature by the first release of each line that shipped it', () => {
    const zstd = { 22: 15, 23: 8 };
    expect(['20.20.2', '22.14.0', '22.15.0', '23.7.0', '23.8.0', '24.0.0', '25.1.0'].map((version) => nodeHas(zstd, version))).toEqual([
      false,
      false,
      true,
      false,
      true,
      true,
      true,
    ]);
  });
});
