// The CLI's promises, kept by the library as a program uses it: requests the
// vocabulary refuses never sent (the sandbox's request log stays empty), files
// written as `generate` writes them or refused before paying, every failure a
// RequestError with a machine code and words that name the library's options
// (never a flag), aborts and timeouts among them, options checked, and the
// history walked in pages as `list --all` walks it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  CallbackTimeoutError,
  FileError,
  GenAerial,
  InvalidInputError,
  MaybeChargedError,
  RequestError,
  TimeoutError,
  type ImageRequest,
} from '../../../src/library/index.js';
import { startSandbox, type Sandbox } from '../../../src/library/sandbox.js';

let sandbox: Sandbox;
const work = mkdtempSync(join(tmpdir(), 'aerial-library-guarantees-'));
const clients: GenAerial[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ renderThreads: 0, credits: 1000 });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  sandbox.setFaults({ latencyMs: 0, dropRate: 0 });
  sandbox.clearRequests();
});
afterAll(async () => {
  await sandbox.close();
  rmSync(work, { recursive: true, force: true });
});

function client(options: ConstructorParameters<typeof GenAerial>[0] = {}): GenAerial {
  const made = new GenAerial({ env: { AERIAL_CONFIG_DIR: join(work, 'config') }, apiKey: sandbox.apiKey, baseUrl: sandbox.url, ...options });
  clients.push(made);
  return made;
}

