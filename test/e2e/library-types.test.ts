// The library's published types (dist/index.d.ts, as the build bundles them),
// type-checked under --strict as a program would: a request written `as const`
// or with readonly arrays is taken, a record's resolution and an ApiError's code
// narrow to the spec's values, the runtime lists of values type as theirs, the
// new options and errors are there, and a value the vocabulary does not have is
// refused on its line. (test/heavy/library-package.test.ts does the same from the
// packed tarball, installed.)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers/cli.js';

const work = tempDir('aerial-library-types-');
// A program in ES modules, as the library's are (top-level await).
writeFileSync(join(work.path, 'package.json'), JSON.stringify({ type: 'module' }));
afterAll(() => work.remove());
const entry = JSON.stringify(join(ROOT, 'dist', 'index.js'));

async function typeCheck(name: string, code: string): Promise<{ exitCode: number; output: string }> {
  writeFileSync(join(work.path, name), code);
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const result = await execa(tsc, ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules', '@types'), name], {
    cwd: work.path,
    reject: false,
    all: true,
  });
  return { exitCode: result.exitCode ?? -1, output: result.all ?? '' };
}

const ACCEPTED = `import {
  GenAerial,
  RESOLUTIONS,
  ZOOMS,
  SCENE_DEFAULTS,
  ApiError,
  AbortError,
  TimeoutError,
  FileError,
  InvalidInputError,
  type ApiErrorCode,
  type ImageRecord,
  type ImageRequest,
  type Resolution,
} from ${entry};

const client = new GenAerial({ timeoutMs: 30_000, deadlineMs: 120_000, retry: { retryUnsafe: false } });

// Written as const: readonly all the way down, tags a readonly tuple.
const request = { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD', zoom: 'High', tags: ['paris', 'tower'] } as const;
await client.generate(request);
await client.generateToFile(request, 'paris.jpg', { overwrite: true, metadata: false, root: 'out', deadlineMs: 60_000 });

const tags: readonly string[] = ['a', 'b'];
const typed: ImageRequest = { coordinates: { lat: 1, lng: 2 }, tags };
await client.generateAsync(typed, { callbackUrl: 'https://example.com/hook' });
await client.list({ sort: ['createdAt,desc'] as const });

// A record's resolution is the union, and narrows.
function shortSide(record: ImageRecord): number {
  switch (record.resolution) {
    case 'HD':
      return 720;
    case 'FHD':
      return 1080;
    case 'UHD':
      return 2160;
  }
}
for await (const image of client.images()) shortSide(image);

// The runtime lists type as the values they hold.
const first: Resolution = RESOLUTIONS[0];
const zoom: (typeof ZOOMS)[number] = 'ExtraHigh';
const fallback: 'FHD' = SCENE_DEFAULTS.resolution;

// An ApiError's code offers the known codes, and takes others.
function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const code: ApiErrorCode = error.code;
    if (code === 'InsufficientCredits') return 'top up';
    return code;
  }
  if (error instanceof TimeoutError || error instanceof AbortError) return error.code;
  if (error instanceof FileError) return error.path ?? error.code;
  if (error instanceof InvalidInputError) return error.message;
  return String(error);
}
const other: ApiErrorCode = 'SomethingNew';
console.log(first, zoom, fallback, other, describe(undefined));
export {};
`;

const REFUSED = `import { GenAerial } from ${entry};

const client = new GenAerial();
await client.generate({ coordinates: { lat: 0, lng: 0 }, resolution: 'XL' });
export {};
`;

describe('the library’s types, built (dist/index.d.ts), under --strict', () => {
  it('take a request written as const, readonly arrays, and narrow records and codes', async () => {
    const { exitCode, output } = await typeCheck('accepted.ts', ACCEPTED);
    expect(output).toBe('');
    expect(exitCode).toBe(0);
  }, 120_000);

  it('refuse a resolution the vocabulary does not have, on its line', async () => {
    const { exitCode, output } = await typeCheck('refused.ts', REFUSED);
    expect(exitCode).not.toBe(0);
    expect(output).toMatch(/^refused\.ts\(4,\d+\): error TS2322: Type '"XL"' is not assignable to type '"HD" \| "FHD" \| "UHD"/m);
    expect(output.split('\n').filter((line) => /error TS/.test(line))).toHaveLength(1);
  }, 120_000);
});
