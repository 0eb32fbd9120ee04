// list, delete, generate-async and auth failures against a server that answers
// in every shape the spec leaves open (empty, text or JSON bodies) and in shapes
// it should never use (huge, endless, not UTF-8, redirecting elsewhere).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { answer, answerJson, leftovers, listingOf, startHostileServer, writeForever, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_responses_8c1d4e';
registerSecret(KEY);

let server: HostileServer;
let other: HostileServer;
let config: ReturnType<typeof tempDir>;
let work: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  other = await startHostileServer();
  config = tempDir();
  work = tempDir('aerial-hostile-cwd-');
});
afterAll(async () => {
  await server.close();
  await other.close();
  config.remove();
  work.remove();
});
beforeEach(() => {
  server.reset();
  other.reset();
});

async function aerial(args: string[], env: Record<string, string> = {}) {
  const started = Date.now();
  const result = await runCli(args, {
    configDir: config.path,
    cwd: work.path,
    env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url, ...env },
  });
  // Whatever happened, nothing is written where the command ran.
  expect(leftovers(work.path)).toEqual([]);
  return { ...result, ms: Date.now() - started };
}

function errorLine(result: { stderr: string }): string {
  const lines = result.stderr.split('\n').filter(Boolean);
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  return lines[0]!;
}

const RECORD = { id: 'img_1', url: 'https://cdn.example/img_1.jpg', coordinates: { latitude: 1, longitude: 2 }, resolution: 'HD', createdAt: '2025-01-01T00:00:00Z' };
const ASYNC = ['generate-async', '--lat', '1', '--lng', '2', '--callback-url', 'https://hooks.example/aerial'];

describe('bodies the spec leaves unshown: empty, text or JSON', () => {
  const bodies = [
    { kind: 'empty', responder: (status: number) => answer(status), message: (status: number) => new RegExp(`HTTP ${status}`) },
    { kind: 'text', responder: (status: number) => answer(status, 'nope, not today\n', 'text/plain'), message: () => /nope, not today$/ },
    {
      kind: 'JSON',
      responder: (status: number) => answerJson(status, { status, error: 'CustomCode', message: 'told in JSON' }),
      message: () => /CustomCode — told in JSON$/,
    },
  ];

  for (const body of bodies) {
    it(`401 with a ${body.kind} body: exit 3 and one line, for list and generate`, async () => {
      server.respond(body.responder(401));
      const list = await aerial(['list']);
      expect(list.exitCode).toBe(3);
      expect(errorLine(list)).toMatch(body.kind === 'JSON' ? body.message(401) : /^error: Unauthorized — /);
      expect(errorLine(list)).toMatch(body.message(401));
      const generate = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'x.jpg']);
      expect(generate.exitCode).toBe(3);
      expect(errorLine(generate)).toMatch(body.message(401));
      expect(list.stdout + generate.stdout).toBe('');
    });

    it(`async 400 and 402 with a ${body.kind} body: exit 2 and 4`, async () => {
      for (const [status, exit] of [
        [400, 2],
        [402, 4],
      ] as const) {
        server.respond(body.responder(status));
        const result = await aerial(ASYNC);
        expect(result.exitCode).toBe(exit);
        const line = errorLine(result);
        expect(line).toMatch(body.message(status));
        if (body.kind !== 'JSON') expect(line).toMatch(status === 400 ? /ValidationFailed/ : /InsufficientCredits/);
        expect(result.stdout).toBe('');
      }
      // Refused answers are not retried: the service may have charged.
      expect(server.requests.filter((r) => r.url.endsWith('/async'))).toHaveLength(2);
    });

    it(`delete answered 200 with a ${body.kind} body: exit 0, the id on stdout`, async () => {
      server.respond(listingOf(['img_1'], body.responder(200)));
      const result = await aerial(['delete', 'img_1', '--yes']);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe('img_1\n');
      expect(server.requests.map((r) => `${r.method} ${r.url}`).filter((line) => !line.startsWith('GET '))).toEqual(['DELETE /api/external/v1/image-generation/img_1']);
    });
  }

  it('a 401 text body that echoes the key back is shown with the key redacted', async () => {
    server.respond(answer(401, `invalid api key ${KEY}`, 'text/plain'));
    const result = await aerial(['list', '--json']);
    expect(result.exitCode).toBe(3);
    const error = JSON.parse(errorLine(result)) as { status: number; error: string; message: string };
    expect(error).toMatchObject({ status: 401, error: 'Unauthorized', message: 'invalid api key ***' });
  });
});

