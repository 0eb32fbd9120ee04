// Foreign text on the way to a terminal, in-process: webhook error payloads
// (generate-async --listen), list records, server error messages and ids,
// generated with escape sequences (CSI, OSC title, C1 CSI), bidi overrides,
// line breaks and lone surrogates. Human output carries none of them; --json
// output is valid JSON with the values exactly as sent. Batch's rows and cells
// (which write beside the working directory): test/hostile/terminal.test.ts.
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { acceptAndCallBack, answerJson, listingOf, startHostileServer, type HostileServer } from '../../helpers/hostile-server.js';
import { runCommand } from '../../helpers/terminal.js';
import { ACTIVE, hostileText } from '../../helpers/hostile-text.js';

const KEY = 'sk_test_hostile_terminal_61fa2c';
registerSecret(KEY);

let server: HostileServer;
let home: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  home = tempDir('aerial-terminal-');
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => server.reset());

function aerial(args: string[]) {
  return runCommand(args, { configDir: home.path, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url } });
}


describe('webhook error payloads', () => {
  it('generate-async --listen: human output clean, --json carries errorCode and errorMessage exactly (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (errorCode, errorMessage) => {
        const args = ['generate-async', '--lat', '1', '--lng', '2', '--listen', '--timeout', '20s', '-o', join(home.path, 'never.jpg')];
        acceptAndCallBack(server, () => ({ errorCode, errorMessage }));
        const human = await aerial(args);
        expect(human.exitCode).toBe(6);
        expect(human.stderr).not.toMatch(ACTIVE);
        expect(human.stderr.trim().split('\n').at(-1)).toMatch(/^error: .* \(request req-1\)$/);

        acceptAndCallBack(server, () => ({ errorCode, errorMessage }));
        const json = await aerial([...args, '--json']);
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
    server.respond(answerJson(200, { content: records, totalElements: records.length, totalPages: 1, page: 0, size: 50 }));
    const table = await aerial(['list']);
    expect(table.exitCode).toBe(0);
    // Tabs may separate columns of plain output; nothing else may act on the terminal.
    expect(table.stdout).not.toMatch(ACTIVE);
    expect(table.stderr).not.toMatch(ACTIVE);

    const json = await aerial(['list', '--json']);
    expect(json.exitCode).toBe(0);
    expect(json.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(json.stdout).content).toEqual(records);
  });

  it('an error message made of escape sequences is one clean line, human and --json (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (code, message) => {
        server.respond(answerJson(400, { status: 400, error: code, message }));
        for (const json of [false, true]) {
          const result = await aerial(['list', ...(json ? ['--json'] : [])]);
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
    server.respond(listingOf(['img\u202eexe.txt', 'img\u2066x'], answerJson(200, {})));
    const result = await aerial(['delete', 'img\u202eexe.txt', 'img\u2066x', '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/Deleted img exe\.txt/);
    expect(result.stderr).not.toMatch(ACTIVE);
  });
});
