// Saving a generated image (src/operations/save-image.ts), as every face does,
// against the sandbox over real sockets: the target checked before anything is
// sent, held inside a root when there is one, written through the one image
// path with its metadata, and special targets written into only when the face
// opens them (prepareImageTarget): a FIFO opened once, before anything is sent,
// and let go of when the request fails.
import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { execFileSync } from 'node:child_process';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenAerialClient } from '../../../src/api/client.js';
import { FileError } from '../../../src/api/errors.js';
import { checkImageTarget, prepareImageTarget, saveGeneratedImage, saveImageFromUrl, streamTarget } from '../../../src/operations/save-image.js';
import { validateRequest } from '../../../src/operations/request.js';
import { tempDir } from '../../helpers/cli.js';
import { available, command } from '../../helpers/system-tools.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

let sandbox: TestSandbox;
let client: GenAerialClient;
const dir = tempDir('aerial-save-image-');
const request = validateRequest({ coordinates: { lat: 40.6892, lng: -74.0445 }, resolution: 'HD', tags: ['liberty'] });
const metadata = { software: 'aerial test', redact: (text: string) => text };
const exiftool = command('exiftool', ['-ver'], 'apt-get install libimage-exiftool-perl');

beforeAll(async () => {
  sandbox = await startTestSandbox({ renderThreads: 0 });
  client = new GenAerialClient({ baseUrl: sandbox.url, apiKey: sandbox.key });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  dir.remove();
});

/** What `promise` failed with, or `instead` if it did not fail. */
function failure(promise: Promise<unknown>, instead: string): Promise<unknown> {
  return promise.then(
    () => new Error(instead),
    (error: unknown) => error,
  );
}

async function refusal(promise: Promise<unknown>): Promise<FileError> {
  const outcome = await failure(promise, 'saved, where a refusal was expected');
  expect(outcome).toBeInstanceOf(FileError);
  return outcome as FileError;
}

/** A new FIFO in the temp directory, with `cat` reading it (what it read, once it has ended). */
function readFifo(name: string): { fifo: string; read: () => Promise<Buffer> } {
  const fifo = join(dir.path, name);
  execFileSync('mkfifo', [fifo]);
  const reader = execa('cat', [fifo], { encoding: 'buffer' });
  return { fifo, read: async () => Buffer.from((await reader).stdout) };
}

