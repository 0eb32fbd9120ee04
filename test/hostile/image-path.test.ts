// The one image path, as every caller uses it: generate into a file, into a
// FIFO and to standard output, generate-async --listen, batch (sync and
// --async) and export. Each gets the same checks from the same code: a body
// that is not a JPEG, one without its end marker, one cut off before its
// Content-Length, one announced over the size cap, one drip-fed past the
// transfer deadline; and a good image arrives whole. Real runs of the CLI
// over real sockets, against a server that plays service and storage alike.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import exifr from 'exifr';
import { beforeEach, describe, expect, it } from 'vitest';
import { API_PATH } from '../../src/api/spec.js';
import { registerSecret, runCli, runPiped, tempDir } from '../helpers/cli.js';
import { answerJpeg, answerJson, postJson, tinyJpeg, useHostileServerPerFile, writeForever, type HostileServer, type Responder } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_image_path_61d0c4';
registerSecret(KEY);
/** Every stage's limit for the CLI runs: the transfer deadline of a drip-fed body among them. */
const TIMEOUT_MS = 800;

let server: HostileServer;
let home: ReturnType<typeof tempDir>;
useHostileServerPerFile((started, dir) => {
  server = started;
  home = dir;
});
let work: string;
beforeEach(() => {
  const dir = tempDir('aerial-image-path-');
  work = dir.path;
  return () => dir.remove();
});

/** How the image is served: each one breaks one check, but for the good one. */
const IMAGES: Record<string, Responder> = {
  good: answerJpeg,
  'not a JPEG': (res) => {
    const body = Buffer.from('<html>surprise</html>');
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  },
  'no end marker': (res) => {
    const body = tinyJpeg().subarray(0, tinyJpeg().length - 2);
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  },
  'cut off before its Content-Length': (res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': tinyJpeg().length * 2 });
    res.write(tinyJpeg());
    setTimeout(() => res.destroy(), 20);
  },
  'announced over the size cap': (res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 3 * 1024 * 1024 * 1024 });
    res.write(tinyJpeg().subarray(0, 100));
  },
  'drip-fed past the deadline': (res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg' });
    res.write(tinyJpeg().subarray(0, 100));
    writeForever(res, Buffer.alloc(8, 0x42), 20);
  },
};

/** What each broken image ends with, whoever asked for it. */
const EXPECTED: Record<string, { exitCode: number; message: RegExp }> = {
  'not a JPEG': { exitCode: 6, message: /response is not a JPEG \(bad signature\)/ },
  'no end marker': { exitCode: 6, message: /JPEG is truncated \(no end-of-image marker\)/ },
  'cut off before its Content-Length': { exitCode: 7, message: /connection to 127\.0\.0\.1:\d+ failed/ },
  'announced over the size cap': { exitCode: 6, message: /image of 3072 MiB exceeds the 256 MiB limit/ },
  'drip-fed past the deadline': { exitCode: 7, message: new RegExp(`did not finish within ${TIMEOUT_MS / 1000}s`) },
};

/** The server as service and storage: generations and listings answered, every image served by `image`. */
function serve(image: Responder): void {
  let next = 0;
  server.respond((res, received, req) => {
    const path = received.url.split('?')[0];
    if (received.method === 'POST' && path === `${API_PATH}/async`) {
      const requestId = `req-${++next}`;
      answerJson(202, { requestId, status: 'processing' })(res, received, req);
      const payload = { requestId, signedUrl: `${server.url}/signed/${requestId}.jpg`, generatedImageId: `img-${requestId}`, creditsUsed: 1 };
      setTimeout(() => void postJson(String(received.headers['x-callback-url']), payload), 20);
      return;
    }
    if (received.method === 'GET' && path === API_PATH) {
      const record = { id: 'img-1', url: `${server.url}/signed/img-1.jpg`, coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2025-01-01T00:00:00Z' };
      return answerJson(200, { content: [record], totalElements: 1, totalPages: 1, page: 0, size: 50 })(res, received, req);
    }
    return image(res, received, req);
  });
}

function aerial(args: string[]) {
  return runCli(args, { configDir: home.path, cwd: work, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, AERIAL_TIMEOUT_MS: String(TIMEOUT_MS) }, timeout: 30_000 });
}

const SCENE = ['--lat', '1', '--lng', '2'];

/** What a caller did: how it ended, and the image where it is kept (when it kept one). */
interface Run {
  exitCode: number;
  stderr: string;
  image?: Buffer;
  /** The caller's output directory, to show nothing half-written is left. */
  dir?: string;
}

