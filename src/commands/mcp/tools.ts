// The tools `aerial mcp` offers: generate_image, list_images and
// delete_image. Their input schemas are made from the scene vocabulary (one
// argument per field, its values and ranges), their output schemas say what
// their structured results hold, and each does what its command does, through
// the same code: the request is built and checked as `generate` builds it,
// the image is saved by the same operation (operations/save-image.ts), images
// are looked up as `delete` looks them up, within the newest ones only.
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
import { ApiError, FileError, InvalidInputError, NetworkError, RequestError, withRemedy, type RemedyWords } from '../../api/errors.js';
import type { GenerationRequest, ImageRecord, Page } from '../../api/schema.js';
import type { Context } from '../../cli/context.js';
import { buildGenerationRequest, type SceneInput } from '../../input/scene-request.js';
import { asCliError, CliError, ExitCode, fileSystemFailure, UsageError } from '../../lifecycle/errors.js';
import { flagName, isSceneField, SCENE_FIELD_NAMES, sceneSpec, type SceneField } from '../../scene/vocabulary.js';
import { formatBytes } from '../../text/bytes.js';
import { foreign, harmlessValue, harmlessString, type ForeignText } from '../../text/foreign-text.js';
import { printable, terminalSafeJson } from '../../text/printable.js';
import { redactValue } from '../../text/secrets.js';
import { VERSION } from '../../build-outputs/version.js';
import { findImages, MIN_ID_PREFIX } from '../shared/image-lookup.js';
import { parseSort, SORT_CRITERION } from '../shared/list-sort.js';
import { defaultOutputName } from '../shared/saved-image.js';
import type { SeenImageUrls } from './image-urls.js';
import { pictureForAssistant } from './picture.js';

export { SHOWN_IMAGE_MAX_PIXELS } from './picture.js';

/** How many of the newest images are searched for the one just made (see generatedImageId). */
const ID_LOOKUP_PAGE = 5;
/** How far the service's clock may be behind ours and an image still count as the one just made. */
const CLOCK_SKEW_MS = 5 * 60_000;
/** The most images list_images returns in one call, whatever size asks: a page fits a conversation. */
export const MAX_LISTED = 100;
/** How many of the newest images are looked through for an id's start (delete_image) or an id (a resource read): one request. */
export const NEWEST_LOOKED_AT = 1000;
/** How often a generation that takes long says it is still waiting (a progress notification). */
const WAITING_NOTICE_MS = 5_000;

export const GENERATE_IMAGE = 'generate_image';
export const LIST_IMAGES = 'list_images';
export const DELETE_IMAGE = 'delete_image';

/** What each tool may do beyond reading: `--read-only` serves those that do neither. */
export const TOOL_EFFECTS: Readonly<Record<string, { spends: boolean; deletes: boolean }>> = {
  [GENERATE_IMAGE]: { spends: true, deletes: false },
  [LIST_IMAGES]: { spends: false, deletes: false },
  [DELETE_IMAGE]: { spends: false, deletes: true },
};

/** Every tool, in the order they are listed. */
export const TOOL_NAMES = [GENERATE_IMAGE, LIST_IMAGES, DELETE_IMAGE] as const;

/** The URI of a history image as a resource; `{id}` is the image id, percent-encoded. */
export const IMAGE_URI_TEMPLATE = 'aerial://images/{id}';

export function imageUri(id: string): string {
  return `aerial://images/${encodeURIComponent(id)}`;
}

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
  const criterion = z.string().regex(SORT_CRITERION);
  return {
    page: z.number().int().min(0).optional().describe('page number, counted from 0 (default 0)'),
    size: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`images per page (default 20); a call returns at most ${MAX_LISTED}, so a larger size is taken as ${MAX_LISTED}`),
    sort: z
      .union([criterion, z.array(criterion)])
      .optional()
      .describe('the order: one criterion "property,asc" or "property,desc", such as "createdAt,desc" (newest first), or a list of them; default the service\'s own order'),
    cursor: z
      .string()
      .min(1)
      .optional()
      .describe('the nextCursor an earlier call returned: the page after it, with the same size and sort (give it alone, without page, size or sort)'),
  };
}

export function deleteImageArguments(): Record<string, z.ZodType> {
  return {
    id: z
      .string()
      .min(1)
      .describe(`the image id (from list_images), deleted as it is; or its first characters (at least ${MIN_ID_PREFIX}) when they start exactly one of the newest ${NEWEST_LOOKED_AT} images`),
  };
}

