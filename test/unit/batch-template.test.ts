import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlaceholders, compileTemplate, expandTemplate, sanitizeValue } from '../../src/batch/template.js';

describe('compileTemplate', () => {
  it('splits literal text and placeholders', () => {
    const template = compileTemplate('out/{id}-{lat}_{lng}.jpg');
    expect(template.names).toEqual(['id', 'lat', 'lng']);
    expect(template.parts).toEqual([{ text: 'out/' }, { name: 'id' }, { text: '-' }, { name: 'lat' }, { text: '_' }, { name: 'lng' }, { text: '.jpg' }]);
  });

  it('refuses unbalanced braces, empty placeholders and names that are not JPEGs', () => {
    expect(() => compileTemplate('out/{id.jpg')).toThrow("--output-template has an unmatched '{' in 'out/{id.jpg'");
    expect(() => compileTemplate('out/id}.jpg')).toThrow("unmatched '}'");
    expect(() => compileTemplate('out/{}.jpg')).toThrow('empty placeholder');
    expect(() => compileTemplate('out/{id}.png')).toThrow('--output-template must end in .jpg or .jpeg');
    expect(() => compileTemplate('out/{id}')).toThrow('must end in .jpg');
    expect(compileTemplate('out/{id}.JPEG').names).toEqual(['id']);
  });

  it('lists what is available when a placeholder is unknown', () => {
    const template = compileTemplate('{id}-{nope}.jpg');
    expect(() => checkPlaceholders(template, (n) => n === 'id', ['row', 'id'])).toThrow(
      '--output-template: unknown placeholder {nope}; available: {row}, {id}',
    );
  });
});

describe('sanitizeValue', () => {
  it('keeps ordinary values', () => {
    expect(sanitizeValue('-33.8568')).toBe('-33.8568');
    expect(sanitizeValue('Tour Eiffel')).toBe('Tour_Eiffel');
    expect(sanitizeValue('Zürich')).toBe('Zürich');
  });

  it('neutralises separators, traversal, hidden names and reserved characters', () => {
    expect(sanitizeValue('../../etc/passwd')).toBe('___.._etc_passwd');
    expect(sanitizeValue('..')).toBe('__');
    expect(sanitizeValue('.hidden')).toBe('_hidden');
    expect(sanitizeValue('a\\b:c*d?e"f<g>h|i')).toBe('a_b_c_d_e_f_g_h_i');
    expect(sanitizeValue('nul\u0000byte\nline')).toBe('nul_byte_line');
    expect(sanitizeValue('')).toBe('_');
    expect(sanitizeValue('x'.repeat(300))).toHaveLength(100);
  });

  it('never yields a path separator, a parent reference or a leading dot (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 150 }), (value) => {
        const safe = sanitizeValue(value);
        return !/[/\\\u0000]/.test(safe) && !safe.startsWith('.') && safe.length > 0 && safe.length <= 100;
      }),
      { numRuns: 100 },
    );
  });
});

describe('expandTemplate', () => {
  it('fills placeholders with sanitised values and keeps the literal directories', () => {
    const template = compileTemplate('out/{country}/{id}.jpg');
    const values: Record<string, string> = { country: '../x', id: 'a/b' };
    expect(expandTemplate(template, (n) => values[n])).toBe('out/___x/a_b.jpg');
  });

  it('refuses an unknown name', () => {
    expect(() => expandTemplate(compileTemplate('{x}.jpg'), () => undefined)).toThrow('unknown placeholder {x}');
  });
});
