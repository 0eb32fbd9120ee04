// The tools `aerial mcp` offers: generate_image, list_images and
// delete_image. Their input schemas are made from the scene vocabulary (one
// argument per field, its values and ranges), and each does what its command
// does, through the same code: the request is built and checked as
// `generate` builds it, the image is saved by the same operation
// (operations/save-image.ts), images are looked up as `delete` looks them up.
//
// The arguments come from a model that may have read hostile text, so they are
// untrusted: generate_image writes only inside the server's --output-dir (a
// plain relative name, no link leading out), and replaces a file only when the
// server was started with --allow-overwrite and the call asks for it. What a
// tool returns goes to a model: every text in it is redacted, foreign text in
// it (ids, fields, messages) is harmless (text/foreign-text.ts), and a failure
// is a tool error (isError) with the line the CLI would print.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { checkImageId } from '../../api/client.js';
import { FileError, InvalidInputError, RequestError, withRemedy, type RemedyWords } from '../../api/errors.js';
import type { GenerationRequest, ImageRecord } from '../../api/schema.js';
import type { Context } from '../../cli/context.js';
import { buildGenerationRequest, type SceneInput } from '../../input/scene-request.js';
import { asCliError, CliError, ExitCode, fileSystemFailure } from '../../process/errors.js';
import { flagName, isSceneField, SCENE_FIELD_NAMES, sceneSpec, type SceneField } from '../../scene/vocabulary.js';
import { formatBytes } from '../../text/bytes.js';
import { foreign, harmlessValue, harmlessString, type ForeignText } from '../../text/foreign-text.js';
import { printable, terminalSafeJson } from '../../text/printable.js';
import { redactValue } from '../../text/secrets.js';
import { VERSION } from '../../bundle/version.js';
import { findImages } from '../shared/image-lookup.js';
import { parseSort, SORT_CRITERION } from '../shared/list-sort.js';
import { defaultOutputName } from '../shared/saved-image.js';

/** The longest side of the picture an assistant is shown; the file on disk keeps every pixel. */
export const SHOWN_IMAGE_MAX_PIXELS = 1024;
/** The JPEG quality of that picture: enough to see it, small enough for a conversation. */
const SHOWN_IMAGE_QUALITY = 80;
/** How many of the newest images are searched for the one just made (see generatedImageId). */
const ID_LOOKUP_PAGE = 5;
/** How far the service's clock may be behind ours and an image still count as the one just made. */
const CLOCK_SKEW_MS = 5 * 60_000;

export const GENERATE_IMAGE = 'generate_image';
export const LIST_IMAGES = 'list_images';
export const DELETE_IMAGE = 'delete_image';

/** The tool argument that sets a scene field: the field's own name, or for a list its name on the wire (tag → tags). */
export function argumentName(field: SceneField): string {
  const spec = sceneSpec(field);
  return spec.kind === 'list' ? spec.wire : field;
}

/** How a request's failures name what is at fault: the tool's argument, not a flag. */
function argumentLabel(name: string): string {
  return isSceneField(name) ? argumentName(name) : name;
}

/** A field's help as an argument's description: no flag names, no remarks only the command line needs. */
function helpOf(field: SceneField): string {
  return sceneSpec(field)
    .help.replace(/\s*\([^)]*\)$/, '')
    .replace(/, repeatable$/, '')
    .replace(/--([a-z-]+)/g, (_, flag: string) => argumentLabel(SCENE_FIELD_NAMES.find((name) => flagName(name) === flag) ?? flag));
}

/** The schema of one scene field's argument, from its entry in the vocabulary. */
function sceneArgument(field: SceneField): z.ZodType {
  const spec = sceneSpec(field);
  const help = helpOf(field);
  switch (spec.kind) {
    case 'coordinate':
      return z.number().min(spec.range[0]).max(spec.range[1]).optional().describe(`${help} in degrees, ${spec.range[0]} to ${spec.range[1]} (give lat and lng, or at)`);
    case 'location':
      return z.string().optional().describe(help);
    case 'enum':
      return z.enum(spec.values).optional().describe(`${help} (default ${spec.default}, or the profile's defaults.${flagName(field)})`);
    case 'boolean':
      return z.boolean().optional().describe(`${help} (when not given: the profile's defaults.${flagName(field)}, else the service's default)`);
    case 'list':
      return z.array(z.string().min(1)).max(spec.max).optional().describe(`${help}s, at most ${spec.max}`);
    case 'text':
      return z.string().min(1).optional().describe(help);
  }
}

/** generate_image's arguments: every scene field, then where and how the JPEG is saved. */
export function generateImageArguments(): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const field of SCENE_FIELD_NAMES) shape[argumentName(field)] = sceneArgument(field);
  shape.output = z
    .string()
    .min(1)
    .optional()
    .describe(
      "the file name to save the JPEG as, inside the server's output directory (sub/dir/name.jpg makes the directories); never an absolute path nor one that leads out with '..' or a link (default aerial-<lat>_<lng>-<time>.jpg)",
    );
  shape.force = z
    .boolean()
    .optional()
    .describe('replace the output file if it exists (default false); only a server whose user allowed it replaces a file, otherwise an existing file is never replaced');
  shape.metadata = z.boolean().optional().describe('write GPS EXIF and the AI-generated note into the saved JPEG (default true); false saves the bytes exactly as received');
  return shape;
}

