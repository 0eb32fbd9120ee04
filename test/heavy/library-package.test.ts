// The library as users get it (docs/library.md): the packed tarball installed
// into a fresh project beside TypeScript, a program written against
// 'aerial' and 'aerial/sandbox' type-checked under --strict and run on each
// Node line users run, the manual's TypeScript examples type-checked and run
// against a sandbox, a wrong scene value refused by the compiler on its line,
// the package's exports held to the supported list, and `import 'aerial'`
// watched as it loads: none of the sandbox, no sharp.
import { execa } from 'execa';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_LINES, nodeLines } from '../../scripts/node-lines.mjs';
import { cliEnv, registerSecret, ROOT, tempDir } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const work = tempDir('aerial-library-');
const project = join(work.path, 'project');
// One call for every line: each npm install into the cache leaves only what it was asked for.
const lines = nodeLines(NODE_LINES);
const node24 = lines.find(({ line }) => line === '24');
const env = cliEnv(join(work.path, 'config'), { HOME: work.path });

/** What the package exports, and nothing else: the supported surface (src/library/index.ts, sandbox.ts). */
const EXPORTS = {
  aerial: [
    'ANGLES',
    'ASPECT_RATIOS',
    'AbortError',
    'ApiError',
    'AsyncGenerationFailedError',
    'BEARINGS',
    'BadResponseError',
    'CallbackListener',
    'CallbackTimeoutError',
    'CorruptImageError',
    'DAYTIMES',
    'EPOCHS',
    'FileError',
    'Forbidden',
    'ForbiddenDestinationError',
    'GenAerial',
    'GenerationFailedError',
    'ImageUrlRefusedError',
    'InsufficientCredits',
    'InvalidInputError',
    'MAX_TAGS',
    'MaybeChargedError',
    'NetworkError',
    'NotFound',
    'PagingError',
    'RESOLUTIONS',
    'RateLimited',
    'RequestError',
    'SCENE_DEFAULTS',
    'ServerError',
    'TimeoutError',
    'Unauthorized',
    'ValidationFailed',
    'WEATHERS',
    'ZOOMS',
  ],
  'aerial/sandbox': ['startSandbox'],
};

const devVersion = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** The ```ts blocks of a page of the manual, with the line each starts on. */
function typeScriptBlocks(page: string): Array<{ line: number; code: string }> {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: Array<{ line: number; code: string }> = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== '```ts') continue;
    let end = index + 1;
    while (lines[end] !== '```') end++;
    blocks.push({ line: index + 2, code: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return blocks;
}

const CONSUMER = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenAerial, InvalidInputError, type ImageRequest } from 'aerial';
import { startSandbox } from 'aerial/sandbox';

