// `aerial generate` against a server that misbehaves on purpose. Whatever it
// sends, the CLI must end with the documented exit code, one clear line on
// stderr, and no file at all in the output directory (no image, no .part).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import {
  answer,
  answerJson,
  leftovers,
  startHostileServer,
  tinyJpeg,
  writeForever,
  type HostileServer,
} from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_generate_5f2a9c';
registerSecret(KEY);

let server: HostileServer;
let other: HostileServer;
let config: ReturnType<typeof tempDir>;
let work: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  other = await startHostileServer();
  config = tempDir();
});
afterAll(async () => {
  await server.close();
  await other.close();
  config.remove();
});
beforeEach(() => {
  server.reset();
  other.reset();
  work = tempDir('aerial-hostile-out-');
});
afterEach(() => work.remove());

async function generate(extra: string[] = [], env: Record<string, string> = {}) {
  const started = Date.now();
  const result = await runCli(['generate', '--lat', '48.8584', '--lng', '2.2945', '--resolution', 'HD', '-o', 'out.jpg', ...extra], {
    configDir: config.path,
    cwd: work.path,
    env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, ...env },
  });
  return { ...result, ms: Date.now() - started };
}

/** One line on stderr, starting with "error:", and nothing on stdout. */
function expectOneErrorLine(result: { stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter(Boolean);
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
  // No terminal control characters smuggled in from the server.
  expect(lines[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
}

describe('generate against a hostile server', () => {
  it('a JPEG cut off mid-body (Content-Length larger than sent, then the connection closes): exit 7, no file', async () => {
    const jpeg = tinyJpeg();
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length * 4 });
      res.write(jpeg.subarray(0, Math.floor(jpeg.length / 2)), () => res.destroy());
    });
    const result = await generate();
    expect(result.exitCode).toBe(7);
    expectOneErrorLine(result, /connection|closed|truncated/i);
    expect(server.requests).toHaveLength(1);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('a chunked JPEG that ends cleanly but without its end-of-image marker: exit 6, no file', async () => {
    const jpeg = tinyJpeg();
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.end(jpeg.subarray(0, jpeg.length - 100));
    });
    const result = await generate();
    expect(result.exitCode).toBe(6);
    expectOneErrorLine(result, /InvalidImage — JPEG is truncated/);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('image/jpeg that is not a JPEG at all: exit 6, no file', async () => {
    server.respond(answer(200, '<html>definitely not a jpeg</html>', 'image/jpeg'));
    const result = await generate();
    expect(result.exitCode).toBe(6);
    expectOneErrorLine(result, /not a JPEG/);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('a JPEG under the wrong content type: exit 6 naming the type, no file', async () => {
    server.respond(answer(200, tinyJpeg(), 'application/octet-stream'));
    const result = await generate();
    expect(result.exitCode).toBe(6);
    expectOneErrorLine(result, /expected an image\/jpeg response, got 'application\/octet-stream'/);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('a 200 with a JSON body instead of an image: exit 6, no file', async () => {
    server.respond(answerJson(200, { status: 'ok', url: 'https://elsewhere.example/image.jpg' }));
    const result = await generate();
    expect(result.exitCode).toBe(6);
    expectOneErrorLine(result, /expected an image\/jpeg response, got 'application\/json'/);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('an HTML error page with 502: exit 6, its title in one line, not the markup; generation is not retried', async () => {
    const page = '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1>\n<p>nginx</p></body></html>\n';
    server.respond(answer(502, page, 'text/html; charset=utf-8'));
    const result = await generate();
    expect(result.exitCode).toBe(6);
    expectOneErrorLine(result, /^error: ServerError — HTML error page: 502 Bad Gateway$/);
    // A generation may have been charged: a 5xx is not retried behind the user's back.
    expect(server.requests).toHaveLength(1);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('an error message with newlines and terminal escapes is flattened to one harmless line', async () => {
    server.respond(
      answerJson(400, { status: 400, error: 'ValidationFailed', message: 'line one\nline two\r\u001b[2J\u001b[31mred\u0007' }),
    );
    const result = await generate();
    expect(result.exitCode).toBe(2);
    expectOneErrorLine(result, /ValidationFailed — line one line two/);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('a body that stalls after a few bytes: the per-request timeout fires, exit 7, no file', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 20)); // then silence, connection held open
    });
    const result = await generate([], { AERIAL_TIMEOUT_MS: '400' });
    expect(result.exitCode).toBe(7);
    expectOneErrorLine(result, /timed out/);
    expect(result.ms).toBeLessThan(5000);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('response headers that never come: the per-request timeout fires, exit 7, no file', async () => {
    server.respond(() => {
      // never answer
    });
    const result = await generate([], { AERIAL_TIMEOUT_MS: '400' });
    expect(result.exitCode).toBe(7);
    expectOneErrorLine(result, /timed out/);
    expect(result.ms).toBeLessThan(5000);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('an endless body dripped slowly enough never to fall silent: the request deadline still fires, exit 7, no file', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(tinyJpeg().subarray(0, 20));
      writeForever(res, Buffer.alloc(16, 0x55), 50);
    });
    const result = await generate([], { AERIAL_TIMEOUT_MS: '600' });
    expect(result.exitCode).toBe(7);
    expectOneErrorLine(result, /timed out/);
    expect(result.ms).toBeLessThan(6000);
    expect(leftovers(work.path)).toEqual([]);
  });

  it('a redirect to another host is not followed, so the key never reaches it: exit 6, no file', async () => {
    other.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    for (const status of [302, 307, 308]) {
      server.reset();
      server.respond((res) => {
        res.writeHead(status, { location: `${other.url}/api/external/v1/image-generation` }).end();
      });
      const result = await generate();
      expect(result.exitCode).toBe(6);
      expectOneErrorLine(result, new RegExp(`UnexpectedRedirect — unexpected redirect \\(HTTP ${status} to http://127\\.0\\.0\\.1:${other.port}/`));
      // The configured host legitimately got the key; the redirect target got nothing at all.
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]!.headers['x-api-key']).toBe(KEY);
      expect(leftovers(work.path)).toEqual([]);
    }
    expect(other.requests).toEqual([]);
  });

  it('an output path that runs through a file is a usage error (exit 2) before anything is sent, not a crash', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    writeFileSync(join(work.path, 'plain-file'), 'x');
    for (const output of ['plain-file/out.jpg', 'plain-file/sub/out.jpg']) {
      const result = await generate(['-o', output]);
      expect(result.exitCode).toBe(2);
      expectOneErrorLine(result, /--output .*(part of that path is a file|cannot create directory)/);
    }
    expect(server.requests).toEqual([]);
    expect(leftovers(work.path)).toEqual(['plain-file']);
  });

  it('a well-behaved answer is saved (the same harness, so the failures above are the server\'s doing)', async () => {
    server.respond(answer(200, tinyJpeg(), 'image/jpeg'));
    const result = await generate();
    expect(result.exitCode).toBe(0);
    expect(leftovers(work.path)).toEqual(['out.jpg']);
  });
});