export function listImagesArguments(): Record<string, z.ZodType> {
  return {
    page: z.number().int().min(0).optional().describe('page number, counted from 0 (default 0)'),
    size: z.number().int().min(1).optional().describe('images per page, at least 1 (default 20)'),
    sort: z
      .array(z.string().regex(SORT_CRITERION))
      .optional()
      .describe('sort criteria such as createdAt,desc (property,asc or property,desc)'),
  };
}

export function deleteImageArguments(): Record<string, z.ZodType> {
  return {
    id: z.string().min(1).describe('the image id (from list_images), or its first characters (at least 4) when they start one id only'),
  };
}

/** Where the server saves images and what it may do there; the Context gives settings, the client and the signal. */
export interface ToolScope {
  ctx: Context;
  /** Absolute: the only directory generate_image writes in (--output-dir). */
  outputDir: string;
  /** --allow-overwrite: a call that asks (force) may replace a file there. */
  allowOverwrite: boolean;
}

/** What a model can do about a failure, in its arguments' terms (api/errors.ts, Remedy). */
export function toolRemedies(allowOverwrite: boolean): RemedyWords {
  return {
    overwrite: allowOverwrite
      ? '; set force to true to replace it'
      : '; this server replaces no file (its user did not start it with --allow-overwrite): choose another output name',
    // Nothing a tool argument can change: the server sends a generation once.
    retryUnsafe: '',
    findLater: ' — look for it later with list_images',
  };
}

type Arguments = Record<string, unknown>;

/** Scene input from generate_image's arguments, keyed by field, as the flags give it to generate. */
function sceneInputOf(args: Arguments): SceneInput {
  const input: Record<string, unknown> = {};
  for (const field of SCENE_FIELD_NAMES) {
    const value = args[argumentName(field)];
    if (value !== undefined) input[field] = value;
  }
  return input as SceneInput;
}

