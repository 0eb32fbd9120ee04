// A resumed batch takes rows an earlier run finished from the manifest, by a
// digest of what each row was planned from, without planning them again:
// the digest, the manifest's index of it (from the bytes and from
// JSON.parse alike), and the file-size lookups on a second thread.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../src/config/config.js';
import { FileSizes, fileSize, NO_FILE, NOT_A_FILE } from '../../../src/batch/file-sizes.js';
import { ManifestIndex, manifestRecords } from '../../../src/batch/manifest.js';
import { scanLine } from '../../../src/batch/manifest-lines.js';
import { RowPlanner, type PlannerOptions } from '../../../src/batch/plan.js';
import { resumeBySize } from '../../../src/batch/resume.js';
import { compileTemplate } from '../../../src/batch/template.js';
import { bundleForNode, projectScratchDir } from '../../sandbox/worker-scripts.js';
import { tempDir } from '../../helpers/cli.js';

const sceneDefaults = resolveSettings({}, {}, {}).sceneDefaults;
const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});
function scratch(): string {
  const dir = tempDir('aerial-recall-');
  dirs.push(dir);
  return dir.path;
}

function planner(overrides: Partial<PlannerOptions> = {}): RowPlanner {
  return new RowPlanner({ header: ['id', 'lat', 'lng'], flags: {}, sceneDefaults, template: compileTemplate('out/{id}.jpg'), cwd: '/ci/workspace', inputDigests: true, ...overrides });
}
const row = (n: number, cells: Record<string, unknown> = { id: `r${n}`, lat: '1', lng: '2' }) => ({ row: n, cells });

describe("a row's input digest", () => {
  it('is the same for the same row planned the same way, and changes with anything its plan is made from', () => {
    const digest = planner().inputDigest(row(1));
    expect(digest).toMatch(/^[0-9a-f]{32}$/);
    expect(planner().inputDigest(row(1))).toBe(digest);
    const others = [
      planner().inputDigest(row(2, { id: 'r1', lat: '1', lng: '2' })),
      planner().inputDigest(row(1, { id: 'r1', lat: '1', lng: '2.0' })),
      planner({ flags: { zoom: 'High' } }).inputDigest(row(1)),
      planner({ sceneDefaults: { ...sceneDefaults, resolution: { value: 'UHD' } } }).inputDigest(row(1)),
      planner({ template: compileTemplate('out/{id}-{zoom}.jpg') }).inputDigest(row(1)),
      planner({ cwd: '/elsewhere' }).inputDigest(row(1)),
      planner({ manifestPath: '/ci/workspace/m.jsonl' }).inputDigest(row(1)),
    ];
    expect(new Set([digest, ...others]).size).toBe(others.length + 1);
  });

  it('comes with a planned row for the manifest, unless the row was renamed to tell it from another', () => {
    const p = planner();
    const draft = p.draft(row(1));
    const planned = p.finish(draft);
    expect(planned.input).toBe(p.inputDigest(row(1)));
    expect(p.targetOf(planned.file!)).toBe(planned.target);
    expect(p.finish(draft, '/ci/workspace/out/r1~2.jpg').input).toBeUndefined();
    expect(planner({ inputDigests: false }).finish(draft).input).toBeUndefined();
  });

  it('leads from a recorded file back to its target, as resolve() does', () => {
    const p = planner({ manifestPath: '/ci/workspace/out/m.jsonl' });
    for (const file of ['a.jpg', 'x/y/z.jpg', '../up.jpg', './a.jpg', 'a//b.jpg', 'a/./b.jpg', 'a/../b.jpg', '/abs/c.jpg', 'ü/☕.jpg']) {
      expect(p.targetOf(file), file).toBe(resolve('/ci/workspace/out', file));
    }
  });
});

const K = '5a48e7b94bb53fbfb71eb60e4d59c4dc';
const D = '00112233445566778899aabbccddeeff';
const E = 'ffeeddccbbaa99887766554433221100';

