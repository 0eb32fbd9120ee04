// A stand-in for the list endpoint over a history of any length (a million
// images and more) that holds none of it: every page is made when asked for,
// each record derived from its place in the history, so the server's memory
// stays that of one page whatever `count` is. Oldest first by default, as
// `createdAt,asc`; `createdAt,desc` (or any `,desc`) reverses it. It grants at
// most `maxPageSize` records a page, cutting a larger `size` as Spring Data
// does, and answers image downloads (/images/…) with one small JPEG, so
// `export` can run against it too. Used by `npm run bench` and by the tests.
import { createServer } from 'node:http';
import { smallJpeg } from './instant-server.mjs';

const DAY_MS = 24 * 3600 * 1000;
const EPOCH = Date.parse('2030-01-01T00:00:00Z');
const RESOLUTIONS = ['HD', 'FHD', 'UHD'];

/** The id of the image at `index` (0 = oldest): a UUID in shape, 36 characters, as the service's are. */
export function historyId(index) {
  return `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
}

/** The index of an id historyId made, or -1. */
export function historyIndex(id) {
  const match = /^00000000-0000-4000-8000-([0-9a-f]{12})$/.exec(id);
  return match ? parseInt(match[1], 16) : -1;
}

/** The record of the image at `index`, as the list endpoint sends it (with scene fields, as the sandbox's). */
export function historyRecord(base, index) {
  const id = historyId(index);
  return {
    id,
    url: `${base}/images/${id}.jpg?expires=${EPOCH + 2 * 3600 * 1000}&signature=${(index * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
    coordinates: { latitude: ((index % 17_000) / 100 - 85), longitude: ((Math.floor(index / 17_000) % 36_000) / 100 - 180) },
    resolution: RESOLUTIONS[index % 3],
    createdAt: new Date(EPOCH + Math.floor((index * DAY_MS) / 1000)).toISOString(),
    zoom: 'Medium',
    aspectRatio: 'Landscape',
  };
}

/**
 * Listens on a free loopback port (`image`: the JPEG every download gets, smallJpeg() unless given; `imageLatencyMs`: how long
 * each download waits before its first byte, as a storage host far away makes it wait); resolves with { url, count, listRequests(),
 * imageRequests(), sizesAsked(), reset(), close() }.
 */
export function startHistoryServer({ count, maxPageSize = 1000, image = smallJpeg(), imageLatencyMs = 0 } = {}) {
  let listRequests = 0;
  let imageRequests = 0;
  const sizesAsked = new Set();
  let base = '';
  const server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/images/')) {
      imageRequests++;
      const send = () => res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) }).end(image);
      if (imageLatencyMs > 0) setTimeout(send, imageLatencyMs);
      else send();
      return;
    }
    if (req.method !== 'GET' || url.pathname !== '/api/external/v1/image-generation') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 404, error: 'NotFound', message: 'no such route' }));
      return;
    }
    listRequests++;
    const page = Number(url.searchParams.get('page') ?? 0);
    const asked = Number(url.searchParams.get('size') ?? 20);
    sizesAsked.add(asked);
    const size = Math.max(1, Math.min(asked, maxPageSize));
    const newestFirst = url.searchParams.getAll('sort').some((sort) => /,\s*desc$/i.test(sort));
    const content = [];
    for (let place = page * size; place < Math.min(count, (page + 1) * size); place++) content.push(historyRecord(base, newestFirst ? count - 1 - place : place));
    const body = JSON.stringify({ content, totalElements: count, totalPages: Math.ceil(count / size), page, size });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      base = `http://127.0.0.1:${server.address().port}`;
      resolve({
        url: base,
        count,
        listRequests: () => listRequests,
        imageRequests: () => imageRequests,
        sizesAsked: () => [...sizesAsked],
        reset() {
          listRequests = 0;
          imageRequests = 0;
          sizesAsked.clear();
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(done);
          }),
      });
    });
  });
}
