// `aerial mcp` as an assistant's client runs it: bin/aerial.js started by the
// official SDK's StdioClientTransport and driven by its Client over stdin and
// stdout. Sessions opened here are closed after the test file.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll } from 'vitest';
import { BIN, cliEnv } from './cli.js';

export interface McpSession {
  client: Client;
  stderr: () => string;
  /** Calls a tool and gives its result (a tool error included). */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

const open: McpSession[] = [];
afterAll(async () => {
  while (open.length) await open.pop()!.close();
});

/** `aerial <args>` in `cwd`, with a config directory and environment of the test's own, connected (initialize done). */
export async function connectMcp(args: string[], options: { configDir: string; cwd: string; env?: Record<string, string> }): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: cliEnv(options.configDir, options.env ?? {}) as Record<string, string>,
    cwd: options.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'aerial-test', version: '1.0.0' });
  await client.connect(transport);
  const session: McpSession = {
    client,
    stderr: () => stderr,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
  open.push(session);
  return session;
}

/** The texts of a tool result, one after another. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((item) => item.type === 'text')
    .map((item) => (item as { text: string }).text)
    .join('\n');
}