export async function generateImage(scope: ToolScope, args: Arguments, signal: AbortSignal): Promise<CallToolResult> {
  const { ctx } = scope;
  const request = buildGenerationRequest(sceneInputOf(args), ctx.settings().sceneDefaults, argumentLabel);
  const name = typeof args.output === 'string' ? args.output : defaultOutputName(request.coordinates.lat, request.coordinates.lng);
  const { checkImageTarget, saveGeneratedImage } = await import('../../operations/save-image.js');
  // Inside --output-dir only, and over a file only when the server allows it and the call asks.
  const rules = { overwrite: scope.allowOverwrite && args.force === true, root: scope.outputDir, label: 'output' };
  const target = await checkImageTarget(name, rules);
  const client = await ctx.client();
  const started = Date.now();
  ctx.io.debug(`generate_image: ${request.resolution} image of ${request.coordinates.lat}, ${request.coordinates.lng} → ${target.path}`);
  const written = await saveGeneratedImage(client, {
    ...rules,
    request,
    target,
    metadata: args.metadata === false ? false : { software: `aerial ${VERSION}`, redact: ctx.io.redact },
    signal,
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const shown = await pictureForAssistant(written.path);
  const id = request.saveImage === false ? undefined : await generatedImageId(scope, request, started, signal);
  const idLine = id
    ? `Image id: ${id} (the newest image of this place in the history; list_images and delete_image take it).`
    : request.saveImage === false
      ? 'Not kept in the history (saveImage false): it has no id there.'
      : 'Its id in the history could not be told (the service does not return it with the image); list_images shows the newest first.';
  const text = [
    `Saved ${foreign(written.path)} (${formatBytes(written.bytes)} JPEG, ${request.resolution}, ${seconds}s).`,
    idLine,
    `The picture shown is ${shown.width}×${shown.height}${shown.scaled ? `, scaled down from ${shown.sourceWidth}×${shown.sourceHeight}` : ''}.`,
  ].join('\n');
  return {
    content: [
      { type: 'image', data: shown.data.toString('base64'), mimeType: 'image/jpeg' },
      { type: 'text', text },
    ],
    structuredContent: { file: written.path, bytes: written.bytes, id: id ?? null, request },
  };
}

interface ShownPicture {
  data: Buffer;
  width: number;
  height: number;
  sourceWidth: number;
  sourceHeight: number;
  scaled: boolean;
}

/** The saved image as an assistant is shown it: at most SHOWN_IMAGE_MAX_PIXELS a side, a plain JPEG without metadata. */
async function pictureForAssistant(file: string): Promise<ShownPicture> {
  const { default: sharp } = await import('sharp');
  const source = sharp(file, { failOn: 'error' });
  const { width: sourceWidth = 0, height: sourceHeight = 0 } = await source.metadata();
  const { data, info } = await source
    .resize({ width: SHOWN_IMAGE_MAX_PIXELS, height: SHOWN_IMAGE_MAX_PIXELS, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: SHOWN_IMAGE_QUALITY })
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, sourceWidth, sourceHeight, scaled: info.width < sourceWidth };
}

/**
 * The id of the image just generated. The synchronous endpoint answers with
 * the JPEG alone, so the history is asked: the newest image of the same place
 * and resolution, made since the request was sent (give or take the service's
 * clock). Best effort: when the history does not tell (or cannot be read),
 * there is no id, and the generation still succeeded.
 */
async function generatedImageId(scope: ToolScope, request: GenerationRequest, started: number, signal: AbortSignal): Promise<ForeignText | undefined> {
  try {
    const client = await scope.ctx.client();
    const page = await client.list({ page: 0, size: ID_LOOKUP_PAGE, sort: ['createdAt,desc'] }, { signal });
    const made = (record: ImageRecord) => {
      const at = Date.parse(record.createdAt);
      return Number.isNaN(at) || at >= started - CLOCK_SKEW_MS;
    };
    const id = page.content.find(
      (record) =>
        record.coordinates.latitude === request.coordinates.lat &&
        record.coordinates.longitude === request.coordinates.lng &&
        record.resolution === request.resolution &&
        made(record),
    )?.id;
    return foreign(id);
  } catch (error) {
    if (signal.aborted) throw error;
    scope.ctx.io.debug(`generate_image: the new image's id could not be looked up: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

export async function listImages(scope: ToolScope, args: Arguments, signal: AbortSignal): Promise<CallToolResult> {
  const client = await scope.ctx.client();
  const sort = parseSort(args.sort as string[] | undefined, 'sort');
  const page = await client.list({ page: args.page as number | undefined, size: args.size as number | undefined, sort }, { signal });
  const summary =
    page.content.length === 0
      ? page.totalElements === 0
        ? 'No images in the history yet.'
        : `Page ${page.page} is past the end: ${page.totalElements} images on ${page.totalPages} pages (counted from 0).`
      : `Page ${page.page} of ${page.totalPages} (counted from 0), ${page.content.length} of ${page.totalElements} images, as the service's page object:`;
  // The page as list --json writes it: exact values, with the characters a reader could act on as JSON escapes.
  return {
    content: [{ type: 'text', text: `${summary}\n${terminalSafeJson(page)}` }],
    structuredContent: page,
  };
}

export async function deleteImage(scope: ToolScope, args: Arguments, signal: AbortSignal): Promise<CallToolResult> {
  const word = String(args.id).trim();
  checkImageId(word);
  const client = await scope.ctx.client();
  // As `delete` does: the id (or its start) is found in the history first, so that a start names one image only.
  const records = await findImages(client, [word], { signal });
  const { id } = records.get(word)!;
  await client.delete(id, { signal });
  return { content: [{ type: 'text', text: `Deleted image ${foreign(id)} from the history permanently.` }], structuredContent: { deleted: id } };
}

/**
 * A tool's failure as the assistant sees it: the line the CLI prints for it
 * (its code, then its message), with what can be done about it said in the
 * tools' terms (`remedies`) and its exit code's meaning left out. Input that
 * cannot be used (an argument, an output refused before anything was sent) is
 * its message alone. A failure with no name of its own is unexpected: its
 * message still goes back.
 */
export function toolError(error: unknown, redact: (text: string) => string, remedies: RemedyWords = toolRemedies(false)): CallToolResult {
  let code: string;
  let message: string;
  if (error instanceof RequestError) {
    message = withRemedy(error, remedies);
    code = error instanceof InvalidInputError || (error instanceof FileError && error.errno === undefined) ? 'UsageError' : error.code;
  } else {
    const failure =
      asCliError(error) ?? fileSystemFailure(error) ?? new CliError(`unexpected: ${error instanceof Error ? error.message : String(error)}`, ExitCode.Unexpected, 'Unexpected');
    code = failure.code;
    message = failure.message;
  }
  const generic = ['UsageError', 'Unexpected'].includes(code);
  // Redacted before it is cut: a cut must not leave half a key behind.
  const line = printable(redact(message), 1000);
  return { content: [{ type: 'text', text: generic ? line : `${printable(redact(code), 80)} — ${line}` }], isError: true };
}

/**
 * What leaves the server: every text redacted (the key, a proxy's password)
 * and harmless (the lines are the server's own, any character left that could
 * forge one or drive a reader written as an escape), every structured value
 * too, and the image data as it is.
 */
export function safeResult(result: CallToolResult, redact: (text: string) => string): CallToolResult {
  return {
    ...result,
    content: result.content.map((item) => (item.type === 'text' ? { ...item, text: harmlessLines(redact(item.text)) } : item)),
    // Made harmless first, which turns every ForeignText in it into a string, then redacted.
    ...(result.structuredContent && { structuredContent: redactValue(harmlessValue(result.structuredContent), redact) as Record<string, unknown> }),
  };
}

/** A text of the server's own lines: each made harmless, the line ends kept. */
function harmlessLines(text: string): string {
  return text.split('\n').map(harmlessString).join('\n');
}
