// The package as users get it: `npm pack`, a global install into a temporary
// prefix, and every command run from an unrelated directory, on each Node line
// users run (real Node builds from npm, scripts/node-lines.mjs) and on this
// machine's. The installed `aerial` is found on PATH, as a shell finds it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_LINES, nodeLines } from '../../scripts/node-lines.mjs';
import { cliEnv, registerSecret, ROOT, tempDir } from '../helpers/cli.js';

const work = tempDir('aerial-installed-');
const prefix = join(work.path, 'prefix');
let installLog = '';
let tarball = '';

beforeAll(async () => {
  const packed = await execa('npm', ['pack', '--json', '--pack-destination', work.path], { cwd: ROOT });
  tarball = join(work.path, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  const installed = await execa('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { cwd: work.path, all: true });
  installLog = installed.all ?? '';
}, 240_000);
afterAll(() => work.remove());

/** Sizes of every file under `dir`, added up. */
function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

describe('the packed tarball', () => {
  it('installs with no warning, and holds what users need and nothing of the build', async () => {
    expect(installLog).not.toMatch(/warn/i);
    const { stdout } = await execa('tar', ['tzf', tarball]);
    const files = stdout.split('\n').map((line) => line.replace(/^package\//, ''));
    for (const needed of ['LICENSE', 'README.md', 'bin/aerial.js', 'dist/cli.js', 'dist/index.js', 'dist/index.d.ts', 'dist/sandbox.js', 'dist/sandbox.d.ts', 'docs/library.md', 'dist/THIRD-PARTY-NOTICES.md', 'dist/sandbox-world.bin', 'dist/gazetteer.tsv.gz', 'completions/aerial.bash', 'docs/sandbox.md']) {
      expect(files).toContain(needed);
    }
    expect(files.filter((file) => /^(src|test|scripts|bench)\//.test(file) || file.endsWith('.map') || (file.endsWith('.ts') && !file.endsWith('.d.ts')))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', 'aerial', 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(Object.keys(manifest.scripts)).not.toContain('prepare');
    // Everything else is bundled into dist/.
    expect(Object.keys(manifest.dependencies)).toEqual(['sharp']);
  });

  it('has a README and a manual whose links to files in the package all resolve there', () => {
    const root = join(prefix, 'lib', 'node_modules', 'aerial');
    const pages = ['README.md', ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.md')).map((file) => join('docs', file))];
    expect(pages).toContain(join('docs', 'commands', 'batch.md'));
    const links = pages.flatMap((page) => {
      const text = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
      return [...text.matchAll(/\]\(((?!https?:|#|mailto:)[^)\s]+)\)/g)].map((match) => join(dirname(page), match[1]!.split('#')[0]!));
    });
    expect(links.length).toBeGreaterThan(50);
    expect(links.filter((link) => !existsSync(join(root, link)))).toEqual([]);
  });

  it('is installed at a size the manual states', () => {
    const megabytes = bytesUnder(join(prefix, 'lib', 'node_modules', 'aerial')) / 1e6;
    const stated = /installed, it takes\s+about (\d+) MB/i.exec(readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8'));
    expect(stated, 'docs/performance.md states the installed size').not.toBeNull();
    expect(Math.abs(megabytes - Number(stated![1]))).toBeLessThan(3);
  });
});

/** The major version of the Node at `node`. */
function majorOf(node: string): string {
  return execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim();
}

/**
 * The lines users run (22, 24, 26), this machine's Node, and the Node that
 * AERIAL_TEST_ALSO_NODE names (.ci/run runs this file on Node 24 and names the
 * machine's own there, Node 20, the oldest the package supports): each major once.
 */
const extraNodes = [process.execPath, ...(process.env.AERIAL_TEST_ALSO_NODE ? [process.env.AERIAL_TEST_ALSO_NODE] : [])];
const lines = [...nodeLines(NODE_LINES)];
for (const node of extraNodes) {
  const major = majorOf(node);
  if (!lines.some(({ line }) => line.split(' ')[0] === major)) lines.push({ line: `${major} (${node === process.execPath ? "this machine's" : node})`, node });
}

describe.each(lines)('installed, on Node $line', ({ node }) => {
  const home = tempDir('aerial-installed-home-');
  const cwd = join(home.path, 'elsewhere');
  let sandbox: ChildProcess | undefined;
  let env: Record<string, string | undefined> = {};

  const aerial = (args: string[], input?: string) => execa('aerial', args, { cwd, env, reject: false, timeout: 60_000, input, stdin: input === undefined ? 'ignore' : 'pipe' });

  beforeAll(async () => {
    mkdirSync(cwd, { recursive: true });
    const path = [dirname(node), join(prefix, 'bin'), process.env.PATH].join(delimiter);
    env = cliEnv(join(home.path, 'config'), { PATH: path });
    // The installed package's own sandbox, as a separate process on a free port.
    sandbox = spawn('aerial', ['sandbox', '--port', '0', '--json', '--data-dir', join(home.path, 'sandbox')], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const info = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let text = '';
      sandbox!.once('exit', (code) => reject(new Error(`the sandbox exited early (${code})`)));
      sandbox!.stdout!.on('data', (chunk: Buffer) => {
        text += chunk;
        const line = text.split('\n').find((candidate) => candidate.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { url: string; key: string });
      });
    });
    registerSecret(info.key);
    env = { ...env, AERIAL_BASE_URL: info.url, AERIAL_API_KEY: info.key };
  }, 60_000);
  afterAll(() => {
    sandbox?.kill('SIGTERM');
    home.remove();
  });

  it('runs every command', async () => {
    const version = await aerial(['--version']);
    expect(version.stdout).toBe(`aerial ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version} (node ${(await execa(node, ['--version'])).stdout})`);

    const generated = await aerial(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', 'eiffel.jpg']);
    expect(generated.exitCode, generated.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'eiffel.jpg')).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    // The gazetteer ships in the package: a place by name from the installed copy.
    const named = await aerial(['generate', '--at', 'Paris, FR', '--resolution', 'HD', '--no-save-image', '-o', 'paris.jpg', '--json']);
    expect(named.exitCode, named.stderr).toBe(0);
    expect(named.stderr).toContain("'Paris, FR' is Paris, Île-de-France, FR");
    expect(Math.abs((JSON.parse(named.stdout) as { request: { coordinates: { lat: number } } }).request.coordinates.lat - 48.857)).toBeLessThan(0.2);

    writeFileSync(join(cwd, 'places.csv'), 'lat,lng,name\n40.6892,-74.0445,liberty\n51.5007,-0.1246,westminster\n35.6586,139.7454,tokyo\n');
    const batch = await aerial(['batch', 'places.csv', '--resolution', 'HD', '--output-template', 'out/{name}.jpg', '--report', 'out/report.html', '--json']);
    expect(batch.exitCode, batch.stderr).toBe(0);
    expect(readdirSync(join(cwd, 'out')).filter((file) => /\.(jpg|html)$/.test(file)).sort()).toEqual(['liberty.jpg', 'report.html', 'tokyo.jpg', 'westminster.jpg']);
    const status = await aerial(['batch', 'status', 'places.csv', '--resolution', 'HD', '--output-template', 'out/{name}.jpg', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);

    const listened = await aerial(['generate-async', '--lat', '40.6892', '--lng', '-74.0445', '--resolution', 'HD', '--listen', '-o', 'async.jpg', '--timeout', '60']);
    expect(listened.exitCode, listened.stderr).toBe(0);
    expect(statSync(join(cwd, 'async.jpg')).size).toBeGreaterThan(1000);

    const listed = await aerial(['list', '--json', '--size', '50']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const page = JSON.parse(listed.stdout) as { content: Array<{ id: string }> };
    expect(page.content.length).toBe(5);
    const table = await aerial(['list']);
    expect(table.stdout.split('\n').filter(Boolean).length).toBe(5);

    const exported = await aerial(['export', 'backup', '--json']);
    expect(exported.exitCode, exported.stderr).toBe(0);
    expect(readdirSync(join(cwd, 'backup')).filter((file) => file.endsWith('.jpg')).length).toBe(5);

    const viewed = await aerial(['view', 'eiffel.jpg', '--protocol', 'blocks', '--width', '20']);
    expect(viewed.exitCode, viewed.stderr).toBe(0);
    expect(viewed.stdout.length).toBeGreaterThan(100);

    const deleted = await aerial(['delete', page.content[0]!.id, '--yes']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect((JSON.parse((await aerial(['list', '--json'])).stdout) as { content: unknown[] }).content.length).toBe(4);

    expect((await aerial(['config', 'set', 'defaults.zoom', 'High'])).exitCode).toBe(0);
    expect((await aerial(['config', 'get', 'defaults.zoom'])).stdout).toBe('High');
    expect((await aerial(['completion', 'bash'])).stdout).toContain('complete');
    const help = await aerial(['help', 'batch']);
    expect(help.stdout).toContain('--output-template');

    // The MCP server, bundled SDK and all: a tool call read from stdin is answered before the end of stdin ends it.
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'generate_image', arguments: { lat: 1, lng: 2, resolution: 'HD', output: 'mcp.jpg' } } };
    const served = await aerial(['mcp'], `${JSON.stringify(call)}\n`);
    expect(served.exitCode, served.stderr).toBe(0);
    const answer = JSON.parse(served.stdout) as { result: { content: Array<{ type: string }>; isError?: boolean } };
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.content.map((item) => item.type)).toEqual(['image', 'text']);
    expect(statSync(join(cwd, 'mcp.jpg')).size).toBeGreaterThan(1000);
  }, 180_000);
});
