// The one image path at the client: generateInto and downloadInto write an
// image straight into a sink as undici parses it (no stream stages), checked
// on the way, with its metadata spliced in; the destinations of jpeg-file.ts
// put it on disk. Over real sockets against a server whose every answer the
// test decides; the limits too big for a CLI run (a 256 MiB cap) are passed
// small here.
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GenAerialClient, type ClientOptions } from '../../src/api/client.js';
import { ApiError, ImageUrlRefusedError, NetworkError } from '../../src/api/errors.js';
import { asCliError, CliError, ExitCode } from '../../src/lifecycle/errors.js';
import { DEFAULT_RETRY_POLICY, persistentPolicy } from '../../src/api/retry.js';
import { resolveSettings } from '../../src/config/config.js';
import { JpegFileDestination, saveImage, StreamDestination, TempJpegFile } from '../../src/files/jpeg-file.js';
import { createMetadataSplicer } from '../../src/files/image-metadata.js';
import { buildGenerationRequest } from '../../src/input/scene-request.js';
import { exitCodeOf, failure, memorySink, withClientAt, withLimits } from '../helpers/client.js';
import { tempDir } from '../helpers/cli.js';
import { answer, answerJson, startHostileServer, tinyJpeg, writeForever, type HostileServer } from '../helpers/hostile-server.js';

const request = buildGenerationRequest({ lat: '1', lng: '2' }, resolveSettings({}, {}, {}).sceneDefaults);
let server: HostileServer;
let dir: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
});
afterAll(async () => {
  dir?.remove();
  await server.close();
});
beforeEach(() => {
  server.reset();
  dir?.remove();
  dir = tempDir('aerial-client-sink-');
});

function withClient<T>(options: Partial<ClientOptions>, use: (client: GenAerialClient) => Promise<T>): Promise<T> {
  return withClientAt(server.url, { apiKey: 'k_sink_test', ...options }, use);
}

