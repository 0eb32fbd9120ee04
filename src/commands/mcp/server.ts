// The body of `aerial mcp`: an MCP server on stdin and stdout, built on the
// official SDK, with the tools of tools.ts. Loaded only when the command runs,
// with the SDK. stdout carries the protocol and nothing else; what the server
// has to say to a person goes to stderr.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from '../../cli/context.js';
import { VERSION } from '../../bundle/version.js';
import { UsageError } from '../../process/errors.js';
import { StdioSession } from './transport.js';
import {
  deleteImage,
  deleteImageArguments,
  DELETE_IMAGE,
  generateImage,
  generateImageArguments,
  GENERATE_IMAGE,
  listImages,
  listImagesArguments,
  LIST_IMAGES,
  safeResult,
  toolError,
  toolRemedies,
  type ToolScope,
} from './tools.js';

export interface McpOptions {
  outputDir?: string;
  /** --allow-overwrite: generate_image may replace a file in the output directory when a call asks (force). */
  allowOverwrite?: boolean;
}

const INSTRUCTIONS = `Tools for the GenAerial Aerial Image Generation API: generate_image makes an AI aerial image of a place (latitude and longitude) and saves it as a JPEG, which spends the account's credits at the service's price for its resolution; list_images shows the history; delete_image removes an image for good.`;

type Handler = (scope: ToolScope, args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>;

export async function runMcp(ctx: Context, options: McpOptions): Promise<void> {
  const outputDir = resolve(options.outputDir ?? '.');
  checkOutputDir(outputDir, options.outputDir);
  // Settings, the key and (with --sandbox) the sandbox itself are checked before the first message: a
  // server that cannot work says so at once, on stderr, with the CLI's exit code.
  await ctx.client();
  const scope: ToolScope = { ctx, outputDir, allowOverwrite: Boolean(options.allowOverwrite) };
  const remedies = toolRemedies(scope.allowOverwrite);

  const server = new McpServer({ name: 'aerial', version: VERSION }, { instructions: INSTRUCTIONS });
  const run = (name: string, handler: Handler) => async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
    // Ended by the client's cancellation of the call, or by a signal that stops the server.
    const signal = AbortSignal.any([ctx.signal, extra.signal]);
    let result: CallToolResult;
    try {
      result = await handler(scope, args, signal);
    } catch (error) {
      result = toolError(error, ctx.io.redact, remedies);
      ctx.io.debug(`${name} failed: ${result.content[0]?.type === 'text' ? result.content[0].text : ''}`);
    }
    return safeResult(result, ctx.io.redact);
  };
  server.registerTool(
    GENERATE_IMAGE,
    {
      title: 'Generate an aerial image',
      description:
        'Generates an AI aerial image of a place (lat and lng, or at "LAT,LNG") with the scene settings given, saves it as a JPEG (with GPS EXIF and an AI-generated note) in the server\'s output directory and shows it. Each call spends credits of the account, at the service\'s price for the resolution (the bundled sandbox charges HD 1, FHD 2, UHD 4, of free credits). Returns the picture (scaled down to at most 1024 pixels a side), the saved file\'s path and the image\'s id.',
      inputSchema: generateImageArguments(),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    run(GENERATE_IMAGE, generateImage),
  );
  server.registerTool(
    LIST_IMAGES,
    {
      title: 'List generated images',
      description: 'Lists the images in the account\'s history, newest first unless sort says otherwise, one page at a time: id, coordinates, resolution, creation time and a temporary download URL of each. Spends no credits.',
      inputSchema: listImagesArguments(),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    run(LIST_IMAGES, listImages),
  );
  server.registerTool(
    DELETE_IMAGE,
    {
      title: 'Delete an image',
      description: 'Deletes an image from the account\'s history permanently, by its id (or the first characters of it, at least 4, when they start one id only). The saved JPEG file is left alone. Spends no credits; cannot be undone.',
      inputSchema: deleteImageArguments(),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    run(DELETE_IMAGE, deleteImage),
  );

  const stdin = ctx.io.stdin;
  const transport = new StdioSession(stdin, ctx.io.stdout);
  transport.onerror = (error) => ctx.io.warn(`mcp: ${error.message}`);
  // Listened for before the first message is read, so that a short input cannot end unseen.
  const inputEnded = new Promise<void>((ended) => {
    stdin.once('end', ended);
    stdin.once('error', ended);
  });
  await server.connect(transport);
  ctx.io.info(
    `aerial mcp: serving ${GENERATE_IMAGE}, ${LIST_IMAGES} and ${DELETE_IMAGE} on stdio${ctx.globals.sandbox ? ' (sandbox)' : ''}; images are saved in ${outputDir} and nowhere else${scope.allowOverwrite ? '; a call may replace a file there (--allow-overwrite)' : ''}`,
  );
  // Run by hand, it would wait in silence for JSON-RPC.
  if (ctx.io.stdinIsTTY) ctx.io.info('stdin is a terminal: an assistant\'s MCP client starts this command and talks to it (see docs/commands/mcp.md); Ctrl-C stops it');

  // The session ends when the client closes stdin (what it asked is answered first), or on a signal (at once).
  await Promise.race([inputEnded.then(() => transport.idle()), aborted(ctx.signal)]);
  await server.close();
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** --output-dir, when it exists, must be a directory (one that does not is made when the first image is saved). */
function checkOutputDir(dir: string, given: string | undefined): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    return;
  }
  if (!isDirectory) throw new UsageError(`--output-dir ${given ?? dir} is not a directory`);
}