/** The request generate_image sent, as the service's body: the vocabulary's fields at their wire names. */
function requestOutput(): z.ZodType {
  const coordinates: Record<string, z.ZodType> = {};
  const shape: Record<string, z.ZodType> = {};
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    if (spec.kind === 'coordinate') coordinates[spec.wire.split('.')[1]!] = z.number();
    else if (spec.kind === 'enum') shape[field] = z.enum(spec.values);
    else if (spec.kind === 'boolean') shape[field] = z.boolean().optional();
    else if (spec.kind === 'list') shape[spec.wire] = z.array(z.string());
    else if (spec.kind === 'text') shape[field] = z.string().optional();
  }
  return z.object({ coordinates: z.object(coordinates), ...shape }).describe('the request sent, as the service takes it');
}

/** The outputSchema of generate_image: what its structuredContent holds. */
export function generateImageOutput(): z.ZodType {
  return z.object({
    file: z.string().describe('the absolute path of the saved JPEG'),
    bytes: z.number().int().min(0).describe('its size in bytes, metadata included'),
    id: z.string().nullable().describe("the image's id in the history (null when it is not kept there or could not be told)"),
    uri: z.string().nullable().describe(`the image as a resource (${IMAGE_URI_TEMPLATE}), to look at it again; null without an id`),
    imagesLeft: z.number().int().min(0).optional().describe('how many more images this server may generate (only when its user capped them with --max-images)'),
    request: requestOutput(),
  });
}

/** The outputSchema of list_images: the service's page object (its records as the service sends them) and a cursor. */
export function listImagesOutput(): z.ZodType {
  const record = z.looseObject({
    id: z.string(),
    url: z.string().describe('a temporary download URL, valid for 2 hours'),
    coordinates: z.looseObject({ latitude: z.number(), longitude: z.number() }),
    resolution: z.string(),
    createdAt: z.string().describe('ISO 8601, UTC'),
  });
  return z.looseObject({
    content: z.array(record).max(MAX_LISTED).describe(`the images of this page, at most ${MAX_LISTED}`),
    totalElements: z.number().int(),
    totalPages: z.number().int(),
    page: z.number().int(),
    size: z.number().int(),
    nextCursor: z.string().optional().describe('give it as cursor for the next page; absent on the last'),
  });
}

/** The outputSchema of delete_image. */
export function deleteImageOutput(): z.ZodType {
  return z.object({ deleted: z.string().describe('the whole id of the image deleted') });
}

/** Where the server saves images and what it may do there; the Context gives settings, the client and the signal. */
export interface ToolScope {
  ctx: Context;
  /** Absolute: the only directory generate_image writes in (--output-dir). */
  outputDir: string;
  /** --allow-overwrite: a call that asks (force) may replace a file there. */
  allowOverwrite: boolean;
  /** --max-images: how many more generations this server run may send; absent, no cap. */
  allowance?: ImageAllowance;
  /** The temporary URLs of the images listed so far, for reading them as resources. */
  seen: SeenImageUrls;
}

/** A progress notification (MCP's notifications/progress), when the client asked for them. */
export type Progress = (step: { progress: number; total?: number; message: string }) => void;

/** One call of a tool: when to stop, and where to say how far it has come. */
export interface ToolCall {
  signal: AbortSignal;
  progress?: Progress;
}

/**
 * --max-images: the generations one server run may send. A generation holds
 * its place while it is on its way, so that calls at once cannot pass the
 * cap together, and gives it back when the service refused it with an answer
 * or it never reached the service: only what may have been made counts.
 */
export class ImageAllowance {
  private spent = 0;
  private held = 0;

  constructor(readonly max: number) {}

  get left(): number {
    return Math.max(0, this.max - this.spent - this.held);
  }

  /** A place for one generation, or the tool error that says there is none (nothing is sent). */
  take(): { settle(outcome: 'made' | 'refused'): void } {
    if (this.left === 0) {
      throw new CliError(
        `this server generates at most ${this.max} image${this.max === 1 ? '' : 's'} a run (its user started it with --max-images ${this.max}), and has${this.held > 0 ? ' (or is generating them)' : ''}; nothing was sent`,
        ExitCode.Usage,
        'ImageLimitReached',
      );
    }
    this.held++;
    let settled = false;
    return {
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        this.held--;
        if (outcome === 'made') this.spent++;
      },
    };
  }
}

