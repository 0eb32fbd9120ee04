// Exit 1 "unexpected" is for bugs only, in-process: answers the spec does not
// describe each get their own line and documented code. Files that are not
// what they should be (found beside the working directory of a process of
// their own): test/hostile/unexpected.test.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, answerJson } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';

const KEY = 'sk_test_hostile_unexpected_94b1e2';

const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-unexpected-' });
const { cli } = fixture;
let work: string;
beforeEach(() => {
  work = join(fixture.home.path, `w${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(work);
});

function expectNamed(result: { exitCode: number; stderr: string }, code: number, message: RegExp): void {
  expect(result.exitCode, result.stderr).toBe(code);
  expect(result.stderr).not.toMatch(/^error: unexpected:/m);
  const lines = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(message);
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
      fixture.server.respond(answer(status, `status ${status} from a hostile server`, 'text/plain'));
      for (const args of [['list'], ['generate', '--lat', '1', '--lng', '2', '-o', join(work, 'x.jpg')], ['delete', 'img_1', '--yes']]) {
        expectNamed(await cli(args), exit, new RegExp(`status ${status} from a hostile server$`));
      }
    });
  }

  it('a 204 where a page of images belongs: exit 6', async () => {
    fixture.server.respond(answer(204));
    expectNamed(await cli(['list']), 6, /UnexpectedResponse — server sent an unreadable page of images/);
  });

  it('a 200 with an empty JSON body to an async request: exit 6', async () => {
    fixture.server.respond(answerJson(202, {}));
    expectNamed(await cli(['generate-async', '--lat', '1', '--lng', '2', '--callback-url', 'https://hooks.example/x']), 6, /UnexpectedResponse/);
  });
});
