// In-process: every usage error of the argument parser (commander) keeps the
// error contract: exit 2, nothing on stdout, one line on stderr naming the
// command's help, and with --json exactly one JSON line
// {"status":null,"error":"UsageError","message":…,"exitCode":2}. As the
// shell sees it: test/e2e/core.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/cli.js';
import { runCommand } from '../../helpers/terminal.js';

const home = tempDir('aerial-usage-errors-');
afterAll(() => home.remove());

const PARSER_ERRORS: Array<[what: string, args: string[], message: string]> = [
  ['an unknown option, with the nearest one', ['list', '--sizee', '3'], "unknown option '--sizee' (did you mean --size?); see 'aerial list --help'"],
  ['an unknown option, nothing near it', ['generate', '--qqq'], "unknown option '--qqq'; see 'aerial generate --help'"],
  ['an unknown command', ['lst'], "unknown command 'lst' (did you mean one of list, ls?); see 'aerial --help'"],
  ['an unknown subcommand', ['config', 'sett', 'x'], "unknown command 'sett' (did you mean set?); see 'aerial config --help'"],
  ['a missing argument', ['delete'], "missing required argument 'id'; see 'aerial delete --help'"],
  ['an option without its value', ['list', '--size'], "option '--size <n>' argument missing; see 'aerial list --help'"],
  ['a global option without its value', ['--profile'], "option '--profile <name>' argument missing; see 'aerial --help'"],
  [
    'a value not among the choices',
    ['completion', 'tcsh'],
    "command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish; see 'aerial completion --help'",
  ],
  ['excess arguments', ['config', 'get', 'defaults.zoom', 'extra'], "too many arguments for 'get'. Expected 1 argument but got 2; see 'aerial config get --help'"],
];

function aerial(args: string[]) {
  return runCommand(args, { configDir: home.path });
}

describe('usage errors of the argument parser', () => {
  for (const [what, args, message] of PARSER_ERRORS) {
    it(`${what}: one line, exit 2; with --json, one JSON line`, async () => {
      const human = await aerial(args);
      expect(human).toEqual({ exitCode: 2, stdout: '', stderr: `error: ${message}\n` });
      // After an option that takes a value, --json would be that value: it goes first there.
      const valueMissing = /argument missing/.test(message);
      for (const withJson of valueMissing ? [['--json', ...args]] : [['--json', ...args], [...args, '--json']]) {
        const scripted = await aerial(withJson);
        expect(scripted.exitCode, withJson.join(' ')).toBe(2);
        expect(scripted.stdout).toBe('');
        expect(scripted.stderr.split('\n')).toHaveLength(2); // one line, ended
        expect(JSON.parse(scripted.stderr)).toEqual({ status: null, error: 'UsageError', message, exitCode: 2 });
      }
    });
  }

  it('the CLI’s own usage errors keep the same form (help for an unknown command)', async () => {
    const scripted = await aerial(['--json', 'help', 'confg']);
    expect(scripted.exitCode).toBe(2);
    expect(scripted.stderr.split('\n')).toHaveLength(2);
    expect(JSON.parse(scripted.stderr)).toMatchObject({ status: null, error: 'UsageError', message: expect.stringMatching(/^unknown command 'confg' \(did you mean config\?\)/) });
  });
});
