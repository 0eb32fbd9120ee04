// Exit 1 "unexpected" is for bugs only, in-process: answers the spec does not
// describe each get their own line and documented code. Files that are not
// what they should be (found beside the working directory of a process of
// their own): test/hostile/unexpected.test.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, tempDir } from '../../helpers/cli.js';
import { answer, answerJson, startHostileServer, type HostileServer } from '../../helpers/hostile-server.js';
import { runCommand } from '../../helpers/terminal.js';

const KEY = 'sk_test_hostile_unexpected_94b1e2';
registerSecret(KEY);

let server: HostileServer;
let home: ReturnType<typeof tempDir>;
let work: string;

beforeAll(async () => {
  server = await startHostileServer();
  home = tempDir('aerial-unexpected-');
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => {
  server.reset();
  work = join(home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

function expectNamed(result: { exitCode: number; stderr: string }, code: number, message: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(code);
  expect(result.stderr).not.toMatch(/^error: unexpected:/m);
  const lines = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(message);
}

function aerial(args: string[]) {
  return runCommand(args, { configDir: home.path, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url } });
}

describe('answers the spec does not describe', () => {

  for (const [status, exit] of [
    [405, 2],
    [409, 2],
    [410, 5],
    [413, 2],
    [418, 2],
    [431, 2],
    [451, 2],
    [501, 6],
    [505, 6],
    [599, 6],
  ] as const) {
    it(`HTTP ${status}: exit ${exit} for list, generate and delete, with the status named`, async () => {
      server.respond(answer(status, `status ${status} from a hostile server`, 'text/plain'));
      for (const args of [['list'], ['generate', '--lat', '1', '--lng', '2', '-o', join(work, 'x.jpg')], ['delete', 'img_1', '--yes']]) {
        expectNamed(await aerial(args), exit, new RegExp(`status ${status} from a hostile server$`));
      }
    });
  }

  it('a 204 where a page of images belongs: exit 6', async () => {
    server.respond(answer(204));
    expectNamed(await aerial(['list']), 6, /UnexpectedResponse — server sent an unreadable page of images/);
  });

  it('a 200 with an empty JSON body to an async request: exit 6', async () => {
    server.respond(answerJson(202, {}));
    expectNamed(await aerial(['generate-async', '--lat', '1', '--lng', '2', '--callback-url', 'https://hooks.example/x']), 6, /UnexpectedResponse/);
  });
});
