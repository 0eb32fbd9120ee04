// Foreign text on the way to a terminal, in-process: webhook error payloads
// (generate-async --listen), list records, server error messages and ids,
// generated with escape sequences (CSI, OSC title, C1 CSI), bidi overrides,
// line breaks and lone surrogates. Human output carries none of them; --json
// output is valid JSON with the values exactly as sent. Batch's rows and cells
// (which write beside the working directory): test/hostile/terminal.test.ts.
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptAndCallBack, answerJson, listingOf } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';
import { ACTIVE, hostileText } from '../../helpers/hostile-text.js';

const KEY = 'sk_test_hostile_terminal_61fa2c';

const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-terminal-' });
const { cli } = fixture;

describe('webhook error payloads', () => {
  it('generate-async --listen: human output clean, --json carries errorCode and errorMessage exactly (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (errorCode, errorMessage) => {
        const args = ['generate-async', '--lat', '1', '--lng', '2', '--listen', '--timeout', '20s', '-o', join(fixture.home.path, 'never.jpg')];
        acceptAndCallBack(fixture.server, () => ({ errorCode, errorMessage }));
        const human = await cli(args);
        expect(human.exitCode).toBe(6);
        expect(human.stderr).not.toMatch(ACTIVE);
        expect(human.stderr.trim().split('\n').at(-1)).toMatch(/^error: .* \(request req-1\)$/);

        acceptAndCallBack(fixture.server, () => ({ errorCode, errorMessage }));
        const json = await cli([...args, '--json']);
        expect(json.exitCode).toBe(6);
        const line = json.stderr.trim().split('\n').at(-1)!;
        expect(line).not.toMatch(ACTIVE);
        // JSON.parse turns a lone surrogate escape back into one; JSON.stringify writes it as \ud800.
        expect(JSON.parse(line)).toMatchObject({ error: errorCode, message: `${errorMessage} (request req-1)`, exitCode: 6 });
      }),
      { numRuns: 8, seed: 14 },
    );
  }, 120_000);
});

describe('list records and server messages', () => {
  it('a table of records whose fields carry escape codes and overrides prints none of them; --json keeps them exactly', async () => {
    const records = fc.sample(
      fc.record({ id: fc.constantFrom('img\u202e1', 'img\u20662', 'plain'), resolution: hostileText, createdAt: hostileText }),
      { numRuns: 12, seed: 14 },
    ).map((r, i) => ({ ...r, id: `${r.id}-${i}`, url: `https://cdn.example/${i}.jpg`, coordinates: { latitude: 1, longitude: 2 } }));
    fixture.server.respond(answerJson(200, { content: records, totalElements: records.length, totalPages: 1, page: 0, size: 50 }));
    const table = await cli(['list']);
    expect(table.exitCode).toBe(0);
    // Tabs may separate columns of plain output; nothing else may act on the terminal.
    expect(table.stdout).not.toMatch(ACTIVE);
    expect(table.stderr).not.toMatch(ACTIVE);

    const json = await cli(['list', '--json']);
    expect(json.exitCode).toBe(0);
    expect(json.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(json.stdout).content).toEqual(records);
  });

  it('an error message made of escape sequences is one clean line, human and --json (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (code, message) => {
        fixture.server.respond(answerJson(400, { status: 400, error: code, message }));
        for (const json of [false, true]) {
          const result = await cli(['list', ...(json ? ['--json'] : [])]);
          expect(result.exitCode).toBe(2);
          const lines = result.stderr.split('\n').filter(Boolean);
          expect(lines).toHaveLength(1);
          expect(lines[0]).not.toMatch(ACTIVE);
          if (json) expect(() => JSON.parse(lines[0]!)).not.toThrow();
        }
      }),
      { numRuns: 10, seed: 14 },
    );
  }, 60_000);
});

describe('ids', () => {
  it('delete prints ids with direction overrides as plain text', async () => {
    fixture.server.respond(listingOf(['img\u202eexe.txt', 'img\u2066x'], answerJson(200, {})));
    const result = await cli(['delete', 'img\u202eexe.txt', 'img\u2066x', '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/Deleted img exe\.txt/);
    expect(result.stderr).not.toMatch(ACTIVE);
  });
});
