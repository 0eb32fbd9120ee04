// `aerial mcp` as an assistant's client runs it: bin/aerial.js spawned by the
// official SDK's StdioClientTransport, driven by its Client over stdin and
// stdout, with the in-process sandbox (--sandbox) or a server of the test's
// own. The tools are listed, an image generated (shown and saved), listed
// and deleted; bad arguments and refusals come back as tool errors; the key
// appears in no result; and the server ends as the protocol and the
// contract say: stdin closed (after answering what was asked) 0, a signal 130.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { globSync } from 'tinyglobby';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENUM_FIELDS, SCENE_FIELDS } from '../../src/scene/vocabulary.js';
import { assertNoSecrets, BIN, cliEnv, registerSecret, ROOT, tempDir } from '../helpers/cli.js';
import { connectMcp, textOf, type McpSession } from '../helpers/mcp.js';
import { answerJson, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { startForwardProxy } from '../helpers/proxy.js';
import { KEYS, ptyAvailable, spawnInPty } from '../helpers/pty.js';
import { API_PATH, jpegInfo, startTestSandbox } from '../helpers/sandbox.js';

type TempDir = ReturnType<typeof tempDir>;

/** The longest side of the picture shown to the assistant (tools.ts). */
const SHOWN_MAX = 1024;

/** `aerial <args>` started by the SDK's client transport in `home`, connected (initialize done). */
function connect(args: string[], home: TempDir, env: Record<string, string> = {}): Promise<McpSession> {
  return connectMcp(args, { configDir: home.path, cwd: home.path, env });
}

/** Every text a result carries, for looking for what must not be there. */
function texts(result: unknown): string {
  return JSON.stringify(result);
}


describe('aerial mcp --sandbox, driven by the SDK client over stdio', () => {
  let home: TempDir;
  let key: string;
  let session: McpSession;
  const results: unknown[] = [];

  beforeAll(async () => {
    home = tempDir('aerial-mcp-');
    // The in-process sandbox keeps its accounts in <config dir>/sandbox: started there first, its default key is known.
    const sandbox = await startTestSandbox({ dataDir: join(home.path, 'sandbox'), keepDataDir: true });
    key = sandbox.key;
    registerSecret(key);
    await sandbox.close();
  });
  afterAll(async () => {
    for (const result of results) assertNoSecrets(texts(result), 'an MCP result');
    home.remove();
  });

  it('lists the three tools with schemas from the scene vocabulary, generates, lists and deletes', async () => {
    session = await connect(['mcp', '--sandbox', '--output-dir', 'shots'], home);
    const { client } = session;
    expect(client.getServerVersion()?.name).toBe('aerial');

    const { tools } = await client.listTools();
    results.push(tools);
    const byName = new Map<string, Tool>(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(['delete_image', 'generate_image', 'list_images']);
    const generate = byName.get('generate_image')!;
    expect(generate.description).toMatch(/credits/);
    const properties = generate.inputSchema.properties as Record<string, { enum?: string[]; minimum?: number; maximum?: number; type?: string }>;
    for (const field of ENUM_FIELDS) expect(properties[field]?.enum, field).toEqual([...SCENE_FIELDS[field].values]);
    expect([properties.lat?.minimum, properties.lat?.maximum]).toEqual([...SCENE_FIELDS.lat.range]);
    expect(properties.tags?.type).toBe('array');
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['lat', 'lng', 'at', 'includeContext', 'saveImage', 'prompt', 'output', 'force', 'metadata']));
    expect(byName.get('delete_image')!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get('list_images')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(generate.annotations?.readOnlyHint).toBe(false);

    const made = (await client.callTool({
      name: 'generate_image',
      arguments: { lat: 48.8584, lng: 2.2945, resolution: 'UHD', bearing: 'NorthEast', tags: ['mcp'] },
    })) as CallToolResult;
    results.push(made);
    expect(made.isError, textOf(made)).toBeFalsy();
    const image = made.content.find((item) => item.type === 'image') as { data: string; mimeType: string };
    expect(image.mimeType).toBe('image/jpeg');
    const shown = Buffer.from(image.data, 'base64');
    const shownInfo = jpegInfo(shown);
    expect(Math.max(shownInfo.width, shownInfo.height)).toBe(SHOWN_MAX);
    const { file, id, bytes } = made.structuredContent as { file: string; id: string; bytes: number };
    expect(file.startsWith(join(home.path, 'shots', 'aerial-48.8584_2.2945-'))).toBe(true);
    expect(textOf(made)).toContain(file);
    expect(textOf(made)).toContain(id);
    const saved = readFileSync(file);
    expect(saved.length).toBe(bytes);
    const savedInfo = jpegInfo(saved);
    expect(Math.max(savedInfo.width, savedInfo.height)).toBeGreaterThan(SHOWN_MAX);
    // What is shown is the saved picture, scaled: the same shape.
    expect(shownInfo.width / shownInfo.height).toBeCloseTo(savedInfo.width / savedInfo.height, 2);

    const listed = (await client.callTool({ name: 'list_images', arguments: { size: 10, sort: ['createdAt,desc'] } })) as CallToolResult;
    results.push(listed);
    expect(listed.isError, textOf(listed)).toBeFalsy();
    const page = listed.structuredContent as { content: Array<{ id: string; url: string; resolution: string; coordinates: { latitude: number; longitude: number } }> };
    const record = page.content.find((item) => item.id === id)!;
    expect(record).toMatchObject({ resolution: 'UHD', coordinates: { latitude: 48.8584, longitude: 2.2945 } });
    expect(textOf(listed)).toContain(id);
    // The file holds the sandbox's picture: the same pixels as the image its history serves.
    const served = Buffer.from(await (await fetch(record.url)).arrayBuffer());
    expect(saved.length).toBeGreaterThan(served.length); // with the metadata generate writes too
    const [mine, theirs] = await Promise.all([saved, served].map((bytes) => sharp(bytes).raw().toBuffer()));
    expect(mine!.equals(theirs!)).toBe(true);

    const deleted = (await client.callTool({ name: 'delete_image', arguments: { id: id.slice(0, 8) } })) as CallToolResult;
    results.push(deleted);
    expect(deleted.isError, textOf(deleted)).toBeFalsy();
    expect(textOf(deleted)).toContain(id);
    const after = (await client.callTool({ name: 'list_images', arguments: {} })) as CallToolResult;
    results.push(after);
    expect((after.structuredContent as { content: Array<{ id: string }> }).content.map((item) => item.id)).not.toContain(id);
    // The history lost it; the file stays.
    expect(existsSync(file)).toBe(true);
  });

  it('answers bad arguments and refusals with tool errors that say what is wrong', async () => {
    const { client } = session ?? (await connect(['mcp', '--sandbox', '--output-dir', 'shots'], home));
    const wrongEnum = (await client.callTool({ name: 'generate_image', arguments: { lat: 1, lng: 2, zoom: 'Closer' } })) as CallToolResult;
    results.push(wrongEnum);
    expect(wrongEnum.isError).toBe(true);
    expect(textOf(wrongEnum)).toMatch(/zoom/);
    expect(textOf(wrongEnum)).toMatch(/ExtraLow/);

    const noPlace = (await client.callTool({ name: 'generate_image', arguments: { resolution: 'HD' } })) as CallToolResult;
    results.push(noPlace);
    expect(noPlace.isError).toBe(true);
    expect(textOf(noPlace)).toBe('lat is required (or at LAT,LNG or a place name)');

    const both = (await client.callTool({ name: 'generate_image', arguments: { at: '48.85,2.29', lat: 48.85 } })) as CallToolResult;
    results.push(both);
    expect(textOf(both)).toBe('at cannot be combined with lat/lng');

    const first = (await client.callTool({ name: 'generate_image', arguments: { at: '10,20', resolution: 'HD', output: 'same.jpg' } })) as CallToolResult;
    results.push(first);
    expect(first.isError, textOf(first)).toBeFalsy();
    const again = (await client.callTool({ name: 'generate_image', arguments: { at: '10,20', resolution: 'HD', output: 'same.jpg' } })) as CallToolResult;
    results.push(again);
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/same\.jpg already exists; this server replaces no file \(its user did not start it with --allow-overwrite\): choose another output name/);

    const missing = (await client.callTool({ name: 'delete_image', arguments: { id: 'ffffffffffff' } })) as CallToolResult;
    results.push(missing);
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^NotFound — image ffffffffffff not found in your history/);

    const badSort = (await client.callTool({ name: 'list_images', arguments: { sort: ['createdAt;desc'] } })) as CallToolResult;
    results.push(badSort);
    expect(badSort.isError).toBe(true);
  });

  it('writes nothing but the protocol on stdout, and its notices on stderr', () => {
    // The SDK client fails on any stdout line that is not a JSON-RPC message; it met none. stderr said where images go.
    expect(session.stderr()).toContain(`images are saved in ${join(home.path, 'shots')}`);
    assertNoSecrets(session.stderr(), 'the stderr of aerial mcp');
  });
});

