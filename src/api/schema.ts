// zod schemas transcribed from the GenAerial v1 spec. Response schemas are
// passthrough: the service may add fields the spec does not show, and the CLI
// must keep them (list --json prints the page object as received).
import { z } from 'zod';
import {
  ANGLES,
  ASPECT_RATIOS,
  BEARINGS,
  DAYTIMES,
  EPOCHS,
  RESOLUTIONS,
  WEATHERS,
  ZOOMS,
} from './enums.js';
import { CONTROL_CHARACTERS } from './image-id.js';

export const MAX_TAGS = 10;

/** Identifiers are printed and used in paths and file names: control characters in one mean a broken server. */
const Identifier = z
  .string()
  .min(1, 'must be a non-empty identifier')
  .refine((id) => !CONTROL_CHARACTERS.test(id), 'must be an identifier without control characters');

export const CoordinatesSchema = z.object({
  lat: z.number().finite().min(-90).max(90),
  lng: z.number().finite(),
});

/** Body of both generation endpoints, exactly the documented wire form. */
export const GenerationRequestSchema = z
  .object({
    coordinates: CoordinatesSchema,
    resolution: z.enum(RESOLUTIONS),
    zoom: z.enum(ZOOMS),
    bearing: z.enum(BEARINGS),
    angle: z.enum(ANGLES),
    weather: z.enum(WEATHERS),
    daytime: z.enum(DAYTIMES),
    aspectRatio: z.enum(ASPECT_RATIOS),
    epoch: z.enum(EPOCHS),
    includeContext: z.boolean().optional(),
    includeSurroundings: z.boolean().optional(),
    improveOutput: z.boolean().optional(),
    saveImage: z.boolean().optional(),
    tags: z.array(z.string()).max(MAX_TAGS),
    prompt: z.string().optional(),
  })
  .strict();

export type GenerationRequest = z.infer<typeof GenerationRequestSchema>;

export const ImageRecordSchema = z
  .object({
    id: Identifier,
    url: z.string(),
    coordinates: z.object({ latitude: z.number(), longitude: z.number() }).passthrough(),
    resolution: z.string(),
    createdAt: z.string(),
  })
  .passthrough();

export type ImageRecord = z.infer<typeof ImageRecordSchema>;

export const PageSchema = z
  .object({
    content: z.array(ImageRecordSchema),
    totalElements: z.number().int(),
    totalPages: z.number().int(),
    page: z.number().int(),
    size: z.number().int(),
  })
  .passthrough();

export type Page = z.infer<typeof PageSchema>;

export const AsyncAcceptedSchema = z
  .object({ requestId: Identifier, status: z.string() })
  .passthrough();

export type AsyncAccepted = z.infer<typeof AsyncAcceptedSchema>;

export const ErrorBodySchema = z
  .object({ status: z.number().int().optional(), error: z.string(), message: z.string().optional() })
  .passthrough();

export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const WebhookSuccessSchema = z
  .object({
    requestId: Identifier,
    signedUrl: z.string(),
    generatedImageId: Identifier,
    creditsUsed: z.number().int(),
  })
  .passthrough();

export const WebhookErrorSchema = z
  .object({ requestId: z.string(), errorCode: z.string(), errorMessage: z.string() })
  .passthrough();

export type WebhookSuccess = z.infer<typeof WebhookSuccessSchema>;
export type WebhookError = z.infer<typeof WebhookErrorSchema>;

export const WebhookPayloadSchema = z.union([WebhookSuccessSchema, WebhookErrorSchema]);
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

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
        if (path === 'coordinates.lat') return 'coordinates.lat must be between -90 and 90';
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
