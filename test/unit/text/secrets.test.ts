// Redaction of secrets in every form a service could give them back: the
// encodings are made here with Node's own encoders, around generated keys and
// generated text on either side.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor, redactValue, secretForms } from '../../../src/text/secrets.js';

/** Keys as an HTTP header can carry them: visible ASCII, no spaces. */
const keyArb = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 8, maxLength: 64 });
const textArb = fc.string({ maxLength: 20 });

const base64 = (text: string) => Buffer.from(text).toString('base64');
const encodings: Record<string, (key: string, before: string, after: string) => string> = {
  clear: (key, before, after) => `${before}${key}${after}`,
  'URL-encoded': (key, before, after) => `${before}${encodeURIComponent(key)}${after}`,
  'every byte percent-encoded, lower case': (key, before, after) => `${before}${[...Buffer.from(key)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}${after}`,
  'in a JSON string': (key, before, after) => JSON.stringify(`${before}${key}${after}`),
  'in HTML text': (key, before, after) => `${before}${key}${after}`.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
  hex: (key, before, after) => `${before}${Buffer.from(key).toString('hex').toUpperCase()}${after}`,
  'base64 of text around it': (key, before, after) => base64(`${before}${key}${after}`),
  'base64url of text around it': (key, before, after) => Buffer.from(`${before}${key}${after}`).toString('base64url'),
  'base64 of Bearer <key>, URL-encoded': (key) => encodeURIComponent(base64(`Bearer ${key}`)),
  'basic auth user:<key>': (key, before) => `Basic ${base64(`${before}:${key}`)}`,
};


describe('redaction', () => {
  for (const [how, encode] of Object.entries(encodings)) {
    it(`finds the key ${how}, whatever text stands around it`, () => {
      fc.assert(
        fc.property(keyArb, textArb, textArb, (key, before, after) => {
          const redactor = new Redactor();
          redactor.add(key);
          const encoded = encode(key, before, after);
          const redacted = redactor.redact(encoded);
          expect(redacted).toContain('***');
          expect(redacted.includes(key)).toBe(false);
          // Nothing of the encoded key survives but what depends on the text around it too (base64's edge characters).
          for (const form of secretForms(key)) expect(redacted.includes(form)).toBe(false);
        }),
        { numRuns: 200 },
      );
    });
  }

  it('leaves text without the key as it is', () => {
    fc.assert(
      fc.property(keyArb, fc.string({ maxLength: 200 }), (key, text) => {
        fc.pre(!text.includes(key.slice(0, 8)));
        const redactor = new Redactor();
        redactor.add(key);
        expect(redactor.redact(text)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('only looks for a short secret as it is, and not at all under 4 characters', () => {
    const redactor = new Redactor();
    redactor.add('abc');
    redactor.add('s3cr3t');
    expect(redactor.redact('abc s3cr3t')).toBe('abc ***');
    expect(secretForms('s3cr3t')).toEqual(['s3cr3t']);
  });

  it('redacts every string of a value, keys too, and keeps the rest', () => {
    const redactor = new Redactor();
    redactor.add('sk_live_0123456789');
    const value = { id: 'x-sk_live_0123456789', n: 3, list: ['a', { deep: base64('Bearer sk_live_0123456789') }], sk_live_0123456789: true, at: null };
    expect(redactValue(value, (text) => redactor.redact(text))).toEqual({ id: 'x-***', n: 3, list: ['a', { deep: expect.stringContaining('***') }], '***': true, at: null });
  });

  it('hands back what holds no secret as it is, and copies only what changes, leaving the value given as it was', () => {
    const redactor = new Redactor();
    redactor.add('sk_live_0123456789');
    const redact = (text: string) => redactor.redact(text);
    const clean = { id: 'a', coordinates: { latitude: 1, longitude: 2 }, tags: ['x'] };
    expect(redactValue(clean, redact)).toBe(clean);
    const keyed = { id: 'b', note: 'key sk_live_0123456789', coordinates: { latitude: 3, longitude: 4 } };
    const records: object[] = [clean, keyed];
    const shown = redactValue(records, redact);
    expect(shown).not.toBe(records);
    expect(shown[0]).toBe(clean);
    expect(shown[1]).toEqual({ id: 'b', note: 'key ***', coordinates: { latitude: 3, longitude: 4 } });
    expect(keyed.note).toBe('key sk_live_0123456789');
    // A secret in a key alone is found too.
    expect(redactValue({ nested: { sk_live_0123456789: 1 } }, redact)).toEqual({ nested: { '***': 1 } });
  });
});
