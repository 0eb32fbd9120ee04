import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DIRECTORY, FileLooker, lookAt, MISSING, OTHER, type FileLook } from '../../src/batch/file-looks.js';
import { tempDir } from '../helpers/cli.js';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});

/** A scratch directory with a file of 5 bytes, a directory, a symbolic link and a path through a file. */
function scene(): Record<string, string> {
  const dir = tempDir('aerial-looks-');
  dirs.push(dir);
  const at = (name: string) => join(dir.path, name);
  writeFileSync(at('file.jpg'), 'hello');
  mkdirSync(at('dir.jpg'));
  symlinkSync(at('file.jpg'), at('link.jpg'));
  return { file: at('file.jpg'), dir: at('dir.jpg'), link: at('link.jpg'), missing: at('none.jpg'), through: join(at('file.jpg'), 'x.jpg') };
}

describe('looking at output files', () => {
  it('tells a file by its size from a directory, anything else, and nothing (a path through a file included)', () => {
    const paths = scene();
    expect(lookAt(paths.file!)).toBe(5);
    expect(lookAt(paths.dir!)).toBe(DIRECTORY);
    expect(lookAt(paths.link!)).toBe(OTHER);
    expect(lookAt(paths.missing!)).toBe(MISSING);
    expect(lookAt(paths.through!)).toBe(MISSING);
  });

  it('on a second thread, sees what lookAt sees and hands every item on in the order given, across batches', async () => {
    const paths = scene();
    const kinds = Object.keys(paths);
    const seen: Array<[number, FileLook]> = [];
    const looker = new FileLooker<number>((item, look) => seen.push([item, look]));
    for (let i = 0; i < 2000; i++) looker.add(i, i % 7 === 6 ? '' : paths[kinds[i % kinds.length]!]!);
    await looker.finish();
    expect(seen.map(([item]) => item)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    for (const [item, look] of seen) expect(look).toBe(item % 7 === 6 ? MISSING : lookAt(paths[kinds[item % kinds.length]!]!));
  });

  it('throws what a callback threw once every item was handed on, and ends its thread', async () => {
    const paths = scene();
    let handed = 0;
    const looker = new FileLooker<number>((item) => {
      handed++;
      if (item === 3) throw new Error('row 3 failed');
    });
    for (let i = 0; i < 600; i++) looker.add(i, paths.file!);
    await expect(looker.finish()).rejects.toThrow('row 3 failed');
    expect(handed).toBeGreaterThan(3);
  });
});
