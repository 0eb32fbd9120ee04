// `list --all --json` in-process against a real server whose pages carry what
// the fast path must still catch: the key in records (as it is, URL-encoded,
// inside base64 of "Bearer <key>", written with JSON \u escapes that hide it
// from a search of the page's text), characters a terminal acts on, and a
// page that repeats the last records of the one before (a history that
// shifted). Every record comes out once, in order, exactly as sent where it
// held nothing to redact; no form of the key comes out anywhere.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretForms } from '../../../../src/text/secrets.js';
import { registerSecret } from '../../../helpers/cli.js';
import { runInProcess, TestTerminal } from '../../../helpers/terminal.js';

const KEY = 'list-all-json-key-7Qx9';
const record = (n: number, extra: Record<string, unknown> = {}) => ({
  id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
  url: `https://img.example/${n}.jpg?expires=1&signature=ab`,
  coordinates: { latitude: n / 100, longitude: -n / 100 },
  resolution: 'HD',
  createdAt: '2030-01-01T00:00:00Z',
  ...extra,
});

/** Three pages of 4; page 1 starts with page 0's last record again; the key's forms and terminal characters in some records. */
function pages(): string[] {
  const content = [
    [record(0), record(1, { note: `sent ${KEY} back` }), record(2, { title: 'line\u2028break \u009b2J' }), record(3)],
    [record(3), record(4, { link: `https://x.example/?k=${encodeURIComponent(KEY)}` }), record(5), record(6, { auth: Buffer.from(`Bearer ${KEY}`).toString('base64') })],
    [record(7), record(8), record(9, { note: 'plain' }), record(10)],
  ];
  return content.map((page, index) => {
    const text = JSON.stringify({ content: page, totalElements: 12, totalPages: 3, page: index, size: 4 });
    // On the last page the key is written with \u escapes: the text holds no form of it, the value does.
    return index === 2 ? text.replace('"plain"', `"${[...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`) : text;
  });
}

describe('list --all --json', () => {
  let server: Server;
  let url = '';
  const served = pages();
  beforeAll(async () => {
    registerSecret(KEY);
    server = createServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 0);
      res.writeHead(200, { 'content-type': 'application/json' }).end(served[page] ?? JSON.stringify({ content: [], totalElements: 12, totalPages: 3, page, size: 4 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const tty of [false, true]) {
    it(`${tty ? 'on a terminal' : 'piped'}: every record once, in order; the key in none of its forms; terminal characters escaped`, async () => {
      const result = await runInProcess(['list', '--all', '--json'], new TestTerminal({ env: { AERIAL_BASE_URL: url, AERIAL_API_KEY: KEY }, tty: { stdout: tty }, columns: 100 }));
      expect(result.exitCode, result.stderr).toBe(0);
      for (const form of secretForms(KEY)) expect(result.stdout).not.toContain(form);
      // Written as escapes, the same characters once parsed.
      expect(result.stdout).not.toMatch(/[\u2028\u009b]/);
      expect(result.stdout).toContain('\\u2028');
      const page = JSON.parse(result.stdout) as { content: Array<Record<string, unknown>>; totalElements: number; size: number };
      expect(page.content.map((r) => r.id)).toEqual(Array.from({ length: 11 }, (_, n) => record(n).id));
      expect(page).toMatchObject({ totalElements: 12, size: 11, page: 0, totalPages: 3 });
      const sent = served.flatMap((text) => (JSON.parse(text) as { content: Array<Record<string, unknown>> }).content);
      const byId = new Map(sent.map((r) => [r.id, r]));
      for (const got of page.content) {
        const n = parseInt(String(got.id).slice(-12), 16);
        if ([1, 4, 6, 9].includes(n)) expect(JSON.stringify(got)).toContain('***');
        else expect(got).toEqual(byId.get(got.id));
      }
      expect(page.content[2]!.title).toBe('line\u2028break \u009b2J');
    });
  }
});
