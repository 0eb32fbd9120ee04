// A stand-in for the service that costs nothing: every POST to the generation
// endpoint is answered at once with one small JPEG, made here. It counts what
// it answered and remembers when the first request arrived, so a benchmark
// (or a test) can time a client from its start to its first request.
import { createServer } from 'node:http';
import jpeg from 'jpeg-js';

/** A 64×64 grey JPEG: a whole image, as a client checks it, of about a kilobyte. */
export function smallJpeg() {
  const width = 64;
  const height = 64;
  const data = Buffer.alloc(width * height * 4, 0x80);
  return jpeg.encode({ data, width, height }, 50).data;
}

/** Listens on a free loopback port; resolves with { url, answered(), firstArrival(), reset(), close() }. */
export function startInstantServer(image = smallJpeg()) {
  let answered = 0;
  let first;
  const server = createServer((req, res) => {
    first ??= Date.now();
    req.resume();
    req.on('end', () => {
      answered++;
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) });
      res.end(image);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        answered: () => answered,
        firstArrival: () => first,
        reset() {
          answered = 0;
          first = undefined;
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(done);
          }),
      }),
    );
  });
}
