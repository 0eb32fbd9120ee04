// The sandbox's own endpoints, outside /api and without x-api-key:
//   GET    /__sandbox/images/<id>.jpg?expires&sig  signed image download (list url, webhook signedUrl)
//   GET    /__sandbox/requests      the request log;  DELETE clears it
//   GET    /__sandbox/webhooks      webhook delivery attempts;  DELETE clears them
//   POST   /__sandbox/accounts      {credits?, key?} → 201 {key, keyId, credits}
//   GET    /__sandbox/accounts/<key> → {keyId, credits, images}
//   GET    /__sandbox/health        → {status: "ok", renderThreads}
//   GET    /openapi.json            the OpenAPI document of the v1 API (docs/openapi.yaml)
import { readFile } from 'node:fs/promises';
import { findBuiltFile } from '../../build-outputs/built-files.js';
import { creditsProblem, DEFAULT_CREDITS, findAccountByKey, keyProblem, newAccount, newApiKey } from './accounts.js';
import type { Exchange, SandboxApp } from './app.js';
import { HttpError, methodNotAllowed, notFound, readOptionalJson, sendJson, StorageError, validationFailed } from './http-io.js';
import { checkImageSignature, IMAGE_PATH_PREFIX, URL_LIFETIME_MS, type SignatureCheck } from './signing.js';
import { isSafeId } from './store.js';

export const CONTROL_PREFIX = '/__sandbox';
/** Where the sandbox serves the OpenAPI document, as JSON (the build converts docs/openapi.yaml). */
export const OPENAPI_PATH = '/openapi.json';
const OPENAPI_FILE = 'openapi.json';

/** Whether a path is one of the sandbox's own endpoints (no key needed), handled by handleControl. */
export function isControlPath(pathname: string): boolean {
  return pathname.startsWith(`${CONTROL_PREFIX}/`) || pathname === OPENAPI_PATH;
}

/** Control calls are not logged (one of them carries a key in its path); image downloads are. */
export function isLoggedPath(pathname: string): boolean {
  return !isControlPath(pathname) || pathname.startsWith(IMAGE_PATH_PREFIX);
}

export async function handleControl(app: SandboxApp, ex: Exchange): Promise<void> {
  const path = ex.url.pathname;
  const method = ex.req.method ?? 'GET';
  if (path.startsWith(IMAGE_PATH_PREFIX)) {
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, ['GET', 'HEAD']);
    return serveImage(app, ex, path.slice(IMAGE_PATH_PREFIX.length));
  }
  switch (path) {
    case OPENAPI_PATH:
      if (method === 'GET' || method === 'HEAD') return serveOpenApi(ex);
      throw methodNotAllowed(method, ['GET', 'HEAD']);
    case `${CONTROL_PREFIX}/requests`:
      if (method === 'GET') return sendJson(ex.res, 200, app.log.entries());
      if (method === 'DELETE') return sendJson(ex.res, 200, { cleared: app.log.clear() });
      throw methodNotAllowed(method, ['GET', 'DELETE']);
    case `${CONTROL_PREFIX}/webhooks`:
      if (method === 'GET') return sendJson(ex.res, 200, app.webhooks.attempts());
      if (method === 'DELETE') return sendJson(ex.res, 200, { cleared: app.webhooks.clear() });
      throw methodNotAllowed(method, ['GET', 'DELETE']);
    case `${CONTROL_PREFIX}/accounts`:
      if (method === 'POST') return createAccountRoute(app, ex);
      throw methodNotAllowed(method, ['POST']);
    case `${CONTROL_PREFIX}/health`:
      if (method === 'GET') return sendJson(ex.res, 200, { status: 'ok', renderThreads: app.renderer.threads });
      throw methodNotAllowed(method, ['GET']);
  }
  if (path.startsWith(`${CONTROL_PREFIX}/accounts/`)) {
    if (method !== 'GET') throw methodNotAllowed(method, ['GET']);
    return showAccount(app, ex, path.slice(`${CONTROL_PREFIX}/accounts/`.length));
  }
  throw notFound(`no such sandbox endpoint ${path}`);
}

let openApi: Promise<Buffer> | undefined;