describe('saveGeneratedImage', () => {
  it('saves the image with GPS EXIF and the AI-generated note, as generate does', async () => {
    const saved = await saveGeneratedImage(client, { request, target: join(dir.path, 'liberty.jpg'), overwrite: false, label: '', metadata });
    expect(saved).toEqual({ path: join(dir.path, 'liberty.jpg'), bytes: readFileSync(saved.path).length });
    const bytes = readFileSync(saved.path);
    expect(bytes.includes(Buffer.from('Exif\0\0'))).toBe(true);
    expect(bytes.includes(Buffer.from('liberty'))).toBe(true); // the tag, as an XMP keyword
  });

  it.skipIf(!available(exiftool))('writes the place and the AI-generated marking as exiftool reads them', () => {
    const exif = execFileSync('exiftool', ['-n', '-GPSLatitude', '-GPSLongitude', '-DigitalSourceType', join(dir.path, 'liberty.jpg')], { encoding: 'utf8' });
    expect(exif).toMatch(/GPS Latitude\s*: 40\.6892/);
    expect(exif).toMatch(/GPS Longitude\s*: -74\.0445/);
    expect(exif).toMatch(/trainedAlgorithmicMedia/);
  });

  it('checks the target before anything is sent, in the caller’s words', async () => {
    sandbox.clearRequests();
    const taken = join(dir.path, 'liberty.jpg');
    const error = await refusal(saveGeneratedImage(client, { request, target: taken, overwrite: false, label: '--output', metadata }));
    expect(error).toMatchObject({ code: 'AlreadyExists', remedy: 'overwrite', path: taken });
    expect(error.message).toBe(`--output ${taken} already exists`);
    expect((await refusal(saveGeneratedImage(client, { request, target: dir.path, overwrite: true, label: 'output', metadata }))).message).toBe(`output ${dir.path} is a directory; name a file`);
    expect(sandbox.requests()).toEqual([]);
  });

  it('under a root, takes only plain names inside it', async () => {
    const root = join(dir.path, 'root');
    mkdirSync(root);
    symlinkSync(dir.path, join(root, 'up'));
    sandbox.clearRequests();
    for (const target of ['../x.jpg', join(dir.path, 'x.jpg'), 'up/x.jpg']) {
      expect((await refusal(checkImageTarget(target, { overwrite: true, root, label: 'output' }))).code, target).toBe('OutsideRoot');
    }
    expect(sandbox.requests()).toEqual([]);
    const saved = await saveGeneratedImage(client, { request, target: 'a/b.jpg', root, overwrite: false, label: 'output', metadata: false });
    expect(saved.path).toBe(join(root, 'a', 'b.jpg'));
    expect(readFileSync(saved.path).includes(Buffer.from('Exif\0\0'))).toBe(false);
  });

  it('refuses a device or FIFO unless the face opens it, and writes into a stream it gives', async () => {
    const fifo = join(dir.path, 'pipe');
    execFileSync('mkfifo', [fifo]);
    sandbox.clearRequests();
    const refused = `output ${fifo} is a FIFO; only regular files are saved here`;
    expect(await refusal(prepareImageTarget(fifo, { overwrite: false, label: 'output' }))).toMatchObject({ message: refused, code: 'NotARegularFile' });
    expect((await refusal(saveGeneratedImage(client, { request, target: fifo, overwrite: false, label: 'output', metadata }))).message).toBe(refused);
    expect(sandbox.requests()).toEqual([]);
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const written = await saveGeneratedImage(client, { request, target: streamTarget(stream, 'standard output'), overwrite: false, label: '', metadata });
    expect(written.path).toBe('standard output');
    expect(written.bytes).toBe(Buffer.concat(chunks).length);
    expect([...Buffer.concat(chunks).subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect(stream.writableEnded).toBe(false); // standard output stays open
  });
});

describe('prepareImageTarget', () => {
  const opening = (signal = new AbortController().signal, onWait: (message: string) => void = () => {}) => ({ signal, onWait });

  it('refuses a bad target before any request, in the caller’s words', async () => {
    sandbox.clearRequests();
    const taken = join(dir.path, 'liberty.jpg');
    expect(await refusal(prepareImageTarget(taken, { overwrite: false, label: '--output' }, opening()))).toMatchObject({ code: 'AlreadyExists', message: `--output ${taken} already exists` });
    expect((await refusal(prepareImageTarget(`${dir.path}/`, { overwrite: true, label: '--output' }, opening()))).code).toBe('NotAFile');
    expect(sandbox.requests()).toEqual([]);
  });

  it('opens a FIFO once, when its reader has come, and the save writes the whole image into that opening', async () => {
    const { fifo, read } = readFifo('once.fifo');
    const target = await prepareImageTarget(fifo, { overwrite: false, label: '--output' }, opening());
    expect(target).toMatchObject({ path: fifo, kind: 'FIFO' });
    // The name gone, the save can only write into what prepare opened.
    unlinkSync(fifo);
    const written = await saveGeneratedImage(client, { request, target, overwrite: false, label: '--output', metadata });
    const stdout = await read();
    expect(written).toEqual({ path: fifo, bytes: stdout.length });
    expect([...stdout.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect([...stdout.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(stdout.includes(Buffer.from('Exif\0\0'))).toBe(true);
  });

  it('waits for a FIFO’s reader, saying so, until the signal stops it; nothing is sent', async () => {
    const fifo = join(dir.path, 'unread.fifo');
    execFileSync('mkfifo', [fifo]);
    sandbox.clearRequests();
    const stop = new AbortController();
    const said: string[] = [];
    const waiting = prepareImageTarget(fifo, { overwrite: false, label: '--output' }, opening(stop.signal, (message) => said.push(message)));
    const outcome = failure(waiting, 'opened without a reader');
    await expect.poll(() => said, { timeout: 5_000 }).toEqual([`waiting for a reader to open the FIFO ${fifo}; nothing is sent before one does`]);
    const reason = new Error('stopped');
    stop.abort(reason);
    expect(await outcome).toBe(reason);
    expect(sandbox.requests()).toEqual([]);
  });

  it('lets go of an opened FIFO when the request fails: its reader sees the end, with nothing written', async () => {
    const { fifo, read } = readFifo('failed.fifo');
    const target = await prepareImageTarget(fifo, { overwrite: false, label: '--output' }, opening());
    sandbox.setFaults({ failRate: 1 });
    try {
      const error = await failure(saveGeneratedImage(client, { request, target, overwrite: false, label: '--output', metadata }), 'saved, where the generation was to fail');
      expect(error).toMatchObject({ code: 'ErrorGeneratingImage' });
    } finally {
      sandbox.setFaults({ failRate: 0 });
    }
    expect((await read()).length).toBe(0);
  });
});

describe('saveImageFromUrl', () => {
  it('downloads an image by its temporary URL, never with the key, and saves it as a generated one', async () => {
    const page = await client.list({ size: 1, sort: ['createdAt,desc'] });
    sandbox.clearRequests();
    const saved = await saveImageFromUrl(client, page.content[0]!.url, { request, target: join(dir.path, 'downloaded.jpg'), overwrite: false, label: '', metadata });
    expect(existsSync(saved.path)).toBe(true);
    expect(readFileSync(saved.path).includes(Buffer.from('Exif\0\0'))).toBe(true);
    expect(sandbox.requests().map((entry) => [entry.method, entry.keyId])).toEqual([['GET', null]]);
  });
});
