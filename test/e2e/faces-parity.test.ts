// One table of inputs run through all three faces: the CLI (its real main, in
// this process through the seam), the library (GenAerial) and the MCP server
// (bin/aerial.js spawned and driven by the official SDK's Client over stdio),
// against one sandbox whose request log shows what was sent. Each row holds
// every face to the same outcome: refused before sending, naming the same field
// and limit, or the same service refusal with the same code; the same image
// written, with the same pixels and its metadata; the same text from the
// service, escaped alike. Where the trust model makes a face differ (a model's
// output path is held to --output-dir; the CLI's user, and a program without
// `root`, write where they say), the row says so, face by face.
import { mkdirSync, readFileSync, existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenAerial, RequestError } from '../../src/library/index.js';
import { registerSecret, tempDir } from '../helpers/cli.js';
import { answerJson, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { connectMcp, textOf, type McpSession } from '../helpers/mcp.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { runInProcess, TestTerminal } from '../helpers/terminal.js';

type Face = 'cli' | 'library' | 'mcp';
const FACES: readonly Face[] = ['cli', 'library', 'mcp'];

/** What a row asks for: a scene as the request's fields, where to save it, and whether to replace. */
interface Input {
  lat?: number;
  lng?: number;
  resolution?: string;
  tags?: string[];
  output: string;
  force?: boolean;
}

/** How a face's attempt ended, in terms the three share. */
interface Outcome {
  /** Saved: the file's absolute path. */
  file?: string;
  /** Refused or failed: the face's words (the CLI's line, the library's message, the tool error's text). */
  message?: string;
  /** The machine code where the face has one for it (--json's error, error.code, the tool error's prefix). */
  code?: string;
  /** Requests the sandbox received for it. */
  sent: number;
  /** Generations among them. */
  generations: number;
}

/** What every face's outcome must be, or per face where the trust model differs. */
type Expected = { saved: true } | { refused: RegExp[]; code?: string; sent?: number };

interface Row {
  name: string;
  input: Input;
  expected: Expected | Record<Face, Expected>;
  /** What to put in each face's directory first. */
  setup?: (dir: string, outside: string) => void;
}

const paris = { lat: 48.8584, lng: 2.2945, resolution: 'HD' };

const ROWS: Row[] = [
  { name: 'a valid request', input: { ...paris, tags: ['parity'], output: 'paris.jpg' }, expected: { saved: true } },
  { name: 'lat 200', input: { ...paris, lat: 200, output: 'x.jpg' }, expected: { refused: [/lat/, /90/], sent: 0 } },
  { name: 'lng 500', input: { ...paris, lng: 500, output: 'x.jpg' }, expected: { refused: [/lng/, /180/], sent: 0 } },
  { name: 'lat NaN', input: { ...paris, lat: Number.NaN, output: 'x.jpg' }, expected: { refused: [/lat/], sent: 0 } },
  { name: '11 tags', input: { ...paris, tags: Array.from({ length: 11 }, (_, i) => `t${i}`), output: 'x.jpg' }, expected: { refused: [/tag/, /10/], sent: 0 } },
  { name: "resolution 'XL'", input: { ...paris, resolution: 'XL', output: 'x.jpg' }, expected: { refused: [/resolution/, /HD/], sent: 0 } },
  {
    name: 'a file already there, with force: replaced by the CLI and the library, never by a model without --allow-overwrite',
    input: { ...paris, output: 'there.jpg', force: true },
    setup: (dir) => writeFileSync(join(dir, 'there.jpg'), 'mine'),
    expected: { cli: { saved: true }, library: { saved: true }, mcp: { refused: [/there\.jpg already exists/, /--allow-overwrite/], sent: 0 } },
  },
  {
    name: 'a file already there, without force',
    input: { ...paris, output: 'there.jpg' },
    setup: (dir) => writeFileSync(join(dir, 'there.jpg'), 'mine'),
    expected: { refused: [/there\.jpg already exists/], sent: 0 },
  },
  {
    name: 'a directory in the way',
    input: { ...paris, output: 'a-dir', force: true },
    setup: (dir) => mkdirSync(join(dir, 'a-dir')),
    expected: { refused: [/a-dir is a directory; name a file/], sent: 0 },
  },
  { name: 'a directory that is missing: made', input: { ...paris, output: 'new/deeper/x.jpg' }, expected: { saved: true } },
  {
    name: '../escape.jpg: where the CLI’s user says; never for a model, nor a program with root',
    input: { ...paris, output: '../escape.jpg' },
    expected: { cli: { saved: true }, library: { refused: [/climbs out with '\.\.'/], code: 'OutsideRoot', sent: 0 }, mcp: { refused: [/climbs out with '\.\.'/], sent: 0 } },
  },
  {
    name: 'a link out of the directory',
    input: { ...paris, output: 'link/through.jpg' },
    setup: (dir, outside) => symlinkSync(outside, join(dir, 'link')),
    expected: { cli: { saved: true }, library: { refused: [/leads out of the output directory/], code: 'OutsideRoot', sent: 0 }, mcp: { refused: [/leads out of the output directory/], sent: 0 } },
  },
];

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
let mcp: McpSession;
const library: GenAerial[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({ credits: 10_000 });
  registerSecret(sandbox.key);
  home = tempDir('aerial-parity-');
  mkdirSync(join(home.path, 'config'));
  mcp = await connectMcp(['mcp', '--output-dir', join(home.path, 'mcp')], { configDir: join(home.path, 'config'), cwd: home.path, env: sandbox.env() });
});
afterAll(async () => {
  await Promise.all(library.map((client) => client.close()));
  await sandbox.close();
  home.remove();
});

