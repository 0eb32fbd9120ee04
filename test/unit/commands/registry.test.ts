// A run builds only the command it runs: each command set up alone must be
// the command the whole program has, and only a first word that names a
// command which needs no other picks it.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, commandToRun } from '../../../src/main.js';
import { registrations } from '../../../src/commands/index.js';

/** A command's help, and its subcommands', as text: everything commander knows of it. */
function described(command: Command): string {
  return [command.helpInformation(), ...command.commands.map(described)].join('\n');
}

describe('commands set up alone', () => {
  const whole = buildProgram();

  it('are, one by one, the commands of the whole program, in name, aliases, options, arguments and subcommands', () => {
    expect(whole.commands.map((command) => command.name()).filter((name) => name !== 'help')).toEqual(registrations.map((r) => r.name));
    for (const registration of registrations) {
      const alone = buildProgram(undefined, {}, registration);
      expect(alone.commands.map((command) => command.name())).toEqual([registration.name, 'help']);
      const mine = alone.commands[0]!;
      const theirs = whole.commands.find((command) => command.name() === registration.name)!;
      expect(mine.aliases(), registration.name).toEqual(theirs.aliases());
      expect(described(mine), registration.name).toBe(described(theirs));
    }
  });

  it('is the command a command line names first, by name or alias, unless it needs the others', () => {
    const argv = (...words: string[]) => ['node', 'aerial', ...words];
    expect(commandToRun(argv('list', '--json'))?.name).toBe('list');
    expect(commandToRun(argv('ls'))?.name).toBe('list');
    expect(commandToRun(argv('rm', 'abc'))?.name).toBe('delete');
    expect(commandToRun(argv('batch', 'status', 'rows.csv'))?.name).toBe('batch');
    // Options first, an unknown word (for its suggestion), help, and completion (which describes every command).
    for (const words of [['--json', 'list'], ['lst'], ['help', 'list'], ['completion', 'bash'], []]) {
      expect(commandToRun(argv(...words)), words.join(' ')).toBeUndefined();
    }
  });
});
