// makeDirectories (src/files/directories.ts): `mkdir -p` made one level at a
// time, never through Node's recursive mkdir. Real directories in a private
// temp dir; the refusals of a file system that makes none (procfs) are in
// test/e2e/output-target.test.ts.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirectories } from '../../../src/files/directories.js';
import { tempDir } from '../../helpers/cli.js';

const home = tempDir('aerial-directories-');
afterAll(() => home.remove());
let count = 0;
const fresh = () => join(home.path, `case-${++count}`);

describe('makeDirectories', () => {
  it('makes every missing level with the mode asked for, and returns the first one made, as mkdir -p does', async () => {
    const base = fresh();
    mkdirSync(base);
    const target = join(base, 'a', 'b', 'c');
    expect(await makeDirectories(target, 0o700)).toBe(join(base, 'a'));
    for (const level of ['a', 'a/b', 'a/b/c']) {
      const info = statSync(join(base, level));
      expect(info.isDirectory()).toBe(true);
      expect(info.mode & 0o777).toBe(0o700);
    }
    // Nothing missing: nothing made.
    expect(await makeDirectories(target)).toBeUndefined();
  });

  it('returns the first level in the form the path was given in (relative stays relative)', async () => {
    const base = fresh();
    mkdirSync(base);
    const relativeTarget = join(relative(process.cwd(), base), 'x', 'y');
    expect(await makeDirectories(relativeTarget)).toBe(join(relative(process.cwd(), base), 'x'));
    expect(statSync(join(base, 'x', 'y')).isDirectory()).toBe(true);
  });

  it('a file in the way: ENOTDIR from mkdir, naming the file', async () => {
    const base = fresh();
    mkdirSync(base);
    writeFileSync(join(base, 'plain'), 'x');
    await expect(makeDirectories(join(base, 'plain', 'sub', 'deeper'))).rejects.toMatchObject({ code: 'ENOTDIR', syscall: 'mkdir', path: join(base, 'plain') });
    await expect(makeDirectories(join(base, 'plain'))).rejects.toMatchObject({ code: 'ENOTDIR', path: join(base, 'plain') });
  });

  it('many makers of one path at once all succeed: a level made by another in between is as good as made', async () => {
    const base = fresh();
    mkdirSync(base);
    const target = join(base, 'p', 'q', 'r', 's');
    const results = await Promise.all(Array.from({ length: 16 }, () => makeDirectories(target)));
    expect(statSync(target).isDirectory()).toBe(true);
    // Each names the first level it found missing: one of the path's own, never anything above it.
    const levels = [join(base, 'p'), join(base, 'p', 'q'), join(base, 'p', 'q', 'r'), target];
    for (const made of results) if (made !== undefined) expect(levels).toContain(made);
    expect(results).toContain(join(base, 'p'));
  });
});
