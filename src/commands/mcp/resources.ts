// The history's images as MCP resources, so that an assistant can look at an
// image made earlier (it cannot open the temporary URLs list_images shows):
// the template aerial://images/{id}; resources/list pages through the history,
// newest first, a page per cursor; resources/read gives the JPEG scaled as
// generate_image shows one. The v1 interface has no lookup by id: an image is
// fetched through the URL this server last saw listed for it (image-urls.ts),
// or else looked for among the newest NEWEST_LOOKED_AT images, never by a walk
// of the whole history. The URI is untrusted input: only an id is taken from
// it, checked as every id is, and it names no file.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ListResourcesResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { checkImageId } from '../../api/client.js';
import { ApiError, ImageUrlRefusedError, RequestError, type RemedyWords } from '../../api/errors.js';
import { MemorySink } from '../../api/memory-sink.js';
import { CliError } from '../../lifecycle/errors.js';
import { findImages } from '../shared/image-lookup.js';
import { pictureForAssistant } from './picture.js';
import { IMAGE_URI_TEMPLATE, imageUri, NEWEST_LOOKED_AT, safeValue, toolError, type ToolScope } from './tools.js';

/** Resources per resources/list page. */
const RESOURCE_PAGE = 100;
/** The code the MCP specification gives a resource that is not there. */
const RESOURCE_NOT_FOUND = -32002;

const URI_PREFIX = 'aerial://images/';

/** Answers resources/templates/list, resources/list and resources/read on `server` (before it connects). */
export function serveHistoryImages(server: McpServer['server'], scope: ToolScope, remedies: RemedyWords): void {
  const { ctx } = scope;
  server.registerCapabilities({ resources: {} });
  const failure = (error: unknown, uri?: string): McpError => {
    // The URI and the id in it came from the client: the message is made harmless and redacted as a result is.
    const data = uri === undefined ? undefined : safeValue({ uri }, ctx.io.redact);
    if (error instanceof McpError) return new McpError(error.code, safeValue(error.message.replace(/^MCP error -?\d+: /, ''), ctx.io.redact) as string, data);
    const text = (toolError(error, ctx.io.redact, remedies).content[0] as { text: string }).text;
    const missing = (error instanceof CliError && error.code === 'NotFound') || (error instanceof ApiError && error.status === 404);
    ctx.io.debug(`resources: ${text}`);
    return new McpError(missing ? RESOURCE_NOT_FOUND : ErrorCode.InternalError, text, data);
  };

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: IMAGE_URI_TEMPLATE,
        name: 'history-image',
        title: 'An image of the history',
        description: `An image of the account's history, by its id (list_images gives them): the JPEG, scaled down to at most 1024 pixels a side. The image is looked for among the images listed in this session, then among the newest ${NEWEST_LOOKED_AT}.`,
        mimeType: 'image/jpeg',
      },
    ],
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra): Promise<ListResourcesResult> => {
    try {
      const page = pageOfCursor(request.params?.cursor);
      const client = await ctx.client();
      const listed = await client.list({ page, size: RESOURCE_PAGE, sort: ['createdAt,desc'] }, { signal: AbortSignal.any([ctx.signal, extra.signal]) });
      const content = listed.content.slice(0, RESOURCE_PAGE);
      scope.seen.remember(content);
      const more = listed.page + 1 < listed.totalPages && content.length > 0;
      const resources = content.map((record) => ({
        uri: imageUri(record.id),
        name: record.id,
        title: `${record.resolution} image of ${record.coordinates.latitude}, ${record.coordinates.longitude} (${record.createdAt})`,
        mimeType: 'image/jpeg',
      }));
      // Ids and fields are the service's: made harmless and redacted, as every result is.
      return safeValue({ resources, ...(more ? { nextCursor: String(page + 1) } : {}) }, ctx.io.redact) as ListResourcesResult;
    } catch (error) {
      throw failure(error);
    }
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra): Promise<ReadResourceResult> => {
    const { uri } = request.params;
    const signal = AbortSignal.any([ctx.signal, extra.signal]);
    try {
      const id = idOfUri(uri);
      const client = await ctx.client();
      const download = async (url: string) => {
        const sink = new MemorySink();
        await client.downloadInto(url, sink, { signal });
        return sink.bytes;
      };
      let found = id;
      let jpeg: Buffer | undefined;
      const known = scope.seen.urlOf(id);
      if (known !== undefined) {
        // A URL refused (expired early, revoked) is looked up afresh; any other failure is the answer.
        jpeg = await download(known).catch((error: unknown) => {
          if (!(error instanceof ImageUrlRefusedError)) throw error;
          scope.seen.forget(id);
          return undefined;
        });
      }
      if (jpeg === undefined) {
        const records = await findImages(client, [id], {
          signal,
          within: NEWEST_LOOKED_AT,
          notFoundNote: `images are looked for among those listed in this session and the newest ${NEWEST_LOOKED_AT}: list_images reaches older ones`,
        });
        const record = records.get(id)!;
        scope.seen.remember([record]);
        found = record.id;
        jpeg = await download(record.url);
      }
      const shown = await pictureForAssistant(jpeg);
      return { contents: [{ uri: safeValue(imageUri(found), ctx.io.redact) as string, mimeType: 'image/jpeg', blob: shown.data.toString('base64') }] };
    } catch (error) {
      throw failure(error, uri);
    }
  });
}

/** The page a resources/list cursor stands for: the cursors this server gives are page numbers. */
function pageOfCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor)) throw new McpError(ErrorCode.InvalidParams, `cursor ${JSON.stringify(cursor.slice(0, 40))} is not one resources/list gave`);
  return Number(cursor);
}

/** The image id an aerial://images/{id} URI names; any other URI is an invalid parameter. */
function idOfUri(uri: string): string {
  if (!uri.startsWith(URI_PREFIX)) throw new McpError(RESOURCE_NOT_FOUND, `no resource ${JSON.stringify(uri.slice(0, 100))}: this server's resources are ${IMAGE_URI_TEMPLATE}`, { uri });
  const encoded = uri.slice(URI_PREFIX.length);
  let id: string;
  try {
    id = decodeURIComponent(encoded);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(uri.slice(0, 100))} holds no image id (its percent-encoding is broken)`, { uri });
  }
  try {
    return checkImageId(id);
  } catch (error) {
    throw new McpError(ErrorCode.InvalidParams, error instanceof RequestError ? error.message : String(error), { uri });
  }
}
