// printable() and terminalSafeJson() over generated text: any Unicode, escape
// sequences of every kind, lone surrogates. The one leaves a single line with
// nothing a terminal acts on; the other is the same JSON value, byte-clean.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printable, terminalSafeJson } from '../../src/text/printable.js';

const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;
const SEQUENCES = ['\u001b[2J', '\u001b]0;title\u0007', '\u001b]8;;x\u001b\\', '\u001bP1;2|x\u001b\\', '\u009b1m', '\u001bc', '\r\n', '\u2028', '\u202e', '\ud800', '\udc00', '😀', 'text'];
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.array(fc.constantFrom(...SEQUENCES), { maxLength: 12 }).map((parts) => parts.join('')),
);

describe('printable', () => {
  it('leaves one line, nothing a terminal acts on, within its length (property)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 80 }), (input, max) => {
        const out = printable(input, max);
        expect(out).not.toMatch(ACTIVE);
        expect([...out].length).toBeLessThanOrEqual(max);
      }),
      { numRuns: 5000 },
    );
  });

  it('drops whole escape sequences, so their parameters do not show as text', () => {
    expect(printable('a\u001b]0;pwned\u0007b')).toBe('ab');
    expect(printable('\u001b[31mred\u001b[0m')).toBe('red');
    expect(printable('x\u001b]8;;https://evil\u001b\\link\u001b]8;;\u001b\\')).toBe('xlink');
    expect(printable('line\r\nerror: forged')).toBe('line error: forged');
    expect(printable('abc\u202eexe.txt')).toBe('abc exe.txt');
    expect(printable(`${'x'.repeat(9)}😀😀`, 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('terminalSafeJson', () => {
  it('is the same JSON value, with nothing a terminal acts on in its text (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), text, (value, extra) => {
        const document = { value, extra, [extra]: extra };
        const out = terminalSafeJson(document);
        expect(out).not.toMatch(ACTIVE);
        expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(document)));
      }),
      { numRuns: 3000 },
    );
  });
});
