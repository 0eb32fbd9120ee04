import { describe, expect, it } from 'vitest';
import { ExportNames, imageFileName } from '../../../../src/commands/export/names.js';
import { foldName } from '../../../../src/files/file-names.js';

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
    const names = new ExportNames();
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

  it('a tag that is itself taken moves on to the next attempt', () => {
    const names = new ExportNames();
    names.name(['a']);
    const first = new ExportNames();
    first.name(['a', 'A']);
    const tagged = first.of('A');
    // An id whose plain name is the tag the next clash would get.
    names.name([tagged.slice(0, -4)]);
    names.name(['A']);
    expect(names.of('A')).toMatch(/^A~[0-9a-f]{10}-2\.jpg$/);
  });
});
