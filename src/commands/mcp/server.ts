// The body of `aerial mcp`: an MCP server on stdin and stdout, built on the
// official SDK, with the tools of tools.ts (those --read-only and --tools
// leave) and the history's images as resources (resources.ts). Loaded only
// when the command runs, with the SDK. stdout carries the protocol and nothing
// else; what the server has to say to a person goes to stderr.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from '../../cli/context.js';
import { VERSION } from '../../build-outputs/version.js';
import { parseWholeNumber } from '../../input/flags.js';
import { UsageError } from '../../lifecycle/errors.js';
import { harmlessString } from '../../text/foreign-text.js';
import { printable } from '../../text/printable.js';
import { nearest } from '../../text/suggest.js';
import { MIN_ID_PREFIX } from '../shared/image-lookup.js';
import { SeenImageUrls } from './image-urls.js';
import { serveHistoryImages } from './resources.js';
import { StdioSession } from './transport.js';
import {
  deleteImage,
  deleteImageArguments,
  deleteImageOutput,
  DELETE_IMAGE,
  generateImage,
  generateImageArguments,
  generateImageOutput,
  GENERATE_IMAGE,
  ImageAllowance,
  listImages,
  listImagesArguments,
  listImagesOutput,
  LIST_IMAGES,
  MAX_LISTED,
  NEWEST_LOOKED_AT,
  safeResult,
  toolError,
  toolRemedies,
  TOOL_EFFECTS,
  TOOL_NAMES,
  type Progress,
  type ToolCall,
  type ToolScope,
} from './tools.js';

export interface McpOptions {
  outputDir?: string;
  /** --allow-overwrite: generate_image may replace a file in the output directory when a call asks (force). */
  allowOverwrite?: boolean;
  /** --read-only: only the tools that neither spend credits nor delete. */
  readOnly?: boolean;
  /** --tools a,b: only these tools. */
  tools?: string;
  /** --max-images n: at most n generations in this run. */
  maxImages?: string;
}

/** What the assistant is told of the server, for the tools it serves. */
function instructionsFor(tools: readonly string[]): string {
  const parts = [
    ...(tools.includes(GENERATE_IMAGE) ? ["generate_image makes an AI aerial image of a place (latitude and longitude) and saves it as a JPEG, which spends the account's credits at the service's price for its resolution"] : []),
    ...(tools.includes(LIST_IMAGES) ? ['list_images shows the history, a page at a time'] : []),
    ...(tools.includes(DELETE_IMAGE) ? ['delete_image removes an image for good'] : []),
  ];
  return `${parts.length ? `Tools for the GenAerial Aerial Image Generation API: ${parts.join('; ')}. ` : ''}The history's images are resources (aerial://images/{id}), to look at an image made earlier.`;
}

type Handler = (scope: ToolScope, args: Record<string, unknown>, call: ToolCall) => Promise<CallToolResult>;

/** What the request handler of a tool call is given (the SDK's RequestHandlerExtra, the parts used). */
interface CallExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(notification: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total?: number; message?: string } }): Promise<void>;
}

