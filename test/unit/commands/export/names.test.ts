import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExportNames, imageFileName, NAMES_NAME } from '../../../../src/commands/export/names.js';
import { foldName } from '../../../../src/files/file-names.js';

const root = mkdtempSync(join(tmpdir(), 'aerial-export-names-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let made = 0;
/** Names kept in a directory of their own, as each export's are. */
function newNames(): ExportNames {
  const dir = join(root, String(made++));
  mkdirSync(dir);
  return ExportNames.create(dir);
}

describe('imageFileName', () => {
  it('names a file by id, never by a path the id spells; a changed id carries a hash of itself', () => {
    expect(imageFileName('0b6f-42')).toBe('0b6f-42.jpg');
    expect(imageFileName('../../etc/x')).toMatch(/^___\.\._etc_x~[0-9a-f]{10}\.jpg$/);
    expect(imageFileName('a/b')).not.toBe(imageFileName('a_b'));
    expect(imageFileName('a_b')).toBe('a_b.jpg');
  });
});

describe('ExportNames', () => {
  it('an id whose name would be one file with an earlier one\'s, where case does not count, is the one tagged', () => {
    const names = newNames();
    names.name(['ABC', 'abc', 'x']);
    expect(names.of('ABC')).toBe('ABC.jpg');
    expect(names.of('abc')).toMatch(/^abc~[0-9a-f]{10}\.jpg$/);
    expect(names.of('x')).toBe('x.jpg');
    names.name(['X', 'y', 'a/b', 'a_b']);
    expect(names.of('x')).toBe('x.jpg');
    expect(names.of('X')).toMatch(/^X~[0-9a-f]{10}\.jpg$/);
    expect(names.of('y')).toBe('y.jpg');
    expect(names.of('a/b')).toMatch(/^a_b~[0-9a-f]{10}\.jpg$/);
    expect(names.of('a_b')).toBe('a_b.jpg');
    expect(names.taken('Y.JPG')).toBe(true);
    expect(names.taken('z.jpg')).toBe(false);
    const all = ['ABC', 'abc', 'x', 'X', 'y', 'a/b', 'a_b'].map((id) => foldName(names.of(id)));
    expect(new Set(all).size).toBe(7);
  });

  it('keeps the names given on disk, in a file of their own that remove() takes away', () => {
    const dir = join(root, 'own');
    mkdirSync(dir);
    const names = ExportNames.create(dir);
    const ids = Array.from({ length: 5_000 }, (_, n) => `image-${n}`);
    names.name(ids);
    names.name(['IMAGE-7']);
    expect(names.of('IMAGE-7')).toMatch(/^IMAGE-7~[0-9a-f]{10}\.jpg$/);
    expect(ids.every((id) => names.taken(`${id.toUpperCase()}.JPG`))).toBe(true);
    expect(readdirSync(dir)).toEqual([NAMES_NAME]);
    names.remove();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a tag that is itself taken moves on to the next attempt', () => {
    const names = newNames();
    names.name(['a']);
    const first = newNames();
    first.name(['a', 'A']);
    const tagged = first.of('A');
    // An id whose plain name is the tag the next clash would get.
    names.name([tagged.slice(0, -4)]);
    names.name(['A']);
    expect(names.of('A')).toMatch(/^A~[0-9a-f]{10}-2\.jpg$/);
  });
});