describe('aerial mcp against a server of the test\'s own', () => {
  let server: HostileServer;
  let home: TempDir;
  const KEY = 'sk-mcp-echoed-0123456789abcdef';
  beforeAll(async () => {
    registerSecret(KEY);
    server = await startHostileServer();
    home = tempDir('aerial-mcp-hostile-');
  });
  afterAll(async () => {
    await server.close();
    home.remove();
  });

  it('keeps the key out of tool errors and results, in every form the service repeats it', async () => {
    server.respond(answerJson(402, { error: 'InsufficientCredits', message: `key ${KEY} (${Buffer.from(KEY).toString('base64')}) has no credits left` }));
    const { client, stderr } = await connect(['mcp', '--verbose'], home, { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY });
    const result = (await client.callTool({ name: 'generate_image', arguments: { lat: 1, lng: 2, output: 'x.jpg' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^InsufficientCredits — key \*\*\* \(\*\*\*\) has no credits left/);
    assertNoSecrets(texts(result), 'a tool error');
    expect(server.requests[0]!.headers['x-api-key']).toBe(KEY);

    server.respond(answerJson(200, { content: [{ id: 'abcd1234', url: `${server.url}/i?k=${KEY}`, resolution: 'HD', createdAt: '2030-01-01T00:00:00Z', coordinates: { latitude: 1, longitude: 2 } }], totalElements: 1, totalPages: 1, page: 0, size: 20 }));
    const listed = (await client.callTool({ name: 'list_images', arguments: {} })) as CallToolResult;
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(textOf(listed)).toContain('abcd1234');
    assertNoSecrets(texts(listed), 'a tool result');
    assertNoSecrets(stderr(), 'the stderr of aerial mcp --verbose');

    // Bad input is refused before anything is sent.
    server.reset();
    for (const args of [{ lat: 1, lng: 2, zoom: 'Closer' }, { lat: 91, lng: 2 }, { at: 'Springfield' }, { at: '1,2,3' }, { lat: 1, lng: 2, prompt: '   ' }]) {
      const refused = (await client.callTool({ name: 'generate_image', arguments: args })) as CallToolResult;
      expect(refused.isError, JSON.stringify(args)).toBe(true);
    }
    expect(server.requests).toEqual([]);
  });

  it('takes the service and key from --profile, as every command does', async () => {
    const profiled = tempDir('aerial-mcp-profile-');
    try {
      writeFileSync(join(profiled.path, 'config.json'), JSON.stringify({ profiles: { default: {}, work: { baseUrl: server.url, apiKey: KEY } } }), { mode: 0o600 });
      server.reset();
      server.respond(answerJson(200, { content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 }));
      const { client } = await connect(['--profile', 'work', 'mcp'], profiled);
      const listed = (await client.callTool({ name: 'list_images', arguments: { page: 2, size: 5 } })) as CallToolResult;
      await client.close();
      expect(listed.isError, textOf(listed)).toBeFalsy();
      expect(server.requests.map((request) => [request.url, request.headers['x-api-key']])).toEqual([[expect.stringMatching(/\?page=2&size=5$/), KEY]]);
    } finally {
      profiled.remove();
    }
  });

  it('sends its requests through the proxy the environment names', async () => {
    const forward = await startForwardProxy();
    try {
      server.reset();
      server.respond(answerJson(200, { content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 }));
      const { client } = await connect(['mcp'], home, { AERIAL_BASE_URL: server.url, AERIAL_API_KEY: KEY, HTTP_PROXY: forward.url });
      const listed = (await client.callTool({ name: 'list_images', arguments: {} })) as CallToolResult;
      await client.close();
      expect(listed.isError, textOf(listed)).toBeFalsy();
      expect(forward.requests()).toEqual([{ method: 'GET', target: `${server.url}${API_PATH}` }]);
    } finally {
      await forward.close();
    }
  });

  it('refuses to start without a key, on stderr with exit 3, before any message', async () => {
    const result = await execa(process.execPath, [BIN, 'mcp'], { env: cliEnv(home.path, { AERIAL_BASE_URL: server.url }), extendEnv: false, reject: false, input: '' });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: no API key/);
  });
});

describe('aerial mcp ends', () => {
  let home: TempDir;
  beforeAll(() => {
    home = tempDir('aerial-mcp-end-');
  });
  afterAll(() => home.remove());

  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sh', version: '1' } } };
  const line = (message: unknown) => `${JSON.stringify(message)}\n`;

  function start() {
    const child = execa(process.execPath, [BIN, 'mcp', '--sandbox'], { env: cliEnv(home.path), extendEnv: false, cwd: home.path, reject: false, stdin: 'pipe', timeout: 60_000 });
    let stdout = '';
    const answers: Array<{ id?: number; result?: Record<string, unknown> }> = [];
    const waiting: Array<() => void> = [];
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const lines = stdout.split('\n');
      stdout = lines.pop()!;
      for (const text of lines) answers.push(JSON.parse(text));
      for (const wake of waiting.splice(0)) wake();
    });
    const answered = async (id: number) => {
      while (!answers.some((answer) => answer.id === id)) await new Promise<void>((resolve) => waiting.push(resolve));
      return answers.find((answer) => answer.id === id)!;
    };
    return { child, answers, answered };
  }

  it('with exit 0 when the client closes stdin, once what it asked is answered (a generation saved)', async () => {
    const { child, answers, answered } = start();
    child.stdin!.write(line(initialize));
    await answered(1);
    child.stdin!.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    child.stdin!.write(line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'generate_image', arguments: { lat: 3, lng: 4, resolution: 'HD', output: 'last.jpg' } } }));
    child.stdin!.end();
    const result = await child;
    expect(result.exitCode, result.stderr).toBe(0);
    const call = answers.find((answer) => answer.id === 2);
    expect(call?.result?.isError).toBeFalsy();
    expect(jpegInfo(readFileSync(join(home.path, 'last.jpg'))).width).toBeGreaterThan(0);
  });

  it.runIf(ptyAvailable())('says on a terminal what it is for, and stops on Ctrl-C with 130', async () => {
    const session = spawnInPty(['mcp', '--sandbox'], { configDir: home.path, cwd: home.path });
    await session.waitFor(/stdin is a terminal: an assistant's MCP client starts this command/, 30_000);
    session.write(KEYS.ctrlC);
    expect((await session.exited).exitCode).toBe(130);
  });

  it('refuses an --output-dir that is a file, with exit 2 before serving', async () => {
    writeFileSync(join(home.path, 'a-file'), '');
    const result = await execa(process.execPath, [BIN, 'mcp', '--sandbox', '--output-dir', 'a-file'], { env: cliEnv(home.path), extendEnv: false, cwd: home.path, reject: false, input: '' });
    expect([result.exitCode, result.stdout, result.stderr]).toEqual([2, '', 'error: --output-dir a-file is not a directory']);
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('with exit 130 on %s, at once', async (signal) => {
    const { child, answered } = start();
    child.stdin!.write(line(initialize));
    await answered(1);
    child.kill(signal);
    const result = await child;
    expect(result.exitCode, result.stderr).toBe(130);
    expect(result.stdout.split('\n').filter(Boolean).every((text) => JSON.parse(text).jsonrpc === '2.0')).toBe(true);
  });
});

describe('the setup of each client in docs/commands/mcp.md', () => {
  const page = readFileSync(join(ROOT, 'docs', 'commands', 'mcp.md'), 'utf8');
  /** Each ```json block, under the heading of the client it is for. */
  const snippets = [...page.matchAll(/^### (.+)\n[\s\S]*?^```json\n([\s\S]*?)^```$/gm)].map((match) => ({ client: match[1]!, text: match[2]! }));
  let home: TempDir;
  beforeAll(() => {
    home = tempDir('aerial-mcp-docs-');
    // `--profile work` in a snippet names a profile of the reader's; here it points at nothing but exists.
    writeFileSync(join(home.path, 'config.json'), JSON.stringify({ profiles: { default: {}, work: {} } }), { mode: 0o600 });
  });
  afterAll(() => home.remove());

  it('is there for Claude Desktop, Claude Code, VS Code and Cursor', () => {
    expect(snippets.map((snippet) => snippet.client)).toEqual(['Claude Desktop', 'Claude Code', 'VS Code', 'Cursor']);
  });

  it.each(['Claude Desktop', 'Claude Code', 'VS Code', 'Cursor'])('for %s is JSON that starts a server listing the tools (with --sandbox)', async (name) => {
    const snippet = snippets.find((candidate) => candidate.client === name)!;
    const config = JSON.parse(snippet.text) as { mcpServers?: Record<string, ServerEntry>; servers?: Record<string, ServerEntry> };
    const entry = (config.mcpServers ?? config.servers)!.aerial!;
    expect(entry.command).toBe('aerial');
    expect(entry.args).toContain('mcp');
    // Paths of the reader's own made into the test's, as the client would fill in ${workspaceFolder}.
    const args = entry.args.map((arg) => arg.replace('${workspaceFolder}', home.path).replace(/^\/Users\/you\//, `${home.path}/`));
    const { client } = await connect([...args, '--sandbox'], home);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['delete_image', 'generate_image', 'list_images']);
  });
});

interface ServerEntry {
  command: string;
  args: string[];
}

/** A file of the bundle that holds the MCP SDK's server. */
const holdsSdk = (file: string) => readFileSync(file, 'utf8').includes('StdioServerTransport');

describe('the MCP SDK', () => {
  it('is not among what the program imports as it starts: only aerial mcp reaches it, lazily', () => {
    // The bundle files dist/cli.js imports statically, and those they import in turn.
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:^|[;}\s])import\s*(?:[\w*{}\s,$]+from\s*)?['"](\.[^'"]+)['"]/g)) visit(resolve(dirname(file), match[1]!));
    };
    visit(join(ROOT, 'dist', 'cli.js'));
    expect([...seen].filter(holdsSdk)).toEqual([]);
    // It is in the bundle, in a file of its own that a dynamic import reaches.
    expect(globSync('dist/chunks/*.js', { cwd: ROOT, absolute: true }).filter(holdsSdk)).toHaveLength(1);
  });

  /** Node 22.15 and later tell a preload which files it loads (module.registerHooks). */
  const hasLoadHooks = typeof (module as { registerHooks?: unknown }).registerHooks === 'function';

  it.runIf(hasLoadHooks)('is loaded by aerial mcp, and not by generate, list or config path', async () => {
    const home = tempDir('aerial-mcp-loads-');
    try {
      const report = join(home.path, 'loaded.json');
      const preload = join(home.path, 'preload.cjs');
      writeFileSync(
        preload,
        `const { registerHooks } = require('node:module');
        const loaded = [];
        registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
        process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(loaded.filter((url) => url.includes('/dist/')))));`,
      );
      const sdkFilesLoadedBy = async (args: string[], input?: string) => {
        const result = await execa(process.execPath, ['--require', preload, BIN, ...args], { env: cliEnv(home.path), extendEnv: false, cwd: home.path, reject: false, input: input ?? '' });
        expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0);
        return (JSON.parse(readFileSync(report, 'utf8')) as string[]).filter((url) => holdsSdk(new URL(url).pathname)).length;
      };
      expect(await sdkFilesLoadedBy(['mcp', '--sandbox'], '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')).toBeGreaterThan(0);
      expect(await sdkFilesLoadedBy(['generate', '--sandbox', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', 'g.jpg'])).toBe(0);
      expect(await sdkFilesLoadedBy(['list', '--sandbox', '--json'])).toBe(0);
      expect(await sdkFilesLoadedBy(['config', 'path'])).toBe(0);
    } finally {
      home.remove();
    }
  });
});