describe('list against a hostile server', () => {
  it('a gigantic JSON page (endless, no Content-Length) stops at the 32 MiB cap: exit 6, one line', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"content":[');
      writeForever(res, `${JSON.stringify(RECORD)},`.repeat(200), 0);
    });
    const result = await aerial(['list']);
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toBe('error: ResponseTooLarge — response body exceeds 32 MiB');
    expect(result.stdout).toBe('');
  });

  it('invalid UTF-8 inside a list page is refused rather than passed on as mangled ids: exit 6', async () => {
    const page = Buffer.concat([
      Buffer.from('{"content":[{"id":"img_'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(`","url":"u","coordinates":{"latitude":1,"longitude":2},"resolution":"HD","createdAt":"2025-01-01T00:00:00Z"}],"totalElements":1,"totalPages":1,"page":0,"size":20}`),
    ]);
    server.respond(answer(200, page, 'application/json'));
    const result = await aerial(['list', '--json']);
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toMatch(/"message":"server sent an unreadable page of images \(invalid UTF-8\)"/);
    expect(result.stdout).toBe('');
  });

  it('invalid UTF-8 in an error body still gives the status and a readable line: exit 5', async () => {
    // Listed, then gone by the time it is deleted.
    server.respond(listingOf(['img_404'], answer(404, Buffer.concat([Buffer.from('no such image '), Buffer.from([0xc0, 0xaf, 0xff])]), 'text/plain')));
    const result = await aerial(['delete', 'img_404', '--yes']);
    expect(result.exitCode).toBe(5);
    expect(errorLine(result)).toMatch(/^error: NotFound — no such image \uFFFD+$/);
  });

  it('a page that is not JSON, or not a page: exit 6', async () => {
    server.respond(answer(200, '<html>hello</html>', 'text/html'));
    const notJson = await aerial(['list']);
    expect(notJson.exitCode).toBe(6);
    expect(errorLine(notJson)).toBe('error: UnexpectedResponse — server sent an unreadable page of images (not JSON)');
    server.respond(answerJson(200, { content: 'nope' }));
    const notPage = await aerial(['list']);
    expect(notPage.exitCode).toBe(6);
    expect(errorLine(notPage)).toMatch(/^error: UnexpectedResponse — server sent an unexpected page of images: content /);
  });

  it('a redirect to another host is not followed: exit 6, the other host saw nothing', async () => {
    other.respond(answerJson(200, { content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 }));
    server.respond((res) => {
      res.writeHead(302, { location: `${other.url}/steal` });
      writeForever(res, 'x'.repeat(1024), 0); // and an endless body, which must not hold the CLI open
    });
    const result = await aerial(['list']);
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toMatch(/UnexpectedRedirect — unexpected redirect \(HTTP 302 to http:\/\/127\.0\.0\.1:\d+\/steal\); not followed$/);
    expect(server.requests).toHaveLength(1);
    expect(other.requests).toEqual([]);
  });

  it('an HTML 502 is retried twice (listing is safe to repeat), then exit 6 with the page title', async () => {
    server.respond(answer(502, '<html><head><title>502 Bad Gateway</title></head><body>upstream</body></html>', 'text/html'));
    const result = await aerial(['list']);
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toBe('error: ServerError — HTML error page: 502 Bad Gateway');
    expect(server.requests).toHaveLength(3);
  });
});

describe('bodies that never end, where the CLI does not even need one', () => {
  it('a delete 200 whose body never ends still finishes promptly: exit 0', async () => {
    server.respond(
      listingOf(['img_1'], (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        writeForever(res, 'deleted ', 100);
      }),
    );
    const result = await aerial(['delete', 'img_1', '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('img_1\n');
    expect(result.ms).toBeLessThan(8000);
  });

  it('generate answered with the wrong content type and an endless body: exit 6 at once', async () => {
    server.respond((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      writeForever(res, 'x'.repeat(4096), 0);
    });
    const result = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'x.jpg']);
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toBe("error: UnexpectedResponse — expected an image/jpeg response, got 'text/plain'");
    expect(result.ms).toBeLessThan(5000);
  });

  it('an error page dripped forever: the request deadline fires and the status is still reported', async () => {
    server.respond((res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      writeForever(res, 'still failing… ', 50);
    });
    const result = await aerial(['generate', '--lat', '1', '--lng', '2', '-o', 'x.jpg'], { AERIAL_TIMEOUT_MS: '500' });
    expect(result.exitCode).toBe(6);
    expect(errorLine(result)).toMatch(/^error: ServerError — HTTP 500$/);
    expect(result.ms).toBeLessThan(5000);
  });
});

describe('response headers as large as Node allows, and larger', () => {
  // The bundle's undici takes its limit from a stand-in for node:http (scripts/shims/undici-http.cjs): Node's, as node:http would give it.
  async function headerServer(headerBytes: number) {
    const { createServer } = await import('node:net');
    const body = JSON.stringify({ content: [], totalElements: 0, totalPages: 0, page: 0, size: 20 });
    const sockets = createServer((socket) => {
      socket.once('data', () => {
        socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-large: ${'a'.repeat(headerBytes)}\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((resolve) => sockets.listen(0, '127.0.0.1', resolve));
    const { port } = sockets.address() as { port: number };
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => sockets.close(() => resolve())) };
  }

  it('takes headers just under 16 KiB, and refuses more (exit 7, naming the overflow)', async () => {
    for (const [bytes, exitCode] of [
      [15_000, 0],
      [17_000, 7],
    ] as const) {
      const large = await headerServer(bytes);
      try {
        const result = await aerial(['list', '--json'], { AERIAL_BASE_URL: large.url });
        expect([bytes, result.exitCode], result.stderr).toEqual([bytes, exitCode]);
        if (exitCode === 0) expect(JSON.parse(result.stdout)).toMatchObject({ content: [] });
        else expect(errorLine(result)).toMatch(/UND_ERR_HEADERS_OVERFLOW/);
      } finally {
        await large.close();
      }
    }
  });

  it('takes larger ones when Node is told to (--max-http-header-size in NODE_OPTIONS)', async () => {
    const large = await headerServer(20_000);
    try {
      const result = await aerial(['list', '--json'], { AERIAL_BASE_URL: large.url, NODE_OPTIONS: '--max-http-header-size=32768' });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ content: [] });
    } finally {
      await large.close();
    }
  });
});