/** What `promise` rejects with (the test fails if it resolves). */
async function failure(promise: Promise<unknown>): Promise<RequestError> {
  const outcome = await promise.then(
    () => new Error('resolved, where a failure was expected'),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(RequestError);
  return outcome as RequestError;
}

const paris = { coordinates: { lat: 48.8584, lng: 2.2945 }, resolution: 'HD' } as const;

describe('a request the vocabulary refuses', () => {
  // What plain JavaScript (or a cast) slips past the types.
  const refused: Array<[string, unknown, RegExp]> = [
    ['lat: 200', { coordinates: { lat: 200, lng: 0 } }, /^coordinates\.lat must be between -90 and 90; got 200$/],
    ['lng: 500', { coordinates: { lat: 0, lng: 500 } }, /^coordinates\.lng must be between -180 and 180; got 500$/],
    ['lat: NaN', { coordinates: { lat: Number.NaN, lng: 0 } }, /^coordinates\.lat must be a finite number; got NaN$/],
    ['11 tags', { coordinates: { lat: 0, lng: 0 }, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, /^tags may hold at most 10 entries; got 11$/],
    ["resolution: 'XL'", { coordinates: { lat: 0, lng: 0 }, resolution: 'XL' }, /^resolution must be one of HD, FHD, UHD; got "XL"$/],
    ['a lowercase enum', { coordinates: { lat: 0, lng: 0 }, zoom: 'high' }, /^zoom must be one of .*; got "high" \(did you mean High\?\)$/],
    ['a misspelt field', { coordinates: { lat: 0, lng: 0 }, zom: 'High' }, /^unknown field zom$/],
    ['latitude for lat', { coordinates: { latitude: 1, lng: 0 } }, /^coordinates has unknown field latitude$/],
    ['an empty tag', { coordinates: { lat: 0, lng: 0 }, tags: ['ok', ' '] }, /^tags\[1\] must be a non-empty string; got " "$/],
    ['a blank prompt', { coordinates: { lat: 0, lng: 0 }, prompt: '  ' }, /^prompt must not be empty$/],
    ['a string for a boolean', { coordinates: { lat: 0, lng: 0 }, saveImage: 'no' }, /^saveImage must be true or false; got "no"$/],
    ['no coordinates', { resolution: 'HD' }, /^coordinates must be an object of lat and lng; got undefined$/],
  ];

  it.each(refused)('%s: an InvalidInputError from every generating call, with nothing sent', async (_what, request, message) => {
    const lib = client();
    const listener = await lib.listen();
    try {
      for (const call of [
        () => lib.generate(request as ImageRequest),
        () => lib.generateToFile(request as ImageRequest, join(work, 'never.jpg')),
        () => lib.generateAsync(request as ImageRequest, { callbackUrl: listener.callbackUrl }),
        () => lib.generateViaWebhook(request as ImageRequest, { timeoutMs: 1000 }),
      ]) {
        const error = await failure(call());
        expect(error).toBeInstanceOf(InvalidInputError);
        expect(error.code).toBe('InvalidInput');
        expect(error.message).toMatch(message);
      }
    } finally {
      await listener.close();
    }
    expect(sandbox.requests()).toEqual([]);
    expect(existsSync(join(work, 'never.jpg'))).toBe(false);
  });
});

describe('generateToFile', () => {
  it('makes a missing directory and saves the image there, with the metadata generate writes', async () => {
    const path = join(work, 'new', 'deeper', 'paris.jpg');
    const saved = await client().generateToFile(paris, path);
    expect(saved).toEqual({ path, bytes: readFileSync(path).length });
    const bytes = readFileSync(path);
    expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    // GPS EXIF and the AI-generated note, as `aerial generate` writes them (files/image-metadata.ts).
    expect(bytes.includes(Buffer.from('Exif\0\0'))).toBe(true);
    expect(bytes.includes(Buffer.from('trainedAlgorithmicMedia'))).toBe(true);
    const plain = await client().generateToFile(paris, join(work, 'new', 'plain.jpg'), { metadata: false });
    expect(readFileSync(plain.path).includes(Buffer.from('Exif\0\0'))).toBe(false);
  });

  it('refuses a target it cannot use before anything is sent, with a FileError naming the problem', async () => {
    mkdirSync(join(work, 'a-directory'), { recursive: true });
    writeFileSync(join(work, 'a-file'), 'x');
    symlinkSync(join(work, 'nowhere', 'x.jpg'), join(work, 'dangling.jpg'));
    writeFileSync(join(work, 'there.jpg'), 'mine');
    const cases: Array<[string, string, RegExp]> = [
      [join(work, 'a-directory'), 'IsADirectory', /a-directory is a directory; name a file$/],
      [join(work, 'a-file', 'x.jpg'), 'NotADirectory', /part of that path is a file, not a directory$/],
      [join(work, 'dangling.jpg'), 'DanglingLink', /is a symbolic link to .*nowhere\/x\.jpg, which does not exist/],
      [join(work, 'there.jpg'), 'AlreadyExists', /there\.jpg already exists; pass \{ overwrite: true \} to replace it$/],
    ];
    for (const [path, code, message] of cases) {
      const error = await failure(client().generateToFile(paris, path));
      expect(error, path).toBeInstanceOf(FileError);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(error.message).not.toMatch(/--[a-z]/);
    }
    expect(sandbox.requests()).toEqual([]);
    expect(readFileSync(join(work, 'there.jpg'), 'utf8')).toBe('mine');
  });

  it('never replaces a file that appears while the image arrives, unless told; the words name the option', async () => {
    sandbox.setFaults({ latencyMs: 400 });
    const path = join(work, 'raced.jpg');
    const saving = client().generateToFile(paris, path);
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(path, 'someone else');
    const error = await failure(saving);
    expect(error).toBeInstanceOf(FileError);
    expect(error).toMatchObject({ code: 'AlreadyExists', remedy: 'overwrite' });
    expect(error.message).toBe(`${path} already exists; pass { overwrite: true } to replace it`);
    expect(readFileSync(path, 'utf8')).toBe('someone else');
  });

  it('with root, saves a plain name inside it and refuses a way out before anything is sent', async () => {
    const root = join(work, 'root');
    mkdirSync(root, { recursive: true });
    symlinkSync(work, join(root, 'out'));
    const lib = client();
    expect((await lib.generateToFile(paris, 'in/side.jpg', { root })).path).toBe(join(root, 'in', 'side.jpg'));
    sandbox.clearRequests();
    for (const [path, code] of [
      ['../escape.jpg', 'OutsideRoot'],
      [join(work, 'abs.jpg'), 'OutsideRoot'],
      ['out/through.jpg', 'OutsideRoot'],
      ['line\u2028break.jpg', 'NotAPlainName'],
    ]) {
      const error = await failure(lib.generateToFile(paris, path!, { root }));
      expect(error, path).toBeInstanceOf(FileError);
      expect(error.code).toBe(code);
    }
    expect(sandbox.requests()).toEqual([]);
    expect(existsSync(join(work, 'escape.jpg')) || existsSync(join(work, 'through.jpg'))).toBe(false);
  });
});

describe('calls aborted or out of time', () => {
  let silent: Server;
  let silentUrl: string;
  beforeAll(async () => {
    // Takes every request and never answers.
    silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('an aborted call is an AbortError, the signal’s reason its cause', async () => {
    const controller = new AbortController();
    const calling = client({ baseUrl: silentUrl }).list({}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user gave up')), 50);
    const error = await failure(calling);
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ code: 'Aborted' });
    expect((error.cause as Error).message).toBe('user gave up');
  });

  it('a signal that timed out is a TimeoutError, its DOMException the cause', async () => {
    const error = await failure(client({ baseUrl: silentUrl }).generate(paris, { signal: AbortSignal.timeout(50) }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.code).toBe('Timeout');
    expect((error.cause as Error).name).toBe('TimeoutError');
  });

  it('timeoutMs ends an attempt on its own timer (AttemptTimeout), never before it', async () => {
    const started = Date.now();
    const error = await failure(client({ baseUrl: silentUrl, timeoutMs: 300, retry: { attempts: { lookup: 1 } } }).list());
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(error).toBeInstanceOf(TimeoutError);
    // The attempt's own limit, not one of undici's stage timeouts (kept on a clock that can run a second late).
    expect(error.code).toBe('AttemptTimeout');
    expect(error.message).toMatch(/timed out waiting for response headers from 127\.0\.0\.1:\d+: none within 0\.3s \(1 attempt\)/);
  });

  it('deadlineMs ends the whole call, its retries included, with a TimeoutError coded Deadline', async () => {
    sandbox.setFaults({ dropRate: 1 });
    const lib = client({ retry: { attempts: { lookup: 5 }, firstDelayMs: 2000, maxDelayMs: 2000 } });
    const error = await failure(lib.list({}, { deadlineMs: 400 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.code).toBe('Deadline');
    // One attempt, then the deadline during the wait before the next.
    expect(sandbox.requests()).toHaveLength(1);
    const everyCall = client({ deadlineMs: 400, retry: { attempts: { lookup: 5 }, firstDelayMs: 2000, maxDelayMs: 2000 } });
    expect((await failure(everyCall.list())).code).toBe('Deadline');
  });

  it('a callback that never came is a TimeoutError that says where to look, in the library’s words', async () => {
    const listener = await client().listen();
    try {
      const error = await failure(listener.waitFor('never-sent', { timeoutMs: 50 }));
      expect(error).toBeInstanceOf(CallbackTimeoutError);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error.message).toBe('no callback for request never-sent within 50ms; it may still finish — look for it later with list() or images()');
    } finally {
      await listener.close();
    }
  });
});

describe('errors name the library’s options, never a flag', () => {
  it('a generation that may have been charged is not sent again unless retry: { retryUnsafe: true }', async () => {
    sandbox.setFaults({ dropRate: 1 });
    const error = await failure(client({ retry: { attempts: { generation: 2 } } }).generate(paris));
    expect(error).toBeInstanceOf(MaybeChargedError);
    expect(error.message).toMatch(/may already have generated \(and charged for\) this image, so it was not retried \(pass retry: \{ retryUnsafe: true \} to send such a request again\)$/);
    expect(sandbox.requests()).toHaveLength(1);
  });

  it('bad options are InvalidInputErrors naming the option, before anything is sent', async () => {
    const cases: Array<[ConstructorParameters<typeof GenAerial>[0], RegExp]> = [
      [{ retry: { firstDelayMs: -1 } }, /^retry\.firstDelayMs must be a whole number from 0 to 2147483647 \(milliseconds\); got -1$/],
      [{ retry: { attempts: { lookup: '3' as unknown as number } } }, /^retry\.attempts\.lookup must be a whole number from 1 to 100; got "3"$/],
      [{ retry: { serverErrors: 'some' as 'all' } }, /^retry\.serverErrors must be one of 'gateway', 'all'; got "some"$/],
      [{ retry: { retryUnsave: true } as never }, /^unknown option retry\.retryUnsave \(did you mean retry\.retryUnsafe\?\)/],
      [{ timeout: 5 } as never, /^unknown option timeout \(did you mean timeoutMs\?\)/],
      [{ deadlineMs: 0 }, /^deadlineMs must be a whole number from 1 to/],
      [{ connections: 1.5 }, /^connections must be a whole number from 1 to 65536; got 1\.5$/],
    ];
    for (const [options, message] of cases) {
      const error = await failure(client(options).list());
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toMatch(message);
    }
    const noProfile = new GenAerial({ env: { AERIAL_CONFIG_DIR: join(work, 'config') }, profile: 'work' });
    clients.push(noProfile);
    expect((await failure(noProfile.list())).message).toBe("profile 'work' does not exist in the config file; pass { apiKey, baseUrl }, or name another profile");
    const lib = client();
    expect((await failure(lib.list({ size: 0 }))).message).toBe('size must be a whole number from 1 to 9007199254740991; got 0');
    expect((await failure(lib.list({}, { deadlineMs: -5 }))).message).toMatch(/^deadlineMs must be/);
    expect((await failure(lib.generateToFile(paris, join(work, 'x.jpg'), { overwrite: 'yes' as unknown as boolean }))).message).toBe('overwrite must be true or false; got "yes"');
    expect(sandbox.requests()).toEqual([]);
  });
});

describe('images()', () => {
  it('walks the history as list --all does: pages of 1,000 unless a size is given', async () => {
    const lib = client();
    for (let i = 0; i < 3; i++) await lib.generate({ coordinates: { lat: i, lng: i }, resolution: 'HD' });
    sandbox.clearRequests();
    const ids: string[] = [];
    for await (const image of lib.images()) ids.push(image.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(sandbox.requests().map((entry) => entry.query.size)).toEqual(['1000']);
    sandbox.clearRequests();
    for await (const image of lib.images({ size: 2 })) expect(ids).toContain(image.id);
    expect(sandbox.requests().map((entry) => entry.query.size)).toEqual(Array(Math.ceil(ids.length / 2)).fill('2'));
  });
});