/** Whether a generation that failed with `error` may have been made (and charged): anything but a refusal or no answer at all. */
function mayHaveBeenMade(error: unknown): boolean {
  if (error instanceof ApiError) return false;
  if (error instanceof NetworkError) return error.maybeProcessed;
  return !(error instanceof InvalidInputError || (error instanceof FileError && error.errno === undefined));
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

export async function generateImage(scope: ToolScope, args: Arguments, call: ToolCall): Promise<CallToolResult> {
  const { ctx } = scope;
  const { signal, progress } = call;
  const request = buildGenerationRequest(sceneInputOf(args), ctx.settings().sceneDefaults, argumentLabel);
  const name = typeof args.output === 'string' ? args.output : defaultOutputName(request.coordinates.lat, request.coordinates.lng);
  const { prepareImageTarget, saveGeneratedImage } = await import('../../operations/save-image.js');
  // Inside --output-dir only, a regular file only, and over a file only when the server allows it and the call asks.
  const rules = { overwrite: scope.allowOverwrite && args.force === true, root: scope.outputDir, label: 'output' };
  const target = await prepareImageTarget(name, rules);
  const client = await ctx.client();
  // Past --max-images, a tool error: nothing is sent.
  const place = scope.allowance?.take();
  const started = Date.now();
  ctx.io.debug(`generate_image: ${request.resolution} image of ${request.coordinates.lat}, ${request.coordinates.lng} → ${target.path}`);
  const total = 4;
  progress?.({ progress: 1, total, message: `Sending the request: a ${request.resolution} image of ${request.coordinates.lat}, ${request.coordinates.lng}` });
  progress?.({ progress: 2, total, message: 'Waiting for the service to generate the image' });
  // While the service works, a word now and then: a client that times a call out may count from the latest.
  let waited = 0;
  const waiting = progress
    ? setInterval(() => {
        waited++;
        progress({ progress: 2 + waited / (waited + 1), total, message: `Waiting for the service to generate the image (${Math.round((Date.now() - started) / 1000)} s)` });
      }, WAITING_NOTICE_MS)
    : undefined;
  let written: { path: string; bytes: number };
  try {
    written = await saveGeneratedImage(client, {
      ...rules,
      request,
      target,
      metadata: args.metadata === false ? false : { software: `aerial ${VERSION}`, redact: ctx.io.redact },
      signal,
      onImage: () => {
        clearInterval(waiting);
        progress?.({ progress: 3, total, message: 'Downloading the image' });
      },
    });
    place?.settle('made');
  } catch (error) {
    place?.settle(mayHaveBeenMade(error) ? 'made' : 'refused');
    throw error;
  } finally {
    clearInterval(waiting);
  }
  progress?.({ progress: 4, total, message: `Saved ${written.path}` });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const shown = await pictureForAssistant(written.path);
  const id = request.saveImage === false ? undefined : await generatedImageId(scope, request, started, signal);
  const idLine = id
    ? `Image id: ${id} (the newest image of this place in the history; list_images and delete_image take it, and it can be looked at again as the resource ${imageUri(id.raw)}).`
    : request.saveImage === false
      ? 'Not kept in the history (saveImage false): it has no id there.'
      : 'Its id in the history could not be told (the service does not return it with the image); list_images shows the newest first.';
  const left = scope.allowance?.left;
  const text = [
    `Saved ${foreign(written.path)} (${formatBytes(written.bytes)} JPEG, ${request.resolution}, ${seconds}s).`,
    idLine,
    `The picture shown is ${shown.width}×${shown.height}${shown.scaled ? `, scaled down from ${shown.sourceWidth}×${shown.sourceHeight}` : ''}.`,
    ...(left === undefined ? [] : [`This server may generate ${left} more image${left === 1 ? '' : 's'} (its user capped it with --max-images).`]),
  ].join('\n');
  return {
    content: [
      { type: 'image', data: shown.data.toString('base64'), mimeType: 'image/jpeg' },
      { type: 'text', text },
    ],
    structuredContent: {
      file: written.path,
      bytes: written.bytes,
      id: id ?? null,
      uri: id ? imageUri(id.raw) : null,
      ...(left === undefined ? {} : { imagesLeft: left }),
      request,
    },
  };
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
    scope.seen.remember(page.content);
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

/** Where a listing goes on from: what nextCursor holds, and a cursor gives back. */
interface Listing {
  page: number;
  size?: number;
  sort?: string[];
}

function encodeCursor(listing: Listing): string {
  return Buffer.from(JSON.stringify(listing)).toString('base64url');
}

/** A cursor, checked as the untrusted argument it is: only one list_images could have given is taken. */
function decodeCursor(cursor: string): Listing {
  const refused = () => new UsageError(`cursor ${JSON.stringify(cursor.slice(0, 60))} is not one list_images gave; give the nextCursor of an earlier call as it is`);
  let listing: Partial<Listing> | null;
  try {
    if (cursor.length > 2000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
    listing = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Listing> | null;
  } catch {
    throw refused();
  }
  const whole = (value: unknown, min: number, max: number) => typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
  if (!listing || typeof listing !== 'object' || !whole(listing.page, 0, Number.MAX_SAFE_INTEGER)) throw refused();
  if (listing.size !== undefined && !whole(listing.size, 1, MAX_LISTED)) throw refused();
  const sorted = listing.sort;
  if (sorted !== undefined && !(Array.isArray(sorted) && sorted.length <= 20 && sorted.every((item) => typeof item === 'string' && SORT_CRITERION.test(item)))) throw refused();
  return { page: listing.page!, size: listing.size, sort: sorted };
}

/** What a call asks for: its cursor's listing, or its page, size (at most MAX_LISTED) and sort. */
function listingOf(args: Arguments): { listing: Listing; askedSize?: number } {
  if (args.cursor !== undefined) {
    const alongside = ['page', 'size', 'sort'].filter((name) => args[name] !== undefined);
    if (alongside.length) throw new UsageError(`cursor carries the page, size and sort of the listing it continues; give it without ${alongside.join(', ')}`);
    return { listing: decodeCursor(String(args.cursor)) };
  }
  const askedSize = args.size as number | undefined;
  const sort = args.sort === undefined ? undefined : parseSort(typeof args.sort === 'string' ? [args.sort] : (args.sort as string[]), 'sort');
  return { listing: { page: (args.page as number | undefined) ?? 0, size: askedSize === undefined ? undefined : Math.min(askedSize, MAX_LISTED), sort }, askedSize };
}

export async function listImages(scope: ToolScope, args: Arguments, call: ToolCall): Promise<CallToolResult> {
  const client = await scope.ctx.client();
  const { listing, askedSize } = listingOf(args);
  // The page is sent as asked: none when none was given, as `list` sends it.
  const page = await client.list({ page: args.page === undefined && args.cursor === undefined ? undefined : listing.page, size: listing.size, sort: listing.sort }, { signal: call.signal });
  // At most MAX_LISTED, whatever the service sent (it was asked for no more).
  const content = page.content.slice(0, MAX_LISTED);
  scope.seen.remember(content);
  const more = page.page + 1 < page.totalPages && content.length > 0;
  const nextCursor = more ? encodeCursor({ page: page.page + 1, size: listing.size ?? Math.min(page.size, MAX_LISTED), sort: listing.sort }) : undefined;
  const result: Page & { nextCursor?: string } = { ...page, content, ...(nextCursor ? { nextCursor } : {}) };
  const summary =
    content.length === 0
      ? page.totalElements === 0
        ? 'No images in the history yet.'
        : `Page ${page.page} is past the end: ${page.totalElements} images on ${page.totalPages} pages (counted from 0).`
      : `Page ${page.page} of ${page.totalPages} (counted from 0), ${content.length} of ${page.totalElements} images, as the service's page object:`;
  const notes = [
    ...(askedSize !== undefined && askedSize > MAX_LISTED ? [`A call lists at most ${MAX_LISTED} images, so size ${askedSize} was taken as ${MAX_LISTED}.`] : []),
    ...(nextCursor ? [`More: call list_images with cursor "${nextCursor}" for the next page.`] : []),
    ...(content.length > 0 ? [`Each image can be looked at as the resource ${IMAGE_URI_TEMPLATE} (its id in place of {id}).`] : []),
  ];
  // The page as list --json writes it: exact values, with the characters a reader could act on as JSON escapes.
  return {
    content: [{ type: 'text', text: [summary, terminalSafeJson(result), ...notes].join('\n') }],
    structuredContent: result,
  };
}

/**
 * Deletes by a whole id at once (DELETE, nothing listed). Only when the
 * service knows no image of that id is the word taken as the start of one,
 * among the newest NEWEST_LOOKED_AT images: a bounded look, never a walk of
 * the whole history.
 */
export async function deleteImage(scope: ToolScope, args: Arguments, call: ToolCall): Promise<CallToolResult> {
  const { signal } = call;
  const word = String(args.id).trim();
  checkImageId(word);
  const client = await scope.ctx.client();
  let id = word;
  try {
    await client.delete(word, { signal });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404) || word.length < MIN_ID_PREFIX) throw error;
    const records = await findImages(client, [word], {
      signal,
      within: NEWEST_LOOKED_AT,
      notFoundNote: `no image has this id, and the start of an id is looked for among the newest ${NEWEST_LOOKED_AT} images only: give the whole id (list_images shows it)`,
    });
    id = records.get(word)!.id;
    await client.delete(id, { signal });
  }
  scope.seen.forget(id);
  const how = id === word ? '' : ` (the one image among the newest ${NEWEST_LOOKED_AT} whose id starts with ${foreign(word)})`;
  return { content: [{ type: 'text', text: `Deleted image ${foreign(id)}${how} from the history permanently.` }], structuredContent: { deleted: foreign(id) } };
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
    ...(result.structuredContent && { structuredContent: safeValue(result.structuredContent, redact) as Record<string, unknown> }),
  };
}

/** Data on its way to a client: made harmless first (which turns every ForeignText in it into a string), then redacted. */
export function safeValue(value: unknown, redact: (text: string) => string): unknown {
  return redactValue(harmlessValue(value), redact);
}

/** A text of the server's own lines: each made harmless, the line ends kept. */
function harmlessLines(text: string): string {
  return text.split('\n').map(harmlessString).join('\n');
}
