// The timeout knobs of the environment (AERIAL_TIMEOUT_MS,
// AERIAL_MAX_RETRY_AFTER), in-process: checked before anything is sent, exit 2
// and one line naming the variable, for a lookup, a generation and --sandbox.
// The timeouts themselves, over real sockets: test/hostile/timeouts.test.ts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/lifecycle/errors.js';
import type { CliResult } from '../../helpers/cli.js';
import { answerJpeg } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';

const KEY = 'sk_test_hostile_timeouts_5c1f9a';
const fixture = useCommandsAgainstHostileServer(KEY);
const { cli } = fixture;

/** The one error line. */
function expectOneLine(result: CliResult, line: string): void {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  expect(result.stderr).toMatch(new RegExp(`^error: ${escaped}\n$`));
}

describe('the environment knobs are checked before anything is sent (exit 2, naming the variable)', () => {
  for (const [variable, value, message] of [
    ['AERIAL_TIMEOUT_MS', 'abc', "AERIAL_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647; got 'abc'"],
    ['AERIAL_TIMEOUT_MS', '0', "AERIAL_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647; got '0'"],
    ['AERIAL_TIMEOUT_MS', '1.5', "AERIAL_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647; got '1.5'"],
    ['AERIAL_TIMEOUT_MS', '30s', "AERIAL_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647; got '30s'"],
    ['AERIAL_MAX_RETRY_AFTER', '-1', "AERIAL_MAX_RETRY_AFTER must be a number of seconds from 0 to 2147483; got '-1'"],
    ['AERIAL_MAX_RETRY_AFTER', 'soon', "AERIAL_MAX_RETRY_AFTER must be a number of seconds from 0 to 2147483; got 'soon'"],
  ] as const) {
    it(`${variable}=${value}`, async () => {
      fixture.server.respond(answerJpeg);
      for (const args of [['list'], ['generate', '--lat', '1', '--lng', '2', '-o', join(fixture.home.path, 'x.jpg')], ['list', '--sandbox']]) {
        const result = await cli(args, { env: { [variable]: value } });
        expect(result.exitCode).toBe(ExitCode.Usage);
        expectOneLine(result, message);
      }
      expect(fixture.server.requests).toEqual([]);
    });
  }
});
