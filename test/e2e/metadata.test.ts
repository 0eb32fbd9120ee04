// The metadata of every JPEG the CLI writes, checked by readers nobody here
// wrote: `exiftool -validate` (no warning but [minor] ones) and exifr. Each
// command that saves an image is run against the sandbox as a user runs it:
// generate, generate-async --listen, batch (sync and --async) and export.
// With --no-metadata, each writes the bytes exactly as the service serves them
// (compared with the images downloaded here, by plain fetch).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import exifr from 'exifr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { available, command } from '../helpers/system-tools.js';

const exiftool = command('exiftool', ['-ver'], 'apt-get install libimage-exiftool-perl');
const AI_SOURCE_TYPE = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';

let sandbox: TestSandbox;
let home: ReturnType<typeof tempDir>;
/** Every image written with its metadata, and every one written with --no-metadata. */
const tagged: string[] = [];
const untouched: string[] = [];

async function aerial(args: string[]): Promise<CliResult> {
  const result = await runCli(args, { configDir: home.path, cwd: home.path, env: sandbox.env(), timeout: 60_000 });
  expect(result.exitCode, `aerial ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result;
}

const jpegsIn = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.jpg'))
    .map((name) => join(dir, name));

/** The images of the account's history as the service serves them: listed, then fetched with nothing of the CLI. */
async function servedImages(): Promise<Map<string, { record: Record<string, unknown>; bytes: Buffer }>> {
  const page = (await (await fetch(`${sandbox.api()}?size=100`, { headers: { 'x-api-key': sandbox.key } })).json()) as { content: Array<Record<string, unknown>> };
  const served = new Map<string, { record: Record<string, unknown>; bytes: Buffer }>();
  for (const record of page.content) {
    const bytes = Buffer.from(await (await fetch(String(record.url))).arrayBuffer());
    served.set(String(record.id), { record, bytes });
  }
  return served;
}

const SCENE = ['--lat', '-33.8568', '--lng', '151.2153', '--resolution', 'HD', '--aspect-ratio', 'Square', '--bearing', 'SW'];

beforeAll(async () => {
  sandbox = await startTestSandbox({ credits: 1000 });
  home = tempDir('aerial-metadata-');
  await aerial(['generate', ...SCENE, '--tag', 'opera house', '--prompt', 'crisp & "clear"', '-o', 'generate.jpg']);
  await aerial(['generate', ...SCENE, '--no-metadata', '-o', 'generate-raw.jpg']);
  const listen = ['generate-async', ...SCENE, '--listen', '--listen-host', '127.0.0.1', '--timeout', '30s'];
  await aerial([...listen, '-o', 'async.jpg']);
  await aerial([...listen, '--no-metadata', '-o', 'async-raw.jpg']);
  writeFileSync(join(home.path, 'rows.csv'), 'lat,lng,resolution,aspect_ratio,bearing\n40.6892,-74.0445,HD,Square,E\n64.1466,-21.9426,HD,Portrait,N\n');
  await aerial(['batch', 'rows.csv', '--output-template', 'batch/{row}.jpg', '--manifest', 'batch.jsonl']);
  await aerial(['batch', 'rows.csv', '--async', '--output-template', 'batch-async/{row}.jpg', '--manifest', 'batch-async.jsonl']);
  await aerial(['batch', 'rows.csv', '--no-metadata', '--output-template', 'batch-raw/{row}.jpg', '--manifest', 'batch-raw.jsonl']);
  await aerial(['export', 'backup']);
  await aerial(['export', 'backup-raw', '--no-metadata']);
  tagged.push(...['generate.jpg', 'async.jpg'].map((name) => join(home.path, name)));
  for (const dir of ['batch', 'batch-async', 'backup']) tagged.push(...jpegsIn(join(home.path, dir)));
  untouched.push(...['generate-raw.jpg', 'async-raw.jpg'].map((name) => join(home.path, name)));
  for (const dir of ['batch-raw', 'backup-raw']) untouched.push(...jpegsIn(join(home.path, dir)));
}, 240_000);

afterAll(async () => {
  await sandbox?.close();
  home?.remove();
});

describe('metadata of saved images', () => {
  it.skipIf(!available(exiftool))('every image written with metadata passes exiftool -validate with no warning but minor ones', () => {
    // generate, generate-async, 2 batch rows, 2 batch --async rows, and the export of all 10 images generated.
    expect(tagged).toHaveLength(16);
    const reports = JSON.parse(execFileSync('exiftool', ['-json', '-validate', '-warning', '-error', '-a', ...tagged], { encoding: 'utf8' })) as Array<{
      SourceFile: string;
      Validate?: string;
      Warning?: string | string[];
      Error?: string;
    }>;
    expect(reports).toHaveLength(tagged.length);
    for (const report of reports) {
      const warnings = [report.Warning ?? []].flat().filter((warning) => !warning.startsWith('[minor]'));
      expect({ file: report.SourceFile, warnings, error: report.Error }).toEqual({ file: report.SourceFile, warnings: [], error: undefined });
      expect(report.Validate, report.SourceFile).toMatch(/^(OK|\d+ Warnings? \(all minor\))$/);
    }
  });

  it.skipIf(!available(exiftool))('exiftool reads what each image says: its place, size, time and the AI-generated marking', () => {
    const [report] = JSON.parse(execFileSync('exiftool', ['-json', '-n', '-G1', join(home.path, 'generate.jpg')], { encoding: 'utf8' })) as Array<Record<string, unknown>>;
    expect(report).toMatchObject({
      'GPS:GPSLatitudeRef': 'S',
      'GPS:GPSLongitudeRef': 'E',
      'GPS:GPSImgDirection': 225,
      'ExifIFD:ExifImageWidth': 720,
      'ExifIFD:ExifImageHeight': 720,
      'ExifIFD:ColorSpace': 1,
      'ExifIFD:ExifVersion': '0232',
      'XMP-iptcExt:DigitalSourceType': AI_SOURCE_TYPE,
      'XMP-dc:Subject': 'opera house',
    });
    expect(report['GPS:GPSLatitude']).toBeCloseTo(33.8568, 6);
    expect(String(report['ExifIFD:UserComment'])).toMatch(/^AI-generated by GenAerial \(not a photograph\): lat=-33\.8568 lng=151\.2153 /);
    expect(String(report['XMP-dc:Description'])).toMatch(/ prompt: crisp & "clear"$/);
  });

  it('export writes the GPS and AI-generated marking generate writes, from the listing of each image', async () => {
    const served = await servedImages();
    expect(served.size).toBe(10);
    for (const [id, { record }] of served) {
      const file = join(home.path, 'backup', `${id}.jpg`);
      const tags = await exifr.parse(readFileSync(file), { tiff: true, exif: true, gps: true, xmp: true } as never);
      const { latitude, longitude } = record.coordinates as { latitude: number; longitude: number };
      expect(tags.latitude).toBeCloseTo(latitude, 6);
      expect(tags.longitude).toBeCloseTo(longitude, 6);
      expect(tags.DigitalSourceType).toBe(AI_SOURCE_TYPE);
      expect(tags.ImageDescription).toMatch(new RegExp(`^AI-generated by GenAerial \\(not a photograph\\): lat=${latitude} lng=${longitude} resolution=HD `));
      // The listing's time of creation, not the time of the backup.
      expect((tags.DateTimeOriginal as Date).getTime()).toBe(Math.floor(Date.parse(String(record.createdAt)) / 1000) * 1000);
    }
    // The image generate saved and its exported copy describe the same scene the same way.
    const generated = await exifr.parse(readFileSync(join(home.path, 'generate.jpg')), { tiff: true, gps: true, xmp: true } as never);
    const copies = await Promise.all([...served.keys()].map((id) => exifr.parse(readFileSync(join(home.path, 'backup', `${id}.jpg`)), { tiff: true, gps: true, xmp: true } as never)));
    // (Four images share its scene; the one with its tag and prompt is its copy.)
    const copy = copies.find((tags) => tags.subject === 'opera house');
    expect(copy).toBeDefined();
    for (const tag of ['ImageDescription', 'GPSLatitude', 'GPSLongitude', 'GPSImgDirection', 'DigitalSourceType', 'description']) {
      expect(copy[tag], tag).toEqual(generated[tag]);
    }
  });

  it('--no-metadata writes the bytes exactly as served, for every command', async () => {
    expect(untouched).toHaveLength(2 + 2 + 10);
    const served = [...(await servedImages()).values()].map((image) => image.bytes);
    for (const file of untouched) {
      const bytes = readFileSync(file);
      expect(served.some((image) => image.equals(bytes)), file).toBe(true);
      expect(await exifr.parse(bytes, { tiff: true, xmp: true } as never)).toBeUndefined();
    }
    // Every exported copy is byte for byte the served image.
    for (const [id, { bytes }] of await servedImages()) expect(readFileSync(join(home.path, 'backup-raw', `${id}.jpg`)).equals(bytes), id).toBe(true);
  });
});
