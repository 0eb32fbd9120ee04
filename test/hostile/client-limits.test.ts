// Limits of the HTTP layer that are too big to reach from the CLI in a test
// (a 256 MiB image cap, a 10-minute body deadline), exercised on the client
// itself, over real sockets, with small limits passed as options.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GenAerialClient, type ClientOptions } from '../../src/api/client.js';
import { ExitCode, NetworkError } from '../../src/api/errors.js';
import { resolveSettings } from '../../src/config.js';
import { writeJpegAtomically } from '../../src/jpeg-file.js';
import { buildGenerationRequest } from '../../src/request.js';
import { failure, withClientAt, withLimits } from '../helpers/client.js';
import { tempDir } from '../helpers/cli.js';
import { answer, startHostileServer, tinyJpeg, writeForever, type HostileServer } from '../helpers/hostile-server.js';

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
  dir = tempDir('aerial-client-limits-');
});

function withClient<T>(options: Partial<ClientOptions>, use: (client: GenAerialClient) => Promise<T>): Promise<T> {
  return withClientAt(server.url, { apiKey: 'k_limits_test', ...options }, use);
}

describe('client limits over real sockets', () => {
  it('an endless image body, as fast as the socket takes it, stops at the size cap and leaves no file', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(64 * 1024, 0x42), 0);
    });
    const error = await withClient({ maxImageBytes: 1024 * 1024 }, async (client) => {
      const image = await client.generate(request);
      return failure(writeJpegAtomically(image.body, join(dir.path, 'out.jpg'), { force: false }));
    });
    expect(error.code).toBe('ResponseTooLarge');
    expect(error.exitCode).toBe(ExitCode.Server);
    expect(error.message).toBe('response body exceeds 1 MiB');
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('an announced Content-Length over the cap is refused before a byte is read', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 3 * 1024 * 1024 * 1024 });
      res.write(tinyJpeg().subarray(0, 100));
    });
    const error = await withClient({}, (client) => failure(client.generate(request)));
    expect(error.code).toBe('ResponseTooLarge');
    expect(error.message).toBe('image of 3072 MiB exceeds the 256 MiB limit');
  });

  it('a drip-fed image meets the transfer deadline even though it is never silent long enough for the body timeout', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 100));
      writeForever(res, Buffer.alloc(8, 0x42), 20);
    });
    const started = Date.now();
    const error = await withClient({ timeouts: withLimits('generation', { responseMs: 300, bodyIdleMs: 5000 }) }, async (client) => {
      const image = await client.generate(request);
      return failure(writeJpegAtomically(image.body, join(dir.path, 'out.jpg'), { force: false }));
    });
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(ExitCode.Network);
    expect(error.message).toMatch(/did not finish within 0\.3s/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('a well-behaved image passes the same guards untouched', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const written = await withClient({ maxImageBytes: 1024 * 1024, timeouts: withLimits('generation', { responseMs: 2000 }) }, async (client) => {
      const image = await client.generate(request);
      return writeJpegAtomically(image.body, join(dir.path, 'out.jpg'), { force: false, expectedLength: image.contentLength });
    });
    expect(written.bytes).toBe(tinyJpeg().length);
    expect(readdirSync(dir.path)).toEqual(['out.jpg']);
  });
});