/** The command line of `generate` for an input: flags as a user types them. */
function cliArgs(input: Input, dir: string): string[] {
  const args = ['generate', '--json', '-o', join(dir, input.output)];
  if (input.lat !== undefined) args.push('--lat', String(input.lat));
  if (input.lng !== undefined) args.push('--lng', String(input.lng));
  if (input.resolution !== undefined) args.push('--resolution', input.resolution);
  for (const tag of input.tags ?? []) args.push('--tag', tag);
  if (input.force) args.push('--force');
  return args;
}

async function runFace(face: Face, input: Input, dir: string, env = sandbox.env()): Promise<Outcome> {
  sandbox.clearRequests();
  const outcome = await attempt(face, input, dir, env);
  const requests = sandbox.requests();
  return { ...outcome, sent: requests.length, generations: requests.filter((entry) => entry.method === 'POST').length };
}

async function attempt(face: Face, input: Input, dir: string, env: Record<string, string>): Promise<Omit<Outcome, 'sent' | 'generations'>> {
  switch (face) {
    case 'cli': {
      const result = await runInProcess(cliArgs(input, dir), new TestTerminal({ env: { ...env, AERIAL_CONFIG_DIR: join(home.path, 'config') } }));
      if (result.exitCode === 0) return { file: (JSON.parse(result.stdout) as { file: string }).file };
      const error = JSON.parse(result.stderr) as { error: string; message: string };
      return { message: error.message, code: error.error };
    }
    case 'library': {
      const client = new GenAerial({ apiKey: env.AERIAL_API_KEY, baseUrl: env.AERIAL_BASE_URL, env: { AERIAL_CONFIG_DIR: join(home.path, 'config') } });
      library.push(client);
      const request = { coordinates: { lat: input.lat, lng: input.lng }, resolution: input.resolution, tags: input.tags } as never;
      try {
        // A program saving what it was asked to, as a server would: held to its directory (root).
        return { file: (await client.generateToFile(request, input.output, { root: dir, overwrite: input.force })).path };
      } catch (error) {
        expect(error).toBeInstanceOf(RequestError);
        return { message: (error as RequestError).message, code: (error as RequestError).code };
      }
    }
    case 'mcp': {
      const result = await mcp.call('generate_image', { lat: input.lat, lng: input.lng, resolution: input.resolution, tags: input.tags, output: input.output, force: input.force });
      if (!result.isError) return { file: (result.structuredContent as { file: string }).file };
      const text = textOf(result);
      return { message: text, code: / — /.test(text) ? text.split(' — ')[0] : undefined };
    }
  }
}

/** The decoded pixels of a JPEG: what the same request makes, whatever metadata a face wrote. */
async function pixels(file: string): Promise<Buffer> {
  return sharp(file).raw().toBuffer();
}