describe('generateInto', () => {
  it('delivers every byte of the image into the sink, says when it starts arriving, and sends the request as generate does', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const sink = memorySink();
    let toldAt = -1;
    const { bytes } = await withClient({}, (client) =>
      client.generateInto(request, sink, { onImage: () => (toldAt = sink.opened) }),
    );
    expect(bytes).toBe(tinyJpeg().length);
    expect(sink.bytes().equals(tinyJpeg())).toBe(true);
    expect(toldAt).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.method).toBe('POST');
    expect(server.requests[0]!.url).toBe('/api/external/v1/image-generation');
    expect(server.requests[0]!.headers['x-api-key']).toBe('k_sink_test');
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(server.requests[0]!.body)).toEqual(request);
  });

  it('image/jpeg that is not a JPEG: InvalidImage, and not a byte reaches the sink', async () => {
    server.respond(answer(200, Buffer.from('<html>surprise</html>'), 'image/jpeg'));
    const sink = memorySink();
    const error = await withClient({}, (client) => failure(client.generateInto(request, sink)));
    expect(error.code).toBe('InvalidImage');
    expect(exitCodeOf(error)).toBe(ExitCode.Server);
    expect(sink.bytes().length).toBe(0);
  });

  it('a JPEG without its end-of-image marker: InvalidImage (truncated)', async () => {
    server.respond(answer(200, tinyJpeg().subarray(0, tinyJpeg().length - 2), 'image/jpeg'));
    const error = await withClient({}, (client) => failure(client.generateInto(request, memorySink())));
    expect(error.code).toBe('InvalidImage');
    expect(error.message).toMatch(/no end-of-image marker/);
  });

  it('a body cut off before its Content-Length: a network error saying the service may have done the work', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': tinyJpeg().length * 2 });
      res.write(tinyJpeg());
      setTimeout(() => res.destroy(), 20);
    });
    const error = await withClient({}, (client) => failure(client.generateInto(request, memorySink())));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).maybeProcessed).toBe(true);
    expect(exitCodeOf(error)).toBe(ExitCode.Network);
  });

  it('an endless image body stops at the size cap', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(64 * 1024, 0x42), 0);
    });
    const error = await withClient({ maxImageBytes: 1024 * 1024 }, (client) => failure(client.generateInto(request, memorySink())));
    expect(error.code).toBe('ResponseTooLarge');
    expect(error.message).toBe('response body exceeds 1 MiB');
  });

  it('a drip-fed image meets the transfer deadline', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(8, 0x42), 20);
    });
    const started = Date.now();
    const error = await withClient({ timeouts: withLimits('generation', { responseMs: 300, bodyIdleMs: 5000 }) }, (client) =>
      failure(client.generateInto(request, memorySink())),
    );
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/did not finish within 0\.3s/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('the wrong content type, or an announced size over the cap: refused before the sink is opened', async () => {
    const sink = memorySink();
    server.respond(answer(200, '{"id":"x"}', 'application/json'));
    const wrongType = await withClient({}, (client) => failure(client.generateInto(request, sink)));
    expect(wrongType.code).toBe('UnexpectedResponse');
    expect(wrongType.message).toBe("expected an image/jpeg response, got 'application/json'");
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 3 * 1024 * 1024 * 1024 });
      res.write(tinyJpeg().subarray(0, 100));
    });
    const tooBig = await withClient({}, (client) => failure(client.generateInto(request, sink)));
    expect(tooBig.code).toBe('ResponseTooLarge');
    expect(sink.opened).toBe(0);
  });

  it('an error answer becomes the ApiError its body describes; a 429 is retried after its Retry-After', async () => {
    server.respond(answerJson(402, { error: 'InsufficientCredits', message: 'not enough credits' }));
    const sink = memorySink();
    const error = await withClient({}, (client) => failure(client.generateInto(request, sink)));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('InsufficientCredits');
    expect(error.message).toBe('not enough credits');
    expect(sink.opened).toBe(0);

    let calls = 0;
    server.respond((res, received, req) => {
      calls++;
      if (calls === 1) return answerJson(429, { error: 'RateLimited', message: 'slow down' }, { 'retry-after': '7' })(res, received, req);
      return answer(200, tinyJpeg(), 'image/jpeg')(res, received, req);
    });
    const waits: number[] = [];
    const { bytes } = await withClient({ retry: { ...DEFAULT_RETRY_POLICY, rateLimitedAttempts: 2 }, sleep: async (ms) => void waits.push(ms) }, (client) =>
      client.generateInto(request, sink),
    );
    expect(bytes).toBe(tinyJpeg().length);
    expect(waits).toEqual([7000]);
    expect(calls).toBe(2);
  });

  it('an endless error body is read only as far as a message needs', async () => {
    server.respond((res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.write('service unavailable ');
      writeForever(res, 'x'.repeat(16 * 1024), 0);
    });
    const error = await withClient({ retry: { ...DEFAULT_RETRY_POLICY, rateLimitedAttempts: 1 } }, (client) => failure(client.generateInto(request, memorySink())));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toMatch(/^service unavailable x+/);
  });

  it('an error page dripped forever: the deadline ends it and the status is still what is reported', async () => {
    server.respond((res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.write('bad gateway');
      writeForever(res, ' ', 20);
    });
    const started = Date.now();
    const error = await withClient({ timeouts: withLimits('generation', { responseMs: 300, bodyIdleMs: 5000 }) }, (client) => failure(client.generateInto(request, memorySink())));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
    // Its text never finished: the status alone is reported, as for every other call.
    expect(error.message).toBe('HTTP 502');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a redirect is not followed', async () => {
    server.respond(answer(307, '', 'text/plain', { location: 'http://elsewhere.invalid/steal' }));
    const error = await withClient({}, (client) => failure(client.generateInto(request, memorySink())));
    expect(error.code).toBe('UnexpectedRedirect');
    expect(server.requests).toHaveLength(1);
  });

  it('an abort while the image arrives ends the exchange with the abort reason', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(8, 0x42), 10);
    });
    const controller = new AbortController();
    const reason = new CliError('stopped by the test', ExitCode.Interrupted, 'Interrupted');
    const outcome = withClient({}, (client) =>
      client.generateInto(request, memorySink(), { signal: controller.signal, onImage: () => setTimeout(() => controller.abort(reason), 30) }),
    );
    await expect(outcome).rejects.toBe(reason);
  });
});

