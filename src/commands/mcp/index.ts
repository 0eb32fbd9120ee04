// `aerial mcp`: serves aerial's tools (generate, list, delete) to AI
// assistants over the Model Context Protocol, on stdin and stdout. The SDK
// and the server load only when the command runs (server.ts).
import type { Command } from 'commander';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import type { McpOptions } from './server.js';

export const registration: CommandRegistration = { name: 'mcp', register };

function register(command: Command, action: ActionFactory): void {
  command
    .helpGroup('Setup:')
    .description('serve generate, list and delete to AI assistants over MCP (the Model Context Protocol) on stdio')
    .option('--output-dir <dir>', 'the one directory generate_image saves images in, under names relative to it (default: the current directory)')
    .option('--allow-overwrite', 'let generate_image replace a file in --output-dir when a call asks to (force); without it, none is ever replaced')
    .option('--read-only', 'serve only the tools that neither spend credits nor delete (list_images), and the images as resources')
    .option('--tools <names>', 'serve only these tools, separated by commas: generate_image, list_images, delete_image')
    .option('--max-images <n>', 'generate at most n images in this run: a call past them is a tool error, and nothing is sent')
    .addHelpText(
      'after',
      `
An assistant's MCP client starts this command and speaks to it on stdin and stdout:
stdout carries the protocol alone, and notices and errors go to stderr. It offers
three tools: generate_image (spends credits; saves the JPEG as generate does and
shows it to the assistant), list_images and delete_image, and the history's images
as resources (aerial://images/{id}). --read-only, --tools and --max-images narrow
what a model can spend or delete. Tool arguments come from a model and are not
trusted: generate_image writes only inside --output-dir (no absolute path, no '..',
no link leading out), and replaces a file there only with --allow-overwrite. Text
from the service reaches the model escaped. The global options
apply (--profile, --base-url, --sandbox, -v). It ends when the client closes
stdin (exit 0) or on SIGINT, SIGTERM or SIGHUP (exit 130). Setup for Claude
Desktop, Claude Code, VS Code and Cursor: docs/commands/mcp.md.

Examples:
  $ echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | aerial mcp --sandbox | jq -r '.result.tools[].name'
  $ echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | aerial mcp --sandbox --read-only | jq -r '.result.tools[].name'
  $ printf '%s%s%s\\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call",' \\
      '"params":{"name":"list_images",' '"arguments":{"size":3}}}' \\
      | aerial --profile work mcp | jq -r '.result.structuredContent.content[].id'`,
    )
    .action(action<McpOptions>(runMcp));
}

async function runMcp(ctx: Context, options: McpOptions): Promise<void> {
  const { runMcp: serve } = await import('./server.js');
  await serve(ctx, options);
}