test('generates, lists, deletes, and is refused with a typed error before sending', async () => {
  const sandbox = await startSandbox({ credits: 10 });
  const client = new GenAerial({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  try {
    const request: ImageRequest = { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD', bearing: 'NorthEast' };
    const jpeg: Uint8Array = await client.generate(request);
    assert.deepEqual([...jpeg.subarray(0, 2)], [0xff, 0xd8]);
    const page = await client.list({ page: 0, size: 10 });
    assert.equal(page.totalElements, 1);
    const ids: string[] = [];
    for await (const image of client.images()) ids.push(image.id);
    assert.deepEqual(ids, [page.content[0]!.id]);
    await client.delete(ids[0]!);
    assert.equal((await client.list()).totalElements, 0);
    await assert.rejects(client.generate({ coordinates: { lat: 95, lng: 0 } }), (error: unknown) => {
      assert.ok(error instanceof InvalidInputError);
      assert.equal(error.code, 'InvalidInput');
      assert.equal(error.message, 'coordinates.lat must be between -90 and 90; got 95');
      return true;
    });
    // The refused request was never sent.
    assert.deepEqual(sandbox.requests().map((entry) => [entry.method, entry.status]), [['POST', 200], ['GET', 200], ['GET', 200], ['DELETE', 200], ['GET', 200]]);
    assert.equal(await sandbox.credits(), 9);
  } finally {
    await client.close();
    await sandbox.close();
  }
});
`;

const WRONG_ENUM = `import { GenAerial } from 'aerial';

const client = new GenAerial();
await client.generate({ coordinates: { lat: 0, lng: 0 }, weather: 'Foggy' });
`;

/** Records every module Node loads (a module hook), then imports argv[2] and prints their URLs. */
const WATCH_LOADS = `import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
await import(process.argv[2]);
console.log(JSON.stringify(loaded));
`;

const docs = [...typeScriptBlocks('docs/library.md').map((block) => ({ ...block, page: 'docs/library.md' })), ...typeScriptBlocks('README.md').map((block) => ({ ...block, page: 'README.md' }))];
const exampleFile = (index: number) => `example-${index + 1}.ts`;

beforeAll(async () => {
  const packed = await execa('npm', ['pack', '--json', '--pack-destination', work.path], { cwd: ROOT });
  const tarball = join(work.path, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'listing-pages', private: true, type: 'module' }));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out', rootDir: 'src', types: ['node'], skipLibCheck: false },
      include: ['src'],
    }),
  );
  writeFileSync(join(project, 'src', 'consumer.test.ts'), CONSUMER);
  docs.forEach((block, index) => writeFileSync(join(project, 'src', exampleFile(index)), `${block.code}\nexport {};\n`));
  writeFileSync(join(project, 'watch-loads.mjs'), WATCH_LOADS);
  await execa('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `typescript@${devVersion('typescript')}`, `@types/node@${devVersion('@types/node')}`], { cwd: project, env });
}, 300_000);
afterAll(() => work.remove());

describe('the library, installed from the packed tarball', () => {
  it('type-checks under --strict, the manual and the README examples included', async () => {
    expect(docs.length).toBeGreaterThanOrEqual(8);
    const tsc = await execa('npx', ['tsc', '-p', '.'], { cwd: project, env, reject: false, all: true });
    expect(tsc.all).toBe('');
    expect(tsc.exitCode).toBe(0);
  }, 120_000);

  it('refuses a scene value the vocabulary does not have, on its line', async () => {
    writeFileSync(join(project, 'wrong-enum.ts'), WRONG_ENUM);
    const tsc = await execa('npx', ['tsc', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--types', 'node', 'wrong-enum.ts'], { cwd: project, env, reject: false, all: true });
    expect(tsc.exitCode).not.toBe(0);
    expect(tsc.all).toMatch(/^wrong-enum\.ts\(4,\d+\): error TS2322: Type '"Foggy"' is not assignable to type '"Sunny" \| "Rainy" \| "Cloudy" \| "GoldenHour" \| "Snow"/m);
    expect(tsc.all!.split('\n').filter((line) => /error TS/.test(line))).toHaveLength(1);
  }, 120_000);

  it('exports what is supported and nothing else', async () => {
    for (const [specifier, names] of Object.entries(EXPORTS)) {
      const { stdout } = await execa(node24!.node, ['--input-type=module', '-e', `console.log(JSON.stringify(Object.keys(await import(${JSON.stringify(specifier)})).sort()))`], { cwd: project, env });
      expect(JSON.parse(stdout), specifier).toEqual([...names].sort());
    }
    // The same from CommonJS, where Node loads ES modules with require().
    const required = await execa(node24!.node, ['-e', "console.log(JSON.stringify([Object.keys(require('aerial')).sort(), Object.keys(require('aerial/sandbox'))]))"], { cwd: project, env });
    expect(JSON.parse(required.stdout)).toEqual([[...EXPORTS.aerial].sort(), EXPORTS['aerial/sandbox']]);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'aerial', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(Object.keys(manifest.exports)).toEqual(['.', './sandbox', './package.json']);
    // Nothing else of the package can be imported.
    const deep = await execa(node24!.node, ['--input-type=module', '-e', "await import('aerial/dist/cli.js')"], { cwd: project, env, reject: false });
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  }, 60_000);

  it("loads neither the sandbox nor sharp on `import 'aerial'`", async () => {
    const loads = async (specifier: string) => {
      const { stdout } = await execa(node24!.node, ['watch-loads.mjs', specifier], { cwd: project, env });
      return (JSON.parse(stdout) as string[]).filter((url) => url.startsWith('file:'));
    };
    const client = await loads('aerial');
    const fixture = await loads('aerial/sandbox');
    expect(client.some((url) => url.endsWith('/node_modules/aerial/dist/index.js'))).toBe(true);
    expect(fixture.some((url) => url.endsWith('/node_modules/aerial/dist/sandbox.js'))).toBe(true);
    // The sandbox's own code (it serves the OpenAPI document) is in what the fixture loads, and in nothing the client loads.
    const serving = (urls: string[]) => urls.filter((url) => readFileSync(new URL(url), 'utf8').includes('openapi.json'));
    expect(serving(fixture).length).toBeGreaterThan(0);
    expect(serving(client)).toEqual([]);
    expect(client.filter((url) => /\/(sharp|@img)\/|sandbox/.test(url))).toEqual([]);
    expect(client.filter((url) => !url.includes('/node_modules/aerial/dist/'))).toEqual([]);
  }, 60_000);

  describe.each(lines)('on Node $line', ({ node }) => {
    it('generates, lists, deletes and catches a typed InvalidInputError, against the fixture, under node:test', async () => {
      const run = await execa(node, ['--test', '--test-reporter=spec', 'out/consumer.test.js'], { cwd: project, env, reject: false, all: true });
      expect(run.all).toMatch(/pass 1/);
      expect(run.exitCode, run.all).toBe(0);
    }, 120_000);
  });

  describe('the examples of the manual and the README, run', () => {
    let sandbox: TestSandbox;
    beforeAll(async () => {
      sandbox = await startTestSandbox();
      registerSecret(sandbox.key);
    });
    afterAll(() => sandbox.close());

    it.each(docs.map((block, index) => ({ ...block, file: exampleFile(index) })))('$page:$line', async ({ file, code }) => {
      const cwd = tempDir('aerial-library-example-');
      try {
        const script = join(project, 'out', file.replace(/\.ts$/, '.js'));
        const args = code.includes("from 'node:test'") ? ['--test', script] : [script];
        const run = await execa(node24!.node, args, { cwd: cwd.path, env: { ...env, ...sandbox.env() }, reject: false, all: true });
        expect(run.exitCode, run.all).toBe(0);
      } finally {
        cwd.remove();
      }
    }, 120_000);
  });
});
