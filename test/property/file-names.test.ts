// File names made from data, over generated values: any Unicode (lone
// surrogates, controls, bidi overrides, separators, dots), any length in
// bytes. Every name made is one safe component within 255 bytes, its temp
// name fits too, inputs that differ keep names that differ, and the file
// system itself accepts every one of them (they are created for real).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ExportNames } from '../../src/commands/export/names.js';
import {
  boundedName,
  cutToBytes,
  foldName,
  isPartFileOf,
  MAX_NAME_BYTES,
  partFileName,
  safeNamePart,
  separateNames,
  utf8Length,
} from '../../src/files/file-names.js';

const dir = mkdtempSync(join(tmpdir(), 'aerial-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** A directory for an export's names (ExportNames keeps them in a file there). */
const namesRoot = mkdtempSync(join(tmpdir(), 'aerial-export-names-'));
afterAll(() => rmSync(namesRoot, { recursive: true, force: true }));
const namesDir = (n: number) => {
  const path = join(namesRoot, String(n));
  mkdirSync(path, { recursive: true });
  return path;
};

/** Characters that break names, and multi-byte ones that make bytes outrun characters. */
const nasty = fc.constantFrom('/', '\\', '.', '..', '\u0000', '\u001b', '\n', '\u0085', '\u202e', '\u2066', '\u2028', '\ud800', '\udfff', ' ', '\t', ':', '*', 'é', 'e\u0301', '日', '😀', '👩‍👩‍👧', 'A', 'a', '~', '%2F');
const value = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(nasty, { maxLength: 30 }).map((parts) => parts.join('')),
  fc.tuple(fc.constantFrom('é', '日', '😀', 'x'), fc.integer({ min: 60, max: 400 })).map(([char, count]) => char.repeat(count)),
);

const UNSAFE = /[/\\\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Cs}]/u;

describe('safe names over generated values', () => {
  it('a safe part has no separator, control, override or lone surrogate, and never starts with a dot (property)', () => {
    fc.assert(
      fc.property(value, (input) => {
        const safe = safeNamePart(input);
        expect(safe.length).toBeGreaterThan(0);
        expect(safe).not.toMatch(UNSAFE);
        expect(safe.startsWith('.')).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it('a bounded name fits in 255 bytes, keeps its ending, is unchanged when it fitted, and cuts between characters (property)', () => {
    fc.assert(
      fc.property(value.map(safeNamePart), fc.constantFrom('', '.jpg', '.jpeg'), (stem, ending) => {
        const name = boundedName(stem, ending);
        expect(utf8Length(name)).toBeLessThanOrEqual(MAX_NAME_BYTES);
        expect(name.endsWith(ending)).toBe(true);
        expect(name).not.toMatch(/\p{Cs}/u);
        if (utf8Length(stem + ending) <= MAX_NAME_BYTES) expect(name).toBe(stem + ending);
        else expect(name).toMatch(/~[0-9a-f]{10}(\.jpe?g)?$/);
      }),
      { numRuns: 3000 },
    );
  });

  it('cuts in bytes, not characters, and never inside a character', () => {
    expect(cutToBytes('é'.repeat(200), 255)).toBe('é'.repeat(127));
    expect(cutToBytes('😀'.repeat(100), 255)).toBe('😀'.repeat(63));
    // e + combining accent is one character: it is kept whole or not at all.
    expect(cutToBytes(`${'x'.repeat(252)}e\u0301`, 254)).toBe('x'.repeat(252));
    expect(cutToBytes('abc', 255)).toBe('abc');
  });

  it('two long names that differ only past the cut stay different', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ minLength: 1, maxLength: 20 }), (a, b) => {
        fc.pre(a !== b);
        const prefix = 'é'.repeat(200);
        expect(boundedName(prefix + a, '.jpg')).not.toBe(boundedName(prefix + b, '.jpg'));
      }),
      { numRuns: 500 },
    );
  });

  it('temp names of any target up to 255 bytes fit and belong to that target only (property)', () => {
    fc.assert(
      fc.property(value.map((v) => boundedName(safeNamePart(v), '.jpg')), value.map((v) => boundedName(safeNamePart(v), '.jpg')), (target, other) => {
        const temp = partFileName(target, '0123456789ab');
        expect(utf8Length(temp)).toBeLessThanOrEqual(MAX_NAME_BYTES);
        expect(isPartFileOf(temp, target)).toBe(true);
        if (other !== target) expect(isPartFileOf(temp, other)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('the file system accepts every name made, and its temp name, at full length', () => {
    const names = new Set(fc.sample(value.map((v) => boundedName(safeNamePart(v), '.jpg')), { numRuns: 300, seed: 14 }));
    names.add(boundedName('é'.repeat(300), '.jpg'));
    names.add(boundedName('😀'.repeat(300), '.jpg'));
    for (const name of names) {
      writeFileSync(join(dir, name), '');
      writeFileSync(join(dir, partFileName(name, 'abcdef012345')), '');
    }
    expect(readdirSync(dir)).toHaveLength(names.size * 2);
  });
});

describe('names told apart', () => {
  it('export gives every id its own file, the same on every run whatever its pages, plain when the id is a safe name no earlier one took (property)', () => {
    const id = fc.oneof(fc.constantFrom('a/b', 'a_b', 'A_B', 'ABC', 'abc', '..', '.', '__', '.x', '_x', 'img_1'), value.filter((v) => v !== ''));
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 12 }), fc.integer({ min: 1, max: 12 }), (ids, pageSize) => {
        const names = ExportNames.create(namesDir(0));
        const paged = ExportNames.create(namesDir(1));
        try {
        names.name(ids);
        for (let start = 0; start < ids.length; start += pageSize) paged.name(ids.slice(start, start + pageSize));
        expect(ids.map((key) => paged.of(key))).toEqual(ids.map((key) => names.of(key)));
        const folded = ids.map((key) => foldName(names.of(key)));
        expect(new Set(folded).size).toBe(ids.length);
        ids.forEach((key, i) => {
          const name = names.of(key);
          expect(utf8Length(name)).toBeLessThanOrEqual(MAX_NAME_BYTES);
          expect(name).not.toMatch(UNSAFE);
          expect(name.startsWith('.')).toBe(false);
          const taken = folded.slice(0, i).includes(foldName(`${key}.jpg`));
          if (safeNamePart(key) === key && utf8Length(key) <= 251 && !taken) expect(name).toBe(`${key}.jpg`);
          else expect(name).not.toBe(`${key}.jpg`);
        });
        } finally {
          names.remove();
          paged.remove();
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('separates names even when the hashes of two inputs agree (a server crafting ids)', () => {
    const names = separateNames(['p', 'q', 'r'], () => 'same.jpg', (item, attempt) => (attempt === 0 ? 'same~0000000000.jpg' : `same~0000000000-${attempt + 1}.jpg`), () => false);
    expect(new Set(names.values()).size).toBe(3);
    expect([...names.values()]).toEqual(['same~0000000000.jpg', 'same~0000000000-2.jpg', 'same~0000000000-3.jpg']);
  });
});