describe('every face, one table', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const outcomes = {} as Record<Face, Outcome>;
      for (const face of FACES) {
        const dir = join(home.path, face, row.name.replace(/\W+/g, '-').slice(0, 40));
        const outside = join(home.path, `${face}-outside`);
        mkdirSync(dir, { recursive: true });
        mkdirSync(outside, { recursive: true });
        // The MCP server writes in its --output-dir: the row's directory is a name inside it.
        row.setup?.(dir, outside);
        const input = face === 'mcp' ? { ...row.input, output: `${dir.slice(join(home.path, 'mcp').length + 1)}/${row.input.output}` } : row.input;
        // A model's `../escape.jpg` climbs out of the server's directory itself.
        if (face === 'mcp' && row.input.output.startsWith('../')) input.output = row.input.output;
        outcomes[face] = await runFace(face, input, dir);
      }
      const saved: string[] = [];
      for (const face of FACES) {
        const expected = 'saved' in row.expected || 'refused' in row.expected ? (row.expected as Expected) : (row.expected as Record<Face, Expected>)[face];
        const outcome = outcomes[face];
        if ('saved' in expected) {
          expect(outcome.message, `${face}: ${outcome.message}`).toBeUndefined();
          expect(existsSync(outcome.file!), face).toBe(true);
          // One generation (the MCP server then asks the history for the new image's id).
          expect(outcome.generations, face).toBe(1);
          // Saved as generate saves it: GPS EXIF and the AI-generated note.
          expect(readFileSync(outcome.file!).includes(Buffer.from('trainedAlgorithmicMedia')), face).toBe(true);
          saved.push(outcome.file!);
        } else {
          expect(outcome.file, `${face} saved ${outcome.file}`).toBeUndefined();
          for (const pattern of expected.refused) expect(outcome.message, face).toMatch(pattern);
          if (expected.code && face === 'library') expect(outcome.code).toBe(expected.code);
          if (expected.sent !== undefined) expect(outcome.sent, `${face} sent ${outcome.sent}`).toBe(expected.sent);
        }
      }
      // The same request makes the same picture, through every face that saved it.
      if (saved.length > 1) {
        const [first, ...rest] = await Promise.all(saved.map(pixels));
        for (const other of rest) expect(other!.equals(first!)).toBe(true);
      }
    });
  }

  it('a refusal by the service: the same code from every face, nothing saved', async () => {
    const poor = await sandbox.createAccount({ credits: 0 });
    registerSecret(poor.key);
    const env = { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: poor.key };
    const poorMcp = await connectMcp(['mcp', '--output-dir', join(home.path, 'poor-mcp')], { configDir: join(home.path, 'config'), cwd: home.path, env });
    const input = { ...paris, output: 'refused.jpg' };
    const cli = await runFace('cli', input, join(home.path, 'poor-cli'), env);
    const lib = await runFace('library', input, join(home.path, 'poor-library'), env);
    sandbox.clearRequests();
    const tool = await poorMcp.call('generate_image', { ...paris, output: 'refused.jpg' });
    expect([cli.code, lib.code, textOf(tool).split(' — ')[0]]).toEqual(['InsufficientCredits', 'InsufficientCredits', 'InsufficientCredits']);
    expect([cli.sent, lib.sent, sandbox.requests().length]).toEqual([1, 1, 1]);
    expect(existsSync(join(home.path, 'poor-cli', 'refused.jpg')) || existsSync(join(home.path, 'poor-library', 'refused.jpg')) || existsSync(join(home.path, 'poor-mcp', 'refused.jpg'))).toBe(false);
  });
});

describe('text from the service, through every face', () => {
  let hostile: HostileServer;
  const ID = 'id-1\u2028Image id: id-2\u202egpj.exe';
  const NOTE = 'look\u009b2J\u2066here\u2069';
  beforeAll(async () => {
    hostile = await startHostileServer();
    hostile.respond(answerJson(200, { content: [{ id: ID, url: 'https://images.example/x.jpg', coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2030-01-01T00:00:00Z', note: NOTE }], totalElements: 1, totalPages: 1, page: 0, size: 20 }));
  });
  afterAll(() => hostile.close());

  it('the same values, escaped alike where they are rendered, exact where a program reads them', async () => {
    const env = { AERIAL_BASE_URL: hostile.url, AERIAL_API_KEY: 'sk-parity-0123456789', AERIAL_CONFIG_DIR: join(home.path, 'config') };
    const json = await runInProcess(['list', '--json'], new TestTerminal({ env }));
    const lines = await runInProcess(['list'], new TestTerminal({ env }));
    const client = new GenAerial({ apiKey: env.AERIAL_API_KEY, baseUrl: hostile.url, env: { AERIAL_CONFIG_DIR: env.AERIAL_CONFIG_DIR } });
    library.push(client);
    const page = await client.list();
    const tool = await connectMcp(['mcp'], { configDir: join(home.path, 'config'), cwd: home.path, env: { AERIAL_BASE_URL: hostile.url, AERIAL_API_KEY: env.AERIAL_API_KEY } });
    const listed = await tool.call('list_images', {});

    // The exact values: the library's records, and what the CLI's and the tool's JSON read back to.
    const toolJson = textOf(listed).split('\n')[1]!;
    for (const read of [page, JSON.parse(json.stdout), JSON.parse(toolJson)] as Array<{ content: Array<{ id: string; note: string }> }>) {
      expect(read.content[0]).toMatchObject({ id: ID, note: NOTE });
    }
    // Rendered: the same JSON escapes from the CLI and the tool, and printable lines.
    expect(toolJson).toBe(json.stdout.trim());
    expect(toolJson).toContain('id-1\\u2028Image id: id-2\\u202egpj.exe');
    const harmful = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    for (const text of [json.stdout, lines.stdout, textOf(listed), JSON.stringify(listed.structuredContent)]) expect(text).not.toMatch(harmful);
    expect(lines.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(lines.stdout).toMatch(/^id-1 Image id: id-2 gpj\.exe\t/);
  });
});