function rowsCsv(): string {
  const csv = join(work, 'rows.csv');
  writeFileSync(csv, 'lat,lng\n1,2\n');
  return csv;
}

const readIf = (path: string) => (existsSync(path) ? readFileSync(path) : undefined);

/** Each caller of the image path, run as a user runs it. `tagged`: whether the image gets its metadata on the way. */
const CALLERS: Array<{ name: string; tagged: boolean; run: () => Promise<Run> }> = [
  {
    name: 'generate -o file',
    tagged: true,
    run: async () => ({ ...(await aerial(['generate', ...SCENE, '-o', join(work, 'out', 'x.jpg')])), image: readIf(join(work, 'out', 'x.jpg')), dir: join(work, 'out') }),
  },
  {
    name: 'generate -o fifo',
    tagged: true,
    run: async () => {
      const fifo = join(work, 'image.fifo');
      execFileSync('mkfifo', [fifo]);
      const reader = execa('cat', [fifo], { encoding: 'buffer' });
      const result = await aerial(['generate', ...SCENE, '-o', fifo]);
      const { stdout } = await reader;
      return { ...result, image: result.exitCode === 0 ? Buffer.from(stdout) : undefined };
    },
  },
  {
    name: 'generate -o -',
    tagged: true,
    run: async () => {
      const piped = await runPiped(['generate', ...SCENE, '-o', '-'], { configDir: home.path, cwd: work, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, AERIAL_TIMEOUT_MS: String(TIMEOUT_MS) } });
      return { exitCode: piped.exitCode ?? -1, stderr: piped.stderr, image: piped.exitCode === 0 ? piped.stdout : undefined };
    },
  },
  {
    name: 'generate-async --listen',
    tagged: true,
    run: async () => ({ ...(await aerial(['generate-async', ...SCENE, '--listen', '--timeout', '20s', '-o', join(work, 'out', 'x.jpg')])), image: readIf(join(work, 'out', 'x.jpg')), dir: join(work, 'out') }),
  },
  {
    name: 'batch',
    tagged: true,
    run: async () => ({ ...(await aerial(['batch', rowsCsv(), '--max-retries', '0', '--output-template', 'out/{row}.jpg', '--manifest', 'manifest.jsonl'])), image: readIf(join(work, 'out', '1.jpg')), dir: join(work, 'out') }),
  },
  {
    name: 'batch --async',
    tagged: true,
    run: async () => ({ ...(await aerial(['batch', rowsCsv(), '--async', '--max-retries', '0', '--output-template', 'out/{row}.jpg', '--manifest', 'manifest.jsonl'])), image: readIf(join(work, 'out', '1.jpg')), dir: join(work, 'out') }),
  },
  {
    name: 'export',
    tagged: true,
    run: async () => ({ ...(await aerial(['export', 'backup', '--max-retries', '0'])), image: readIf(join(work, 'backup', 'img-1.jpg')), dir: join(work, 'backup') }),
  },
];

describe.each(CALLERS)('the image path for $name', ({ run, tagged }) => {
  it('a good image arrives whole, with its metadata where the caller adds it', async () => {
    serve(IMAGES.good!);
    const result = await run();
    expect(result.exitCode, result.stderr).toBe(0);
    const image = result.image!;
    // The image's own bytes end it unchanged, end marker included.
    expect(image.subarray(-100).equals(tinyJpeg().subarray(-100))).toBe(true);
    if (tagged) {
      expect(image.length).toBeGreaterThan(tinyJpeg().length);
      expect((await exifr.gps(image)).latitude).toBeCloseTo(1, 5);
    } else {
      expect(image.equals(tinyJpeg())).toBe(true);
    }
    if (result.dir) expect(readdirSync(result.dir).filter((name) => name.endsWith('.part'))).toEqual([]);
  });

  it.each(Object.keys(EXPECTED))('an image %s: the same check, the same exit code, nothing half-written', async (broken) => {
    serve(IMAGES[broken]!);
    const result = await run();
    const { exitCode, message } = EXPECTED[broken]!;
    expect(result.exitCode, result.stderr).toBe(exitCode);
    expect(result.stderr).toMatch(message);
    expect(result.image).toBeUndefined();
    if (result.dir && existsSync(result.dir)) expect(readdirSync(result.dir).filter((name) => name.endsWith('.jpg') || name.endsWith('.part'))).toEqual([]);
  });
});
