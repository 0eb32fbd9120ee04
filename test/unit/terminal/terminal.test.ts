// Terminal.outJsonStream: a JSON document written in parts, its array's
// elements as they come and members after the array known only at the end,
// is byte for byte the document outJson would write whole, on a terminal
// (indented) and piped (compact), whatever the values (generated).
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Terminal } from '../../../src/terminal/terminal.js';

function terminal(isTTY: boolean): { terminal: Terminal; written: () => string } {
  const chunks: string[] = [];
  const stdout = Object.assign(new Writable({ highWaterMark: 1024, write: (chunk, _encoding, done) => (chunks.push(String(chunk)), setImmediate(done)) }), { isTTY });
  const stderr = new Writable({ write: (_chunk, _encoding, done) => done() });
  return { terminal: new Terminal({ stdout, stderr, stdin: process.stdin, env: {}, json: true }), written: () => chunks.join('') };
}

// Names, as the documents' members are: an index-like key ("0") would be put first by any object.
const member = fc.string({ minLength: 1, maxLength: 6 }).filter((key) => !['__proto__', 'items'].includes(key) && !/^\d+$/.test(key));
const members = fc.dictionary(member, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

describe('Terminal.outJsonStream', () => {
  it('writes exactly what outJson writes for {...head, [key]: items, ...tail()}, on a terminal and piped (property)', async () => {
    await fc.assert(
      fc.asyncProperty(members, fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 30 }), members, fc.boolean(), async (head, items, tailMembers, isTTY) => {
        // The tail's members are distinct from the head's: a member cannot come both before and after the array.
        const tail = Object.fromEntries(Object.entries(tailMembers).filter(([key]) => !(key in head)));
        const streamed = terminal(isTTY);
        await streamed.terminal.outJsonStream(head, 'items', items.map((item) => JSON.stringify(item)), () => tail);
        const whole = terminal(isTTY);
        whole.terminal.outJson({ ...head, items, ...tail });
        await new Promise((resolve) => setImmediate(resolve));
        expect(streamed.written()).toBe(whole.written());
      }),
      { numRuns: 300 },
    );
  });
});