describe('destinations', () => {
  it('a file: the image, its metadata spliced in on the way, lands under its name and nothing else is left', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir.path, 'images'));
    const target = join(dir.path, 'images', 'r1.jpg');
    const editor = createMetadataSplicer({ request, software: 'aerial test' });
    const destination = new JpegFileDestination(target, { force: false, editor });
    const written = await withClient({}, (client) => saveImage(destination, (sink) => client.generateInto(request, sink)));
    const onDisk = readFileSync(target);
    expect(editor.insertedBytes).toBeGreaterThan(0);
    expect(written).toEqual({ path: target, bytes: tinyJpeg().length + editor.insertedBytes });
    expect(onDisk.length).toBe(written.bytes);
    expect(onDisk.includes(Buffer.from('Exif\0\0'))).toBe(true);
    // The image's own bytes follow its header unchanged, ending with the end-of-image marker.
    expect(onDisk.subarray(-100).equals(tinyJpeg().subarray(-100))).toBe(true);
    expect(readdirSync(join(dir.path, 'images'))).toEqual(['r1.jpg']);
  });

  it('a file whose editor is still being made (the EXIF writer loading) gets the image whole once it is ready', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const target = join(dir.path, 'late.jpg');
    const editor = createMetadataSplicer({ request, software: 'aerial test' });
    const late = new Promise<typeof editor>((resolve) => setTimeout(() => resolve(editor), 200));
    const written = await withClient({}, (client) => saveImage(new JpegFileDestination(target, { force: false, editor: late }), (sink) => client.generateInto(request, sink)));
    expect(editor.insertedBytes).toBeGreaterThan(0);
    expect(written.bytes).toBe(tinyJpeg().length + editor.insertedBytes);
    expect(readFileSync(target).subarray(-100).equals(tinyJpeg().subarray(-100))).toBe(true);
  });

  it('a failed exchange removes the temp file and never creates the target', async () => {
    server.respond(answerJson(402, { error: 'InsufficientCredits', message: 'no' }));
    const target = join(dir.path, 'r2.jpg');
    const destination = new JpegFileDestination(target, { force: false });
    destination.prepare();
    await once(destination.open() as Writable, 'open');
    expect(readdirSync(dir.path)).toHaveLength(1);
    const error = await withClient({}, (client) => failure(saveImage(destination, (sink) => client.generateInto(request, sink))));
    expect(error.code).toBe('InsufficientCredits');
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('a stream (standard output, a device): written into as the image comes and left open when asked', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const chunks: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
    });
    const written = await withClient({}, (client) => saveImage(new StreamDestination(out, { path: 'standard output', end: false }), (sink) => client.generateInto(request, sink)));
    expect(written).toEqual({ path: 'standard output', bytes: tinyJpeg().length });
    expect(Buffer.concat(chunks).equals(tinyJpeg())).toBe(true);
    expect(out.writableEnded).toBe(false);
  });

  it('a broken body is asked for again only into a sink that can start over, and from an empty one', async () => {
    let calls = 0;
    server.respond((res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': tinyJpeg().length * 2 });
        res.write(tinyJpeg());
        setTimeout(() => res.destroy(), 20);
        return;
      }
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': tinyJpeg().length }).end(tinyJpeg());
    });
    // A download is safe to repeat: under a persistent policy it is tried again, the sink emptied first.
    const retry = { ...persistentPolicy({ maxRetries: 2, firstDelayMs: 1, retryUnsafe: false }), pause: undefined };
    const sink = memorySink();
    await withClient({ retry }, (client) => client.downloadInto(`${server.url}/signed/x.jpg`, sink));
    expect(calls).toBe(2);
    expect(sink.resets).toBe(1);
    expect(sink.bytes().equals(tinyJpeg())).toBe(true);
    // Into standard output what was written cannot be taken back: never asked for again.
    calls = 0;
    const out = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const error = await withClient({ retry }, (client) => failure(saveImage(new StreamDestination(out, { path: 'standard output', end: false }), (s) => client.downloadInto(`${server.url}/signed/x.jpg`, s))));
    expect(error).toBeInstanceOf(NetworkError);
    expect(calls).toBe(1);
  });

  it('a signed URL refused with 401, 403, 404 or 410 is an expired one (ImageUrlRefusedError); the same from the API is not', async () => {
    for (const status of [401, 403, 404, 410]) {
      server.respond(answerJson(status, { error: 'Refused', message: 'expired' }));
      const refused = await withClient({}, (client) => failure(client.downloadInto(`${server.url}/signed/x.jpg`, memorySink())));
      expect(refused, String(status)).toBeInstanceOf(ImageUrlRefusedError);
      expect(refused.status).toBe(status);
      const fromApi = await withClient({}, (client) => failure(client.generateInto(request, memorySink())));
      expect(fromApi).toBeInstanceOf(ApiError);
      expect(fromApi).not.toBeInstanceOf(ImageUrlRefusedError);
    }
  });

  it('reads the refusal of object storage as S3 writes it: its Code and Message, escapes undone, the key redacted', async () => {
    const key = 'sk-storage-0123456789abcdef';
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired &amp; the key &#115;k-storage-0123456789abcdef is \u202ewrong</Message><Expires>2030-01-01T02:00:00Z</Expires><RequestId>ABC</RequestId></Error>`;
    server.respond(answer(403, xml, 'application/xml'));
    const refused = await withClient({ apiKey: key }, (client) => failure(client.downloadInto(`${server.url}/signed/x.jpg`, memorySink())));
    expect(refused).toBeInstanceOf(ImageUrlRefusedError);
    expect([refused.status, refused.code]).toEqual([403, 'AccessDenied']);
    expect(refused.message).toMatch(/^Request has expired & the key \*\*\* is \S?wrong$/);
    expect(refused.message).not.toContain('\u202e');
    // Other XML, and text that only looks like it, stay as they were said.
    server.respond(answer(403, '<html><Error>no</Error></html>', 'text/html'));
    const html = await withClient({}, (client) => failure(client.downloadInto(`${server.url}/signed/x.jpg`, memorySink())));
    expect(html.code).toBe('Forbidden');
  });
});

