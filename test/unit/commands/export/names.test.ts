import { describe, expect, it } from 'vitest';
import { ExportNames, imageFileName, imageFileNames } from '../../../../src/commands/export/names.js';
import { foldName } from '../../../../src/files/file-names.js';

describe('imageFileName', () => {
  it('names a file by id, never by a path the id spells; a changed id carries a hash of itself', () => {
    expect(imageFileName('0b6f-42')).toBe('0b6f-42.jpg');
    expect(imageFileName('../../etc/x')).toMatch(/^___\.\._etc_x~[0-9a-f]{10}\.jpg$/);
    expect(imageFileName('a/b')).not.toBe(imageFileName('a_b'));
    expect(imageFileName('a_b')).toBe('a_b.jpg');
  });

  it('tells apart ids that differ only in case, and keeps the others plain', () => {
    const names = imageFileNames(['ABC', 'abc', 'x', 'a/b', 'a_b']);
    expect(names.get('x')).toBe('x.jpg');
    expect(names.get('a_b')).toBe('a_b.jpg');
    expect(names.get('ABC')).toMatch(/^ABC~[0-9a-f]{10}\.jpg$/);
    expect(names.get('abc')).toMatch(/^abc~[0-9a-f]{10}\.jpg$/);
    expect(new Set([...names.values()].map((n) => n.toLowerCase())).size).toBe(5);
  });
});

describe('ExportNames', () => {
  it('names page by page: ids clashing on one page are all tagged, an id clashing with one named earlier is the one tagged', () => {
    const names = new ExportNames();
    names.name(['ABC', 'abc', 'x']);
    expect(names.of('ABC')).toBe(imageFileNames(['ABC', 'abc', 'x']).get('ABC'));
    expect(names.of('abc')).toMatch(/^abc~[0-9a-f]{10}\.jpg$/);
    expect(names.of('x')).toBe('x.jpg');
    names.name(['X', 'y']);
    // Named on an earlier page, x keeps its name; X, listed later, is tagged.
    expect(names.of('x')).toBe('x.jpg');
    expect(names.of('X')).toMatch(/^X~[0-9a-f]{10}\.jpg$/);
    expect(names.of('y')).toBe('y.jpg');
    expect(names.taken('Y.JPG')).toBe(true);
    expect(names.taken('z.jpg')).toBe(false);
    const all = ['ABC', 'abc', 'x', 'X', 'y'].map((id) => foldName(names.of(id)));
    expect(new Set(all).size).toBe(5);
  });

  it('a tag that is itself taken moves on to the next attempt', () => {
    const names = new ExportNames();
    names.name(['a']);
    const tagged = imageFileNames(['A', 'a']).get('A')!;
    // An id whose plain name is the tag the next clash would get.
    names.name([tagged.slice(0, -4)]);
    names.name(['A']);
    expect(names.of('A')).toMatch(/^A~[0-9a-f]{10}-2\.jpg$/);
  });
});