describe("the manifest's recall of rows by their input digest", () => {
  const lines = [
    `{"row":1,"key":"${K}","status":"started","file":"r1.jpg","time":"t"}`,
    `{"row":1,"key":"${K}","status":"done","file":"r1.jpg","bytes":1234,"attempts":1,"input":"${D}","time":"t"}`,
    `{"row":2,"key":"${E}","status":"done","file":"a \\"q\\" ü.jpg","bytes":5,"input":"${E}"}`,
  ];

  it('reads the digest and the file from the bytes, as JSON.parse reads them', () => {
    const line = lines[1]!;
    const facts = scanLine(Buffer.from(line), 0, Buffer.byteLength(line))!;
    expect(facts.input!.map((w) => w.toString(16).padStart(8, '0')).join('')).toBe(D);
    expect(Buffer.from(line).toString('utf8', facts.file!.start, facts.file!.end)).toBe('r1.jpg');
    // A name with escapes, an upper-case digest or a second digest: left to JSON.parse.
    for (const other of [lines[2]!, line.replace(D, D.toUpperCase()), line.replace('"time"', `"input":"${E}","time"`), line.replace(`"input":"${D}"`, '"input":"12"')]) {
      expect(scanLine(Buffer.from(other), 0, Buffer.byteLength(other)), other).toBeUndefined();
    }
  });

  it('finds a done row by its number and digest with what its key last said, read from the bytes or by JSON.parse alike', async () => {
    const dir = scratch();
    const path = join(dir, 'm.jsonl');
    // Row 1 was started again later and the run died: its key's last word is "started". Row 4's
    // later done record has no digest (written by an older aerial): its earlier one no longer counts.
    writeFileSync(
      path,
      [
        ...lines,
        `{"row":3,"key":"${D}","status":"failed","file":"f.jpg","input":"${K}"}`,
        `{"row":1,"key":"${K}","status":"started","file":"r1.jpg"}`,
        `{"row":4,"key":"${D}","status":"done","file":"g.jpg","bytes":3,"input":"${K}"}`,
        `{"row":4,"key":"${D}","status":"done","file":"g.jpg","bytes":3}`,
        `{"row":5,"key":"${D}","status":"done","file":"h.jpg","bytes":3,"input":"${K}"}`,
      ].join('\n'),
    );
    const scanned = await ManifestIndex.read(path);
    const parsed = new ManifestIndex();
    for await (const record of manifestRecords(path)) parsed.add(record);
    for (const index of [scanned, parsed]) {
      expect(index.recall(1, D)).toEqual({ file: 'r1.jpg', last: { status: 'started', doneBytes: 1234, sent: true } });
      expect(index.recall(2, E)).toEqual({ file: 'a "q" ü.jpg', last: { status: 'done', bytes: 5, doneBytes: 5, sent: true } });
      expect(index.recall(5, K)).toEqual({ file: 'h.jpg', last: { status: 'done', bytes: 3, doneBytes: 3, sent: true } });
      // Another row's digest, a failed row, a digest superseded, rows never seen.
      expect(index.recall(2, D)).toBeUndefined();
      expect(index.recall(3, K)).toBeUndefined();
      expect(index.recall(4, K)).toBeUndefined();
      expect(index.recall(6, K)).toBeUndefined();
      expect(index.recall(1_000_000_000, K)).toBeUndefined();
      expect(index.recall(1, 'nothing')).toBeUndefined();
    }
  });

  it('keeps file names of any length across many rows', () => {
    const index = new ManifestIndex();
    const digest = (i: number) => `b${(i + 7).toString(16).padStart(31, '0')}`;
    const names = Array.from({ length: 5_000 }, (_, i) => `${'d/'.repeat(i % 40)}${'n'.repeat(i % 300)}-${i}.jpg`);
    names.forEach((file, i) => index.add({ row: i + 1, key: (i + 1).toString(16).padStart(32, '0'), status: 'done', file, bytes: i, input: digest(i) }));
    names.forEach((file, i) => expect(index.recall(i + 1, digest(i))).toEqual({ file, last: { status: 'done', bytes: i, doneBytes: i, sent: true } }));
  });
});

describe('file sizes', () => {
  let worker: URL;
  let work: string;
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function files(): { dir: string; paths: string[]; expected: number[] } {
    const dir = scratch();
    const paths: string[] = [];
    const expected: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      const path = join(dir, `f${i}.jpg`);
      if (i % 7 === 0) expected.push(NO_FILE);
      else if (i % 11 === 0) {
        mkdirSync(path);
        expected.push(NOT_A_FILE);
      } else {
        writeFileSync(path, Buffer.alloc(i % 50));
        expected.push(i % 50);
      }
      paths.push(path);
    }
    return { dir, paths, expected };
  }

  async function sizesOf(paths: string[], script: URL | undefined): Promise<Map<number, [string, number]>> {
    const told = new Map<number, [string, number]>();
    const sizes = new FileSizes((tag, path, size) => {
      expect(told.has(tag)).toBe(false);
      told.set(tag, [path, size]);
    }, script);
    paths.forEach((path, i) => sizes.look(i, path));
    await sizes.settled();
    sizes.close();
    return told;
  }

  it('tells each path its size, or that nothing or no regular file is there', () => {
    const { paths, expected } = files();
    expect(paths.map(fileSize)).toEqual(expected);
  });

  it('tells every size once, on a worker thread or, from the sources, on this one', async () => {
    work = projectScratchDir('aerial-file-sizes-');
    worker = await bundleForNode({ file: join(process.cwd(), 'src/batch/file-sizes-worker.ts') }, join(work, 'file-sizes-worker.mjs'));
    const { paths, expected } = files();
    // A path with a NUL names no file, and does not shift the answers of the paths sent with it.
    paths.splice(100, 0, `${paths[101]}\0x`);
    expected.splice(100, 0, NO_FILE);
    for (const script of [worker, undefined]) {
      const told = await sizesOf(paths, script);
      expect(told.size).toBe(paths.length);
      paths.forEach((path, i) => expect(told.get(i)).toEqual([path, expected[i]]));
    }
  });

  it('falls back to this thread when its thread cannot run', async () => {
    work ??= projectScratchDir('aerial-file-sizes-');
    const broken = join(work, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('no thread today');\n");
    const { paths, expected } = files();
    const told = await sizesOf(paths, new URL(`file://${broken}`));
    expect([...told.keys()].sort((a, b) => a - b)).toEqual(paths.map((_, i) => i));
    paths.forEach((path, i) => expect(told.get(i)![1]).toBe(expected[i]));
  });
});

describe('resumeBySize', () => {
  it('takes a done row at the size recorded, and looks at any other case in full', () => {
    const dir = scratch();
    const target = join(dir, 'a.jpg');
    writeFileSync(target, Buffer.from('not a jpeg'));
    expect(resumeBySize(target, { status: 'done', bytes: 10 }, 10, false)).toEqual({ action: 'done', previous: { status: 'done', bytes: 10 }, bytes: 10 });
    expect(resumeBySize(target, { status: 'done', bytes: 9 }, 10, false).action).toBe('conflict');
    expect(resumeBySize(target, { status: 'done', bytes: 9 }, 10, true).action).toBe('pending');
    expect(resumeBySize(join(dir, 'gone.jpg'), { status: 'done', bytes: 9 }, NO_FILE, false)).toMatchObject({ action: 'pending', fileMissing: true });
    expect(resumeBySize(dir, { status: 'done', bytes: 9 }, NOT_A_FILE, false).action).toBe('blocked');
  });
});
