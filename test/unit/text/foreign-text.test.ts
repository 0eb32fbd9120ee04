// Text from outside as a type that makes itself harmless wherever it is
// rendered (src/text/foreign-text.ts).
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { foreign, ForeignText, harmlessString, harmlessValue } from '../../../src/text/foreign-text.js';
import { terminalSafeJson } from '../../../src/text/printable.js';

const HOSTILE = 'img-1\u2028Image id: img-2\u202e gpj.exe\u001b[2J\u009b31m';

describe('ForeignText', () => {
  it('renders as one printable line in a template, and keeps the exact text for programs', () => {
    const id = foreign(HOSTILE);
    expect(`Image id: ${id}`).toBe('Image id: img-1 Image id: img-2 gpj.exe 31m');
    expect(String(id)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(id.raw).toBe(HOSTILE);
    expect(id.shown(8)).toBe('img-1 I…');
    expect(foreign(undefined)).toBeUndefined();
  });

  it('is its exact value in JSON, which terminalSafeJson writes with escapes', () => {
    const json = terminalSafeJson({ id: foreign(HOSTILE) });
    expect(JSON.parse(json)).toEqual({ id: HOSTILE });
    expect(json).toContain('\\u2028');
    expect(json).toContain('\\u202e');
    expect(json).not.toMatch(/[\u2028\u202e\u009b]/);
  });

  it('shows itself printable to console.log', () => {
    expect(inspect(new ForeignText(HOSTILE))).toBe('ForeignText("img-1 Image id: img-2 gpj.exe 31m")');
  });
});

describe('harmlessValue', () => {
  it('writes every harmful character of every string, keys included, as a visible escape', () => {
    const value = harmlessValue({ [`k\u2028`]: [HOSTILE, 3, null, true, { nested: 'a\u0085b\ud800' }], id: foreign('x\u2066y') });
    expect(value).toEqual({
      'k\\u2028': ['img-1\\u2028Image id: img-2\\u202e gpj.exe\\u001b[2J\\u009b31m', 3, null, true, { nested: 'a\\u0085b\\ud800' }],
      id: 'x\\u2066y',
    });
    expect(JSON.stringify(value)).not.toMatch(/[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });

  it('leaves harmless text as it is, surrogate pairs included', () => {
    expect(harmlessString('Ünïcødé 📷 Tōkyō, 東京')).toBe('Ünïcødé 📷 Tōkyō, 東京');
  });
});
