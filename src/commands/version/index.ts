// `aerial version`: what `aerial --version` prints, as a command too (gh and
// docker take both); with --json, `{"aerial": …, "node": …}`. bin/aerial.js
// answers `--version` itself, without loading the bundle, in the same words.
import type { Command } from 'commander';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { VERSION } from '../../build-outputs/version.js';

export const registration: CommandRegistration = { name: 'version', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('print the version of aerial and Node.js (as --version)')
    .addHelpText(
      'after',
      `
Examples:
  $ aerial version
  $ aerial version --json | jq -r .aerial`,
    )
    .action(action(runVersion));
}

/** The versions as `--version --json` gives them. */
export function versions(): { aerial: string; node: string } {
  return { aerial: VERSION, node: process.version };
}

async function runVersion(ctx: Context): Promise<void> {
  if (ctx.io.json) ctx.io.outJson(versions());
  else ctx.io.out(`aerial ${VERSION} (node ${process.version})`);
}