export async function runMcp(ctx: Context, options: McpOptions): Promise<void> {
  const outputDir = resolve(options.outputDir ?? '.');
  checkOutputDir(outputDir, options.outputDir);
  const tools = chooseTools(options);
  const maxImages = parseWholeNumber(options.maxImages, '--max-images', 0);
  // Settings, the key and (with --sandbox) the sandbox itself are checked before the first message: a
  // server that cannot work says so at once, on stderr, with the CLI's exit code.
  await ctx.client();
  const scope: ToolScope = {
    ctx,
    outputDir,
    allowOverwrite: Boolean(options.allowOverwrite),
    allowance: maxImages === undefined ? undefined : new ImageAllowance(maxImages),
    seen: new SeenImageUrls(),
  };
  const remedies = toolRemedies(scope.allowOverwrite);

  const server = new McpServer({ name: 'aerial', version: VERSION }, { instructions: instructionsFor(tools) });
  const run = (name: string, handler: Handler) => async (args: Record<string, unknown>, extra: CallExtra) => {
    // Ended by the client's cancellation of the call, or by a signal that stops the server.
    const signal = AbortSignal.any([ctx.signal, extra.signal]);
    // Progress notifications, when the call asked for them (a progressToken); a notification that cannot go is let go.
    const token = extra._meta?.progressToken;
    const progress: Progress | undefined =
      token === undefined
        ? undefined
        : ({ progress: done, total, message }) =>
            void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done, total, message: harmlessString(ctx.io.redact(message)) } }).catch(() => {});
    let result: CallToolResult;
    try {
      result = await handler(scope, args, { signal, progress });
    } catch (error) {
      result = toolError(error, ctx.io.redact, remedies);
      ctx.io.debug(`${name} failed: ${result.content[0]?.type === 'text' ? result.content[0].text : ''}`);
    }
    return safeResult(result, ctx.io.redact);
  };
  if (tools.includes(GENERATE_IMAGE)) {
    const cap = maxImages === undefined ? '' : ` This server generates at most ${maxImages} image${maxImages === 1 ? '' : 's'} a run (its user's --max-images); a call past them is refused and sends nothing.`;
    server.registerTool(
      GENERATE_IMAGE,
      {
        title: 'Generate an aerial image',
        description: `Generates an AI aerial image of a place (lat and lng, or at "LAT,LNG") with the scene settings given, saves it as a JPEG (with GPS EXIF and an AI-generated note) in the server's output directory and shows it. Each call spends credits of the account, at the service's price for the resolution (the bundled sandbox charges HD 1, FHD 2, UHD 4, of free credits).${cap} Returns the picture (scaled down to at most 1024 pixels a side), the saved file's path and the image's id; with a progressToken, progress notifications while it works.`,
        inputSchema: generateImageArguments(),
        outputSchema: generateImageOutput(),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      run(GENERATE_IMAGE, generateImage),
    );
  }
  if (tools.includes(LIST_IMAGES)) {
    server.registerTool(
      LIST_IMAGES,
      {
        title: 'List generated images',
        description: `Lists the images in the account's history, one page at a time (at most ${MAX_LISTED} a call, with a nextCursor for the next page): id, coordinates, resolution, creation time and a temporary download URL of each; each can be looked at as the resource aerial://images/{id}. Spends no credits.`,
        inputSchema: listImagesArguments(),
        outputSchema: listImagesOutput(),
        annotations: { readOnlyHint: true, openWorldHint: true },
      },
      run(LIST_IMAGES, listImages),
    );
  }
  if (tools.includes(DELETE_IMAGE)) {
    server.registerTool(
      DELETE_IMAGE,
      {
        title: 'Delete an image',
        description: `Deletes an image from the account's history permanently, by its whole id; or by the first characters of it (at least ${MIN_ID_PREFIX}) when they start exactly one of the newest ${NEWEST_LOOKED_AT} images. The saved JPEG file is left alone. Spends no credits; cannot be undone.`,
        inputSchema: deleteImageArguments(),
        outputSchema: deleteImageOutput(),
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      },
      run(DELETE_IMAGE, deleteImage),
    );
  }
  serveHistoryImages(server.server, scope, remedies);

  const stdin = ctx.io.stdin;
  const transport = new StdioSession(stdin, ctx.io.stdout);
  transport.onerror = (error) => ctx.io.warn(`mcp: ${error.message}`);
  // Listened for before the first message is read, so that a short input cannot end unseen.
  const inputEnded = new Promise<void>((ended) => {
    stdin.once('end', ended);
    stdin.once('error', ended);
  });
  await server.connect(transport);
  const saving = tools.includes(GENERATE_IMAGE)
    ? `; images are saved in ${outputDir} and nowhere else${scope.allowOverwrite ? '; a call may replace a file there (--allow-overwrite)' : ''}${maxImages === undefined ? '' : `, at most ${maxImages} (--max-images)`}`
    : '';
  ctx.io.info(`aerial mcp: serving ${tools.length ? tools.join(', ') : 'no tool'} and the history's images as resources on stdio${ctx.globals.sandbox ? ' (sandbox)' : ''}${saving}`);
  // Run by hand, it would wait in silence for JSON-RPC.
  if (ctx.io.stdinIsTTY) ctx.io.info('stdin is a terminal: an assistant\'s MCP client starts this command and talks to it (see docs/commands/mcp.md); Ctrl-C stops it');

  // The session ends when the client closes stdin (what it asked is answered first), or on a signal (at once).
  await Promise.race([inputEnded.then(() => transport.idle()), aborted(ctx.signal)]);
  await server.close();
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/**
 * The tools to serve: every one, or those --tools names (in the usual order),
 * less those --read-only bars. Naming a tool that --read-only bars is a
 * contradiction, refused rather than quietly dropped.
 */
export function chooseTools(options: Pick<McpOptions, 'readOnly' | 'tools'>): string[] {
  let chosen: string[] = [...TOOL_NAMES];
  if (options.tools !== undefined) {
    const named = options.tools.split(',').map((name) => name.trim()).filter(Boolean);
    if (named.length === 0) throw new UsageError(`--tools takes tool names separated by commas (${TOOL_NAMES.join(', ')}); got '${printable(options.tools, 80)}'`);
    for (const name of named) {
      if ((TOOL_NAMES as readonly string[]).includes(name)) continue;
      const near = nearest(name, TOOL_NAMES);
      throw new UsageError(`--tools names no tool '${printable(name, 80)}'${near ? ` (did you mean ${near}?)` : ''}; the tools are ${TOOL_NAMES.join(', ')}`);
    }
    chosen = chosen.filter((name) => named.includes(name));
  }
  if (options.readOnly) {
    const barred = chosen.filter((name) => TOOL_EFFECTS[name]!.spends || TOOL_EFFECTS[name]!.deletes);
    if (options.tools !== undefined && barred.length > 0) {
      const name = barred[0]!;
      throw new UsageError(`--tools ${name} cannot be served with --read-only: ${name} ${TOOL_EFFECTS[name]!.spends ? 'spends credits' : 'deletes images'}`);
    }
    chosen = chosen.filter((name) => !barred.includes(name));
  }
  return chosen;
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
