// zod schemas transcribed from the GenAerial v1 spec. Response schemas are
// passthrough: the service may add fields the spec does not show, and the CLI
// must keep them (list --json prints the page object as received).
import { z } from 'zod';
import {
  SCENE_FIELD_NAMES,
  sceneSpec,
  wirePath,
  type BooleanField,
  type CoordinateField,
  type EnumField,
  type EnumValue,
  type ListField,
  type SceneFields,
  type SceneFieldSpec,
  type TextField,
} from '../scene/vocabulary.js';
import { NO_CONTROL_CHARACTERS } from './image-id.js';

/**
 * A schema built on its first use: a command builds only the schemas it
 * uses (building zod schemas is a measurable part of every start-up).
 */
function lazily<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/**
 * Identifiers are printed and used in paths and file names: control characters in one mean a broken server.
 * A pattern of the string schema, not a .refine(): zod's refinements make, on every parse, an object with a
 * getter that closes over the parse's context, and V8 keeps what such a getter reaches (the record, its page)
 * through the young generation's collections until the next full one. Over a walk of a million records that
 * kept some 12% of all that was allocated, and on Node 22 and later grew the young generation to its largest
 * (64 MB a semi-space): 280 MB where 160 MB would do.
 */
const identifier = lazily(() =>
  z.string().min(1, 'must be a non-empty identifier').regex(NO_CONTROL_CHARACTERS, 'must be an identifier without control characters'),
);

type Flatten<T> = { [K in keyof T]: T[K] };
type Leaf<Path> = Path extends `coordinates.${infer Name}` ? Name : never;

/** Body of both generation endpoints, exactly the documented wire form: the scene vocabulary's fields, by kind. */
export type GenerationRequest = Flatten<
  { coordinates: { [F in CoordinateField as Leaf<SceneFields[F]['wire']>]: number } } & { [F in EnumField]: EnumValue<F> } & {
    [F in BooleanField]?: boolean;
  } & { [F in ListField as SceneFields[F]['wire']]: string[] } & { [F in TextField]?: string }
>;

/** The schema of one field's value on the wire. */
function wireSchema(spec: Exclude<SceneFieldSpec, { kind: 'location' }>): z.ZodTypeAny {
  switch (spec.kind) {
    case 'coordinate': {
      const [min, max] = spec.range;
      return spec.specRange ? z.number().finite().min(min).max(max) : z.number().finite();
    }
    case 'enum':
      return z.enum(spec.values as [string, ...string[]]);
    case 'boolean':
      return z.boolean().optional();
    case 'list':
      return z.array(z.string()).max(spec.max);
    case 'text':
      return z.string().optional();
  }
}

/** Every field at its wire path; a nested object (coordinates) takes the place of its first field, so the body keeps the vocabulary's order. */
function requestShape(): z.ZodRawShape {
  const shape: Record<string, z.ZodTypeAny> = {};
  const nested = new Map<string, z.ZodRawShape>();
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    const path = wirePath(field);
    if (spec.kind === 'location' || path === undefined) continue;
    const [name, leaf] = path.split('.') as [string, string | undefined];
    if (leaf === undefined) {
      shape[name] = wireSchema(spec);
      continue;
    }
    if (!nested.has(name)) {
      nested.set(name, {});
      shape[name] = z.never();
    }
    nested.get(name)![leaf] = wireSchema(spec);
  }
  for (const [name, fields] of nested) shape[name] = z.object(fields);
  return shape;
}

export const generationRequestSchema = lazily(() => z.object(requestShape()).strict() as unknown as z.ZodType<GenerationRequest>);

const buildImageRecord = () =>
  z
    .object({
      id: identifier(),
      url: z.string(),
      coordinates: z.object({ latitude: z.number(), longitude: z.number() }).passthrough(),
      resolution: z.string(),
      createdAt: z.string(),
    })
    .passthrough();
export const imageRecordSchema = lazily(buildImageRecord);

export type ImageRecord = z.infer<ReturnType<typeof buildImageRecord>>;

const buildPage = () =>
  z
    .object({
      content: z.array(imageRecordSchema()),
      totalElements: z.number().int(),
      totalPages: z.number().int(),
      page: z.number().int(),
      size: z.number().int(),
    })
    .passthrough();
export const pageSchema = lazily(buildPage);

