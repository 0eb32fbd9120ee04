// `aerial completion <shell>`: prints the completion script for bash, zsh or
// fish, generated from this very program so it always matches the CLI.
import { Argument, type Command } from 'commander';
import type { ActionFactory, CommandRegistration } from '../../cli/context.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

export const registration: CommandRegistration = { name: 'completion', needsWholeProgram: true, register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell to complete for').choices(SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ mkdir -p ~/.local/share/bash-completion/completions && aerial completion bash > ~/.local/share/bash-completion/completions/aerial
  $ echo 'source <(aerial completion bash)' >> ~/.bashrc
  $ mkdir -p ~/.zfunc && aerial completion zsh > ~/.zfunc/_aerial    # fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc
  $ mkdir -p ~/.config/fish/completions && aerial completion fish > ~/.config/fish/completions/aerial.fish`,
    )
    .action(
      action(async (ctx, _options, args) => {
        const { completionScript } = await import('./scripts.js');
        // The whole program, not this subcommand: completions cover every command.
        ctx.io.out(completionScript(command.parent!, args[0] as (typeof SHELLS)[number]));
      }),
    );
}
