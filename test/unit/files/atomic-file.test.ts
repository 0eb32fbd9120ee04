// writeFileAtomic on a real file system: the new bytes replace the old ones,
// and writers renaming into one directory at the same time share the
// directory's fsync, each still getting one that started after its rename.
// FileHandle.prototype.sync is wrapped (the real fsync still runs) to see the
// directory fsyncs, and to make them slow enough for writers to pile up.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { globSync } from 'tinyglobby';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePrivateTempDirectory, writeFileAtomic, writeFileAtomicStream } from '../../../src/files/atomic-file.js';
import { fileSystemFailure } from '../../../src/lifecycle/errors.js';

interface DirectorySync {
  /** The directory's entries when this fsync started. */
  entries: Set<string>;
  /** Event numbers: when it started and when it finished. */
  startedAt: number;
  finishedAt?: number;
}

let work: string;
let events = 0;
let directorySyncs: DirectorySync[] = [];
let handlePrototype: { sync: (this: FileHandle) => Promise<void> };
let realSync: (this: FileHandle) => Promise<void>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'aerial-atomic-file-'));
  const probe = await open(work, 'r');
  handlePrototype = Object.getPrototypeOf(probe) as typeof handlePrototype;
  await probe.close();
  realSync = handlePrototype.sync;
  handlePrototype.sync = async function (this: FileHandle) {
    if (!(await this.stat()).isDirectory()) return realSync.call(this);
    const sync: DirectorySync = { entries: new Set(readdirSync(currentDir)), startedAt: ++events };
    directorySyncs.push(sync);
    await realSync.call(this);
    await new Promise((resolve) => setTimeout(resolve, 150));
    sync.finishedAt = ++events;
  };
});

afterAll(() => {
  handlePrototype.sync = realSync;
  rmSync(work, { recursive: true, force: true });
});

let currentDir: string;
let dirs = 0;
afterEach(() => {
  directorySyncs = [];
});

function freshDir(): string {
  currentDir = mkdtempSync(join(work, `dir-${++dirs}-`));
  return currentDir;
}

describe('writeFileAtomic', () => {
  it('replaces the file with the new bytes and leaves no temp file behind', async () => {
    const dir = freshDir();
    const path = join(dir, 'state.json');
    await writeFileAtomic(path, 'old');
    await writeFileAtomic(path, Buffer.from('new'));
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('gives writers renaming at the same time a few shared directory fsyncs, each started after its rename', async () => {
    const dir = freshDir();
    const names = Array.from({ length: 16 }, (_, i) => `image-${i}.jpg`);
    const resolvedAt = new Map<string, number>();
    await Promise.all(
      names.map(async (name) => {
        await writeFileAtomic(join(dir, name), Buffer.alloc(64 * 1024, name.length));
        resolvedAt.set(name, ++events);
      }),
    );
    expect(readdirSync(dir).sort()).toEqual([...names].sort());
    // One each would be 16; the writes finish within the slowed fsyncs of each other.
    expect(directorySyncs.length).toBeLessThanOrEqual(4);
    for (const name of names) {
      const covering = directorySyncs.filter((sync) => sync.entries.has(name) && sync.finishedAt! < resolvedAt.get(name)!);
      expect(covering, name).not.toEqual([]);
    }
  });

  it('starts a new directory fsync for a rename made while one is running', async () => {
    const dir = freshDir();
    const first = writeFileAtomic(join(dir, 'a'), 'a');
    // Wait until the first write's directory fsync is under way, then write again.
    while (directorySyncs.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await writeFileAtomic(join(dir, 'b'), 'b');
    await first;
    expect(directorySyncs).toHaveLength(2);
    expect(directorySyncs[0]!.entries.has('b')).toBe(false);
    expect(directorySyncs[1]!.entries.has('b')).toBe(true);
  });

  it('a write that fails on the open temp file (a full disk names no file) is told as a failure of the file being written; the temp file goes', async () => {
    const dir = freshDir();
    const target = join(dir, 'index.html');
    const failure = await writeFileAtomicStream(target, async (append) => {
      await append('<!doctype html>');
      // What a write(2) to a full disk throws: a code and a system call, no path.
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
    }).catch((error: unknown) => error);
    expect(fileSystemFailure(failure)?.message).toBe(`cannot write ${target}: no space left on the device`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('makePrivateTempDirectory', () => {
  it('makes a new directory in the OS temp directory, with a random suffix, the user’s own, mode 0700, never one planted before it', () => {
    const shared = mkdtempSync(join(tmpdir(), 'aerial-shared-tmp-'));
    const before = process.env.TMPDIR;
    process.env.TMPDIR = shared;
    try {
      // Another user's guesses at the name: a directory and a link, where a fixed name would have gone.
      symlinkSync(tmpdir(), join(shared, 'aerial-probe-'));
      const made = [makePrivateTempDirectory('aerial-probe-'), makePrivateTempDirectory('aerial-probe-')];
      expect(new Set(made).size).toBe(2);
      for (const dir of made) {
        expect(dir.startsWith(join(shared, 'aerial-probe-'))).toBe(true);
        expect(dir.length).toBe(join(shared, 'aerial-probe-').length + 6);
        const info = lstatSync(dir);
        expect([info.isDirectory(), info.mode & 0o777, info.uid]).toEqual([true, 0o700, process.getuid!()]);
        expect(readdirSync(dir)).toEqual([]);
      }
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      rmSync(shared, { recursive: true, force: true });
    }
  });
});

describe('the shared temp directory', () => {
  it('is used by atomic-file.ts alone (makePrivateTempDirectory), and nothing in src/ writes a file with writeFileSync', () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    const found = globSync('src/**/*.ts', { cwd: root, absolute: true })
      .filter((file) => /\btmpdir\(|\bmkdtemp(Sync)?\(|\bwriteFileSync\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(found).toEqual(['src/files/atomic-file.ts']);
  });
});
