import { describe, expect, it } from 'vitest';
import { checkPlaceholders, compileTemplate, expandTemplate } from '../../../src/batch/template.js';

describe('compileTemplate', () => {
  it('splits literal text and placeholders', () => {
    const template = compileTemplate('out/{id}-{lat}_{lng}.jpg');
    expect(template.names).toEqual(['id', 'lat', 'lng']);
    expect(template.parts).toEqual([{ text: 'out/' }, { name: 'id' }, { text: '-' }, { name: 'lat' }, { text: '_' }, { name: 'lng' }, { text: '.jpg' }]);
  });

  it('refuses a directory or file name spelled out in the template that is longer than 255 bytes', () => {
    expect(() => compileTemplate(`${'é'.repeat(128)}/{id}.jpg`)).toThrow(/^--output-template: 'é+…' is longer than a file name may be \(255 bytes\)$/);
    expect(() => compileTemplate(`out/{id}-${'x'.repeat(260)}.jpg`)).not.toThrow();
    expect(() => compileTemplate(`out/${'x'.repeat(252)}.jpg`)).toThrow(/longer than a file name may be/);
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

describe('expandTemplate', () => {
  it('fills placeholders with sanitised values and keeps the literal directories', () => {
    const template = compileTemplate('out/{country}/{id}.jpg');
    const values: Record<string, string> = { country: '../x', id: 'a/b' };
    expect(expandTemplate(template, (n) => values[n])).toEqual({ path: 'out/___x/a_b.jpg', raw: 'out/../x/a/b.jpg' });
  });

  it('refuses an unknown name', () => {
    expect(() => expandTemplate(compileTemplate('{x}.jpg'), () => undefined)).toThrow('unknown placeholder {x}');
  });
});
