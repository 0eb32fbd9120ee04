// surveyText: the check that a batch file is UTF-8, and its count of line
// ends, across the chunks it reads (a character or a CRLF cut between two).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { surveyText } from '../../../src/batch/input-text.js';

const dir = mkdtempSync(join(tmpdir(), 'aerial-input-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function survey(content: Buffer | string) {
  const path = join(dir, `${files++}.csv`);
  writeFileSync(path, content);
  return () => surveyText(path, 'p.csv');
}

const CHUNK = 64 * 1024;

describe('surveyText', () => {
  it('takes characters and CRLFs cut between chunks, wherever the cut falls', () => {
    for (let shift = 0; shift < 4; shift++) {
      // Multi-byte characters across the first chunk boundary, at every offset of a 4-byte one.
      const text = `${'a'.repeat(CHUNK - 2 - shift)}🙂日本\r\nx\ry\n`;
      expect(survey(text)()).toMatchObject({ lineEnds: 3, blank: false });
    }
    // A CRLF whose CR ends the first chunk: one line end, not two.
    expect(survey(`${'a'.repeat(CHUNK - 1)}\r\nb`)().lineEnds).toBe(1);
    expect(survey(`${'a'.repeat(CHUNK - 1)}\rb\r`)().lineEnds).toBe(2);
  });

  it('names the line of a byte that is not UTF-8, past the first chunk too', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `row ${i},日本`);
    const bad = Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
    const at = Buffer.byteLength(`${lines.slice(0, 4000).join('\r\n')}\r\n`);
    expect(at).toBeGreaterThan(CHUNK);
    bad[at] = 0xe9;
    expect(survey(bad)).toThrow(/^p\.csv line 4001: not UTF-8/);
    expect(survey(Buffer.concat([Buffer.from('a\rb\n'), Buffer.from([0xc3, 0x28])]))).toThrow(/^p\.csv line 3: not UTF-8/);
  });

  it('counts the braces a JSON array holds, and knows a blank file', () => {
    expect(survey('[{"a":{"b":1}},\n{}]')().braces).toBe(3);
    expect(survey('\uFEFF \r\n\t\n')().blank).toBe(true);
  });
});