/** The OpenAPI document, read once; a sandbox built without it says so. */
async function serveOpenApi(ex: Exchange): Promise<void> {
  openApi ??= (async () => {
    const file = findBuiltFile(OPENAPI_FILE);
    if (!file) throw new Error(`the OpenAPI document (${OPENAPI_FILE}) is missing; run npm run build`);
    return readFile(file);
  })();
  const document = await openApi.catch((error: unknown) => {
    openApi = undefined;
    throw error;
  });
  ex.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(document.length), 'access-control-allow-origin': '*' });
  ex.res.end(ex.req.method === 'HEAD' ? undefined : document);
}

/**
 * Signature first (403 for tampered or expired), then existence (404 once
 * deleted), each refused as S3 refuses a presigned URL: the storage's XML
 * error, with S3's codes (AccessDenied, SignatureDoesNotMatch, NoSuchKey).
 */
async function serveImage(app: SandboxApp, ex: Exchange, name: string): Promise<void> {
  const decoded = safeDecode(name);
  const id = decoded.endsWith('.jpg') ? decoded.slice(0, -4) : decoded;
  const state = await app.store.snapshot();
  const now = app.now();
  const check = checkImageSignature(state.signingSecret, id, ex.url.searchParams, now);
  if (!check.ok) throw refusedUrl(check, now);
  const gone = () => new StorageError(404, 'NoSuchKey', `The specified key does not exist (${id.slice(0, 100)}.jpg: this image was deleted).`, { Key: `${id.slice(0, 100)}.jpg` });
  if (!decoded.endsWith('.jpg') || !isSafeId(id) || !state.images.some((image) => image.id === id)) throw gone();
  const jpeg = await app.store.readImage(id);
  if (!jpeg) throw gone();
  ex.notes.imageId = id;
  ex.res.writeHead(200, {
    'content-type': 'image/jpeg',
    'content-length': String(jpeg.length),
    'cache-control': `private, max-age=${URL_LIFETIME_MS / 1000}`,
  });
  ex.res.end(ex.req.method === 'HEAD' ? undefined : jpeg);
}

function refusedUrl(check: Exclude<SignatureCheck, { ok: true }>, now: number): StorageError {
  switch (check.reason) {
    case 'expired':
      return new StorageError(403, 'AccessDenied', `Request has expired (${check.message})`, { Expires: check.expiredAt.toISOString(), ServerTime: new Date(now).toISOString() });
    case 'invalid':
      return new StorageError(403, 'SignatureDoesNotMatch', `The request signature we calculated does not match the signature you provided (${check.message}).`);
    case 'unsigned':
      return new StorageError(403, 'AccessDenied', `Query-string authentication requires the expires and sig parameters (${check.message}).`);
  }
}

async function createAccountRoute(app: SandboxApp, ex: Exchange): Promise<void> {
  const body = await readOptionalJson(ex.req);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw validationFailed('body must be a JSON object {credits?, key?}');
  const { credits = DEFAULT_CREDITS, key, ...rest } = body as { credits?: unknown; key?: unknown };
  const unknown = Object.keys(rest);
  if (unknown.length) throw validationFailed(`unknown field(s) ${unknown.join(', ')}; expected {credits?, key?}`);
  const creditIssue = creditsProblem(credits);
  if (creditIssue) throw validationFailed(`credits ${creditIssue}`);
  if (key !== undefined) {
    if (typeof key !== 'string') throw validationFailed('key must be a string');
    const keyIssue = keyProblem(key);
    if (keyIssue) throw validationFailed(`key ${keyIssue}`);
  }
  const account = await app.store.update((state) => {
    if (typeof key === 'string' && findAccountByKey(state.accounts, key)) {
      throw new HttpError(409, 'Conflict', 'an account with this key already exists');
    }
    const created = newAccount(typeof key === 'string' ? key : newApiKey(), credits as number, app.now());
    state.accounts.push(created);
    return { ...created }; // a copy: later updates of the same write must not change what this one answered
  });
  sendJson(ex.res, 201, { key: account.key, keyId: account.keyId, credits: account.credits });
}

async function showAccount(app: SandboxApp, ex: Exchange, rawKey: string): Promise<void> {
  const state = await app.store.snapshot();
  const account = findAccountByKey(state.accounts, safeDecode(rawKey));
  if (!account) throw notFound('no account has this key');
  const images = state.images.filter((image) => image.accountId === account.id && image.inHistory).length;
  sendJson(ex.res, 200, { keyId: account.keyId, credits: account.credits, images });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