export type Page = z.infer<ReturnType<typeof buildPage>>;

// The page schema compiled by hand, for the list endpoint's hot path: a walk
// of a million records would spend a fifth of its time in zod's general walk
// (and its copies of every record). It accepts exactly what pageSchema()
// accepts (test/property/page-check.test.ts holds them to it over hostile
// pages) and hands the value back as parsed, not a copy: a page it refuses
// goes to zod, which says why.

/** What zod takes for an object: not null, not an array (JSON.parse makes nothing else that is typeof 'object'). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** z.number(): any number but NaN. */
function isNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value);
}

/** imageRecordSchema(), accepted or not. */
export function isImageRecord(value: unknown): value is ImageRecord {
  if (!isObject(value)) return false;
  const { id, coordinates } = value;
  return (
    typeof id === 'string' &&
    id.length >= 1 &&
    NO_CONTROL_CHARACTERS.test(id) &&
    typeof value.url === 'string' &&
    isObject(coordinates) &&
    isNumber(coordinates.latitude) &&
    isNumber(coordinates.longitude) &&
    typeof value.resolution === 'string' &&
    typeof value.createdAt === 'string'
  );
}

/** pageSchema(), accepted or not; every record is checked. */
export function isPage(value: unknown): value is Page {
  if (!isObject(value)) return false;
  const { content } = value;
  if (!Array.isArray(content)) return false;
  for (let i = 0; i < content.length; i++) if (!isImageRecord(content[i])) return false;
  return Number.isInteger(value.totalElements) && Number.isInteger(value.totalPages) && Number.isInteger(value.page) && Number.isInteger(value.size);
}

const buildAsyncAccepted = () =>
  z
    .object({ requestId: identifier(), status: z.string() })
    .passthrough();
export const asyncAcceptedSchema = lazily(buildAsyncAccepted);

export type AsyncAccepted = z.infer<ReturnType<typeof buildAsyncAccepted>>;

const buildErrorBody = () =>
  z
    .object({ status: z.number().int().optional(), error: z.string(), message: z.string().optional() })
    .passthrough();
export const errorBodySchema = lazily(buildErrorBody);

export type ErrorBody = z.infer<ReturnType<typeof buildErrorBody>>;

const buildWebhookSuccess = () =>
  z
    .object({
      requestId: identifier(),
      signedUrl: z.string(),
      generatedImageId: identifier(),
      creditsUsed: z.number().int(),
    })
    .passthrough();
export const webhookSuccessSchema = lazily(buildWebhookSuccess);

const buildWebhookError = () =>
  z
    .object({ requestId: z.string(), errorCode: z.string(), errorMessage: z.string() })
    .passthrough();
export const webhookErrorSchema = lazily(buildWebhookError);

export type WebhookSuccess = z.infer<ReturnType<typeof buildWebhookSuccess>>;
export type WebhookError = z.infer<ReturnType<typeof buildWebhookError>>;

export const webhookPayloadSchema = lazily(() => z.union([webhookSuccessSchema(), webhookErrorSchema()]));
export type WebhookPayload = WebhookSuccess | WebhookError;

/** The range the spec sets for the coordinate at a wire path, if any. */
function rangeAt(path: string): readonly [number, number] | undefined {
  for (const field of SCENE_FIELD_NAMES) {
    const spec = sceneSpec(field);
    if (spec.kind === 'coordinate' && spec.specRange && spec.wire === path) return spec.range;
  }
  return undefined;
}

/** One readable sentence per zod issue, naming the field by its dotted path (coordinates.lat, tags). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.') || 'body';
      if (issue.code === 'invalid_enum_value') {
        return `${path} must be one of ${issue.options.join(', ')}`;
      }
      if (issue.code === 'too_big' && issue.type === 'array') {
        return `${path} must have at most ${String(issue.maximum)} entries`;
      }
      if (issue.code === 'too_small' || issue.code === 'too_big') {
        const range = rangeAt(path);
        if (range) return `${path} must be between ${range[0]} and ${range[1]}`;
      }
      if (issue.code === 'invalid_type' && issue.received === 'undefined') {
        return `${path} is required`;
      }
      if (issue.code === 'unrecognized_keys') {
        return `unknown field(s) ${issue.keys.join(', ')}`;
      }
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