describe('TempJpegFile', () => {
  it('commit() refuses a target that appeared meanwhile without --force, and replaces it with force', async () => {
    const { writeFileSync } = await import('node:fs');
    const target = join(dir.path, 'r3.jpg');
    const file = new TempJpegFile(target, { force: false });
    file.sink.write(tinyJpeg());
    writeFileSync(target, 'someone else');
    const error = await failure(file.commit());
    expect(exitCodeOf(error)).toBe(ExitCode.Usage);
    expect(error).toMatchObject({ code: 'AlreadyExists', remedy: 'overwrite' });
    expect(asCliError(error)!.message).toBe(`${target} already exists; pass --force to overwrite`);
    expect(readFileSync(target, 'utf8')).toBe('someone else');
    expect(readdirSync(dir.path)).toEqual(['r3.jpg']);

    const forced = new TempJpegFile(target, { force: true });
    forced.sink.write(tinyJpeg());
    await forced.commit();
    expect(readFileSync(target).equals(tinyJpeg())).toBe(true);
    expect(readdirSync(dir.path)).toEqual(['r3.jpg']);
  });
});

describe('generateInto with a file that pushes back', () => {
  it('an image larger than the disk buffer pauses the connection while the file catches up, and arrives whole', async () => {
    // A valid-looking JPEG of 3 MiB: signature, filler, end-of-image marker.
    const big = Buffer.concat([tinyJpeg().subarray(0, 20), Buffer.alloc(3 * 1024 * 1024, 0x42), Buffer.from([0xff, 0xd9])]);
    server.respond(answer(200, big, 'image/jpeg'));
    const target = join(dir.path, 'big.jpg');
    const file = new TempJpegFile(target, { force: false, diskBufferBytes: 16 * 1024 });
    let pauses = 0;
    const write = file.sink.write.bind(file.sink);
    file.sink.write = ((chunk: Buffer) => {
      const more = write(chunk);
      if (!more) pauses++;
      return more;
    }) as typeof file.sink.write;
    const received = await withClient({}, (client) => client.generateInto(request, { open: () => file.sink }));
    await file.commit();
    expect(received.bytes).toBe(big.length);
    expect(pauses).toBeGreaterThan(0);
    expect(readFileSync(target).equals(big)).toBe(true);
  });

  it('a temp file that cannot be created fails with the file error at once, rather than waiting for a drain', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const file = new TempJpegFile(join(dir.path, 'no-such-dir', 'x.jpg'), { force: false });
    const started = Date.now();
    // A tiny image can be all in the sink's buffer before the file's open fails: the error then
    // surfaces when the file is committed. Either way it is the file's error, and it comes at once.
    const error = await withClient({}, (client) =>
      client
        .generateInto(request, { open: () => file.sink })
        .then(() => file.commit())
        .then(
          () => undefined,
          (e: unknown) => e as NodeJS.ErrnoException,
        ),
    );
    await file.discard();
    expect(error?.code).toBe('ENOENT');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});

describe('downloadInto', () => {
  it('the same checks as generateInto, and never the key: an endless body at the cap, a drip at the deadline', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(64 * 1024, 0x42), 0);
    });
    const endless = await withClient({ maxImageBytes: 1024 * 1024 }, (client) => failure(client.downloadInto(`${server.url}/signed/x.jpg`, memorySink())));
    expect(endless.message).toBe('response body exceeds 1 MiB');
    expect(server.requests[0]!.headers['x-api-key']).toBeUndefined();
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(8, 0x42), 20);
    });
    const dripped = await withClient({ timeouts: withLimits('download', { responseMs: 300, bodyIdleMs: 5000 }) }, (client) => failure(client.downloadInto(`${server.url}/signed/x.jpg`, memorySink())));
    expect(dripped.message).toMatch(/did not finish within 0\.3s/);
  });
});
