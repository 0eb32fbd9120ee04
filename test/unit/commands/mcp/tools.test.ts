// The MCP tools' arguments come from the scene vocabulary, their failures read
// as the CLI's error lines, and what leaves the server is redacted.
import { describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { ApiError, FileError, NetworkError } from '../../../../src/api/errors.js';
import { MaybeChargedError } from '../../../../src/api/retry.js';
import {
  argumentName,
  deleteImageOutput,
  generateImageArguments,
  generateImageOutput,
  ImageAllowance,
  listImagesOutput,
  MAX_LISTED,
  safeResult,
  toolError,
  toolRemedies,
} from '../../../../src/commands/mcp/tools.js';
import { CliError, ExitCode, UsageError } from '../../../../src/lifecycle/errors.js';
import { ENUM_FIELDS, SCENE_FIELD_NAMES, SCENE_FIELDS } from '../../../../src/scene/vocabulary.js';
import { foreign } from '../../../../src/text/foreign-text.js';
import { Redactor } from '../../../../src/text/secrets.js';

const KEY = 'sk-unit-0123456789abcdef';
const redactor = new Redactor();
redactor.add(KEY);
const redact = (text: string) => redactor.redact(text);

describe('generate_image arguments', () => {
  const schema = z.object(generateImageArguments());

  it('are one per scene field, under its name (a list under its wire name), then output, force and metadata', () => {
    expect(Object.keys(generateImageArguments())).toEqual([...SCENE_FIELD_NAMES.map(argumentName), 'output', 'force', 'metadata']);
    expect(argumentName('tag')).toBe('tags');
    expect(argumentName('aspectRatio')).toBe('aspectRatio');
  });

  it('take each enum field\'s values exactly as the vocabulary spells them, and nothing else', () => {
    for (const field of ENUM_FIELDS) {
      for (const value of SCENE_FIELDS[field].values) expect(schema.safeParse({ [field]: value }).success, `${field}=${value}`).toBe(true);
      expect(schema.safeParse({ [field]: `${SCENE_FIELDS[field].values[0]}x` }).success, field).toBe(false);
    }
    const json = z.toJSONSchema(schema) as { properties: Record<string, { enum?: string[] }> };
    for (const field of ENUM_FIELDS) expect(json.properties[field]!.enum).toEqual([...SCENE_FIELDS[field].values]);
  });

  it('hold coordinates to the vocabulary\'s ranges and tags to its count', () => {
    const [latMin, latMax] = SCENE_FIELDS.lat.range;
    expect(schema.safeParse({ lat: latMax }).success).toBe(true);
    expect(schema.safeParse({ lat: latMax + 0.001 }).success).toBe(false);
    expect(schema.safeParse({ lat: latMin - 1 }).success).toBe(false);
    expect(schema.safeParse({ tags: Array(SCENE_FIELDS.tag.max).fill('a') }).success).toBe(true);
    expect(schema.safeParse({ tags: Array(SCENE_FIELDS.tag.max + 1).fill('a') }).success).toBe(false);
  });

  it('are described without flags: lat/lng, not --lat/--lng', () => {
    const descriptions = Object.values(generateImageArguments()).map((argument) => argument.description ?? '');
    expect(descriptions.filter((text) => /--[a-z]/.test(text))).toEqual([]);
    expect(generateImageArguments().at!.description).toContain('instead of lat/lng');
  });
});

describe('toolError', () => {
  const text = (result: ReturnType<typeof toolError>) => (result.content[0] as { text: string }).text;

  it('is the CLI\'s error line: the code first when the error has a name of its own, the message alone for a usage error', () => {
    expect(toolError(new UsageError('lat is required (or at LAT,LNG)'), redact)).toEqual({ content: [{ type: 'text', text: 'lat is required (or at LAT,LNG)' }], isError: true });
    expect(text(toolError(new CliError('no credits left', ExitCode.Credits, 'InsufficientCredits', 402), redact))).toBe('InsufficientCredits — no credits left');
    expect(text(toolError(new ApiError(404, 'NotFound', 'image not found'), redact))).toMatch(/^NotFound — /);
  });

  it('names an unexpected failure as such, and a file system failure by what it is', () => {
    expect(text(toolError(new Error('boom'), redact))).toBe('unexpected: boom');
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write', path: '/tmp/x.jpg' });
    expect(text(toolError(full, redact))).toMatch(/^NoSpace — /);
  });

  it('hides the key before the message is cut to length, and keeps it to one printable line', () => {
    const long = `${'x'.repeat(990)} ${KEY} and more\nforged line`;
    const line = text(toolError(new UsageError(long), redact));
    expect(line).not.toContain(KEY.slice(0, 8));
    expect(line).not.toContain('\n');
  });
});

describe('safeResult', () => {
  it('redacts every text and structured value, and leaves image data as it is', () => {
    const image = Buffer.from(`jpeg ${KEY}`).toString('base64');
    const result = safeResult(
      {
        content: [
          { type: 'image', data: image, mimeType: 'image/jpeg' },
          { type: 'text', text: `saved with ${KEY}` },
        ],
        structuredContent: { file: `/tmp/${KEY}.jpg`, nested: [{ url: `https://x/?k=${encodeURIComponent(KEY)}` }] },
      },
      redact,
    );
    expect(result.content[0]).toEqual({ type: 'image', data: image, mimeType: 'image/jpeg' });
    expect(JSON.stringify([result.content[1], result.structuredContent])).not.toContain(KEY);
    expect(result.content[1]).toEqual({ type: 'text', text: 'saved with ***' });
  });
});

describe('toolError, for the taxonomy’s errors', () => {
  const text = (result: ReturnType<typeof toolError>) => (result.content[0] as { text: string }).text;

  it('says what can be done in the tools’ terms, which depend on --allow-overwrite, never in flags for the CLI', () => {
    const exists = new FileError('output /out/x.jpg already exists', 'AlreadyExists', '/out/x.jpg', { remedy: 'overwrite' });
    expect(text(toolError(exists, redact, toolRemedies(false)))).toBe(
      'output /out/x.jpg already exists; this server replaces no file (its user did not start it with --allow-overwrite): choose another output name',
    );
    expect(text(toolError(exists, redact, toolRemedies(true)))).toBe('output /out/x.jpg already exists; set force to true to replace it');
    const charged = new MaybeChargedError(new NetworkError('connection reset', 'ECONNRESET', true));
    expect(text(toolError(charged, redact))).toBe('ECONNRESET — connection reset; the service may already have generated (and charged for) this image, so it was not retried');
  });

  it('gives a refused output its message alone, and a system’s refusal its code', () => {
    expect(text(toolError(new FileError('output "../x.jpg" climbs out', 'OutsideRoot', '../x.jpg'), redact))).toBe('output "../x.jpg" climbs out');
    expect(text(toolError(new FileError('cannot write /out/x.jpg: no space left on the device', 'NoSpace', '/out/x.jpg', { errno: 'ENOSPC' }), redact))).toBe(
      'NoSpace — cannot write /out/x.jpg: no space left on the device',
    );
  });
});

describe('safeResult, for text from the service', () => {
  it('escapes what could forge a line or reorder text, in the texts and in every structured value', () => {
    const result = safeResult(
      { content: [{ type: 'text', text: 'Saved x.jpg.\nImage id: a\u2028b\u202ec\u009b' }], structuredContent: { id: 'a\u2028b\u202ec', list: [{ note: 'x\ny\u0085' }] } },
      redact,
    );
    expect(result.content[0]).toEqual({ type: 'text', text: 'Saved x.jpg.\nImage id: a\\u2028b\\u202ec\\u009b' });
    expect(result.structuredContent).toEqual({ id: 'a\\u2028b\\u202ec', list: [{ note: 'x\\u000ay\\u0085' }] });
  });

  it('redacts a ForeignText as it redacts a string', () => {
    const result = safeResult({ content: [{ type: 'text', text: `id ${foreign(`x-${KEY}`)}` }], structuredContent: { id: foreign(`x-${KEY}\u2028`) } }, redact);
    expect(result.content[0]).toEqual({ type: 'text', text: 'id x-***' });
    expect(result.structuredContent).toEqual({ id: 'x-***\\u2028' });
  });
});

describe('ImageAllowance (--max-images)', () => {
  it('holds a place for each generation on its way, gives back those refused, and refuses past the cap with nothing sent', () => {
    const allowance = new ImageAllowance(2);
    const first = allowance.take();
    const second = allowance.take();
    expect(allowance.left).toBe(0);
    // Two on their way: a third cannot start, even before either is done.
    expect(() => allowance.take()).toThrow(/at most 2 images a run .*--max-images 2.*\(or is generating them\); nothing was sent/);
    second.settle('refused');
    second.settle('made'); // settled once only
    expect(allowance.left).toBe(1);
    first.settle('made');
    const third = allowance.take();
    third.settle('made');
    expect(allowance.left).toBe(0);
    const refused = (() => {
      try {
        allowance.take();
      } catch (error) {
        return error as CliError;
      }
    })();
    expect([refused?.code, refused?.message]).toEqual(['ImageLimitReached', 'this server generates at most 2 images a run (its user started it with --max-images 2), and has; nothing was sent']);
    expect(new ImageAllowance(0).left).toBe(0);
  });
});

describe('output schemas', () => {
  it('say what each tool returns: generate_image its file, id, resource and the request at its wire names', () => {
    const generated = z.toJSONSchema(generateImageOutput(), { io: 'output' }) as { required: string[]; properties: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
    expect(generated.required).toEqual(['file', 'bytes', 'id', 'uri', 'request']);
    const request = generated.properties.request!.properties!;
    for (const field of ENUM_FIELDS) expect(request[field]!.enum, field).toEqual([...SCENE_FIELDS[field].values]);
    expect(Object.keys(request)).toEqual(expect.arrayContaining(['coordinates', 'tags', 'prompt', 'saveImage']));
    const page = { content: [{ id: 'a', url: 'u', coordinates: { latitude: 1, longitude: 2, more: 1 }, resolution: 'HD', createdAt: 't', zoom: 'Low' }], totalElements: 1, totalPages: 1, page: 0, size: 20, pageable: {} };
    expect(listImagesOutput().safeParse(page).success).toBe(true);
    expect(listImagesOutput().safeParse({ ...page, content: Array(MAX_LISTED + 1).fill(page.content[0]) }).success).toBe(false);
    expect(deleteImageOutput().safeParse({ deleted: 'a' }).success).toBe(true);
  });
});

describe('chooseTools', () => {
  it('serves every tool, those --tools names, less those --read-only bars', async () => {
    const { chooseTools } = await import('../../../../src/commands/mcp/server.js');
    expect(chooseTools({})).toEqual(['generate_image', 'list_images', 'delete_image']);
    expect(chooseTools({ readOnly: true })).toEqual(['list_images']);
    expect(chooseTools({ tools: 'delete_image, generate_image' })).toEqual(['generate_image', 'delete_image']);
    expect(chooseTools({ tools: 'list_images', readOnly: true })).toEqual(['list_images']);
    expect(() => chooseTools({ tools: 'generate_image', readOnly: true })).toThrow('--tools generate_image cannot be served with --read-only: generate_image spends credits');
    expect(() => chooseTools({ tools: 'list_image' })).toThrow(/^--tools names no tool 'list_image' \(did you mean list_images\?\)/);
    expect(() => chooseTools({ tools: 'list' })).toThrow("--tools names no tool 'list'; the tools are generate_image, list_images, delete_image");
  });
});
