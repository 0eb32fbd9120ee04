// The four GenAerial v1 endpoints, as the spec describes them:
//   POST   /api/external/v1/image-generation         synchronous generation → image/jpeg
//   POST   /api/external/v1/image-generation/async   202 {requestId, status}, result by webhook
//   GET    /api/external/v1/image-generation         a page of the caller's images
//   DELETE /api/external/v1/image-generation/{id}    permanent deletion
import { randomUUID } from 'node:crypto';
import type { GenerationRequest, WebhookError, WebhookSuccess } from '../../api/schema.js';
import { API_PATH as API_BASE_PATH } from '../../api/spec.js';
import { findAccountByKey, type StoredAccount } from './accounts.js';
import type { Exchange, SandboxApp } from './app.js';
import {
  generationFailed,
  INJECTED_FAILURE_MESSAGE,
  insufficientCredits,
  parseGenerationRequest,
  priceOf,
  sceneOf,
  type RenderedImage,
} from './generation.js';
import {
  HttpError,
  methodNotAllowed,
  notFound,
  publicBaseUrl,
  readJsonBody,
  resetConnection,
  sendEmpty,
  sendJson,
  validationFailed,
} from './http-io.js';
import { imageRecord, pageOf, parseListQuery, sortImages } from './listing.js';
import { signedImageUrl } from './signing.js';
import type { SandboxState, StoredImage } from './store.js';

export { API_BASE_PATH };

/**
 * --latency is a floor under every answer, counted from the request's arrival:
 * the work (authentication, rendering, persistence) happens while it runs, and
 * each route waits for `ex.earliestAnswer` just before it answers (server.ts
 * does the same for error answers). Work whose answer never goes out because
 * the client left meanwhile is undone where it charged anything.
 */
export async function handleApi(app: SandboxApp, ex: Exchange): Promise<void> {
  if (app.faults.shouldDrop()) {
    // Reset before anything is read or charged: the client sees a network error.
    ex.notes.dropped = true;
    resetConnection(ex.req);
    return;
  }
  ex.earliestAnswer = app.faults.latencyElapsed(ex.arrivedAt, ex.signal);

  const account = await authenticate(app, ex);
  const allowed = app.faults.rateLimit(account.id);
  if (!allowed.ok) {
    throw new HttpError(
      429,
      'RateLimited',
      `rate limit of ${app.faults.current().rateLimit} requests per second exceeded; retry after ${allowed.retryAfterSeconds} s`,
      { 'retry-after': String(allowed.retryAfterSeconds) },
    );
  }

  const path = ex.url.pathname.replace(/\/+$/, '');
  const method = ex.req.method ?? 'GET';
  if (path === API_BASE_PATH) {
    if (method === 'POST') return generateSync(app, ex, account);
    if (method === 'GET') return listImages(app, ex, account);
    throw methodNotAllowed(method, ['GET', 'POST']);
  }
  if (path === `${API_BASE_PATH}/async`) {
    if (method === 'POST') return generateAsync(app, ex, account);
    throw methodNotAllowed(method, ['POST']);
  }
  if (path.startsWith(`${API_BASE_PATH}/`)) {
    const rawId = path.slice(API_BASE_PATH.length + 1);
    if (rawId.includes('/')) throw notFound(`no such endpoint ${ex.url.pathname}`);
    if (method === 'DELETE') return deleteImage(app, ex, account, rawId);
    throw methodNotAllowed(method, ['DELETE']);
  }
  throw notFound(`no such endpoint ${ex.url.pathname}; the API lives under ${API_BASE_PATH}`);
}

async function authenticate(app: SandboxApp, ex: Exchange): Promise<StoredAccount> {
  const header = ex.req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw new HttpError(401, 'Unauthorized', 'missing x-api-key header');
  const account = findAccountByKey((await app.store.snapshot()).accounts, key);
  if (!account) throw new HttpError(401, 'Unauthorized', 'the x-api-key is not a key of this sandbox');
  ex.notes.keyId = account.keyId;
  return account;
}

async function readGenerationRequest(ex: Exchange): Promise<GenerationRequest> {
  let body: unknown;
  try {
    body = await readJsonBody(ex.req);
  } catch (error) {
    ex.notes.body = { unreadable: (error as Error).message };
    throw error;
  }
  ex.notes.body = body;
  return parseGenerationRequest(body);
}

function accountIn(state: SandboxState, accountId: string): StoredAccount {
  const account = state.accounts.find((candidate) => candidate.id === accountId);
  if (!account) throw new HttpError(401, 'Unauthorized', 'the account of this x-api-key no longer exists');
  return account;
}

function newStoredImage(state: SandboxState, accountId: string, request: GenerationRequest, image: RenderedImage, id: string, nowMs: number, inHistory: boolean): StoredImage {
  return {
    id,
    seq: state.nextSeq++,
    accountId,
    createdAt: new Date(nowMs).toISOString(),
    inHistory,
    width: image.width,
    height: image.height,
    bytes: image.jpeg.length,
    scene: sceneOf(request),
  };
}

/**
 * Credits are checked before rendering and charged after it, atomically with
 * storing the record: a failed generation costs nothing, and a 402 never charges.
 * The charge is made before the latency floor has passed; if the answer then
 * cannot be sent (the client left, the sandbox is closing), it is taken back.
 */
async function generateSync(app: SandboxApp, ex: Exchange, account: StoredAccount): Promise<void> {
  const request = await readGenerationRequest(ex);
  const price = priceOf(request);
  if (account.credits < price) throw insufficientCredits(account.credits, price);
  if (app.faults.shouldFailGeneration()) throw generationFailed(INJECTED_FAILURE_MESSAGE);
  const image = await app.renderer.render(request, ex.signal);

  const save = request.saveImage !== false;
  const id = randomUUID();
  if (save) await app.store.writeImage(id, image.jpeg);
  let balance: number;
  try {
    balance = await app.store.update((state) => {
      const current = accountIn(state, account.id);
      if (current.credits < price) throw insufficientCredits(current.credits, price);
      current.credits -= price;
      if (save) state.images.push(newStoredImage(state, account.id, request, image, id, app.now(), true));
      return current.credits;
    });
  } catch (error) {
    if (save) await app.store.removeImageFile(id).catch(() => {});
    throw error;
  }

  await ex.earliestAnswer;
  if (ex.signal.aborted) {
    await takeBack(app, account.id, price, save ? id : undefined);
    return;
  }
  if (save) ex.notes.imageId = id;
  ex.res.writeHead(200, {
    'content-type': 'image/jpeg',
    'content-length': String(image.jpeg.length),
    'cache-control': 'no-store',
    'x-sandbox-credits-used': String(price),
    'x-sandbox-credits-remaining': String(balance),
    ...(save ? { 'x-sandbox-image-id': id } : {}),
  });
  ex.res.end(image.jpeg);
}

/** The spec only says the header is required; the sandbox also insists on an absolute http(s) URL. */
function parseCallbackUrl(header: string | string[] | undefined): string {
  const raw = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!raw) throw validationFailed('x-callback-url header is required: the absolute http(s) URL that receives the result');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationFailed(`x-callback-url must be an absolute http(s) URL; got '${raw.slice(0, 200)}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw validationFailed(`x-callback-url must be an absolute http(s) URL; got '${raw.slice(0, 200)}'`);
  }
  return url.toString();
}

interface AsyncJob {
  requestId: string;
  accountId: string;
  request: GenerationRequest;
  price: number;
  callbackUrl: string;
  baseUrl: string;
}

/** Async generation is charged at acceptance and refunded if it fails or never runs. */
async function generateAsync(app: SandboxApp, ex: Exchange, account: StoredAccount): Promise<void> {
  const header = ex.req.headers['x-callback-url'];
  if (typeof header === 'string') ex.notes.callbackUrl = header.slice(0, 2000);
  const callbackUrl = parseCallbackUrl(header);
  const request = await readGenerationRequest(ex);
  const price = priceOf(request);
  await app.store.update((state) => {
    const current = accountIn(state, account.id);
    if (current.credits < price) throw insufficientCredits(current.credits, price);
    current.credits -= price;
  });
  await ex.earliestAnswer;
  if (ex.signal.aborted) {
    // Nobody hears of this request: no job, no charge.
    await takeBack(app, account.id, price);
    return;
  }

  const job: AsyncJob = {
    requestId: randomUUID(),
    accountId: account.id,
    request,
    price,
    callbackUrl,
    baseUrl: publicBaseUrl(ex.req, app.url),
  };
  ex.notes.requestId = job.requestId;
  app.background.start(
    (signal) => completeAsyncGeneration(app, job, signal),
    (error) => app.warn(`async request ${job.requestId} failed inside the sandbox: ${(error as Error).message}`),
  );
  sendJson(ex.res, 202, { requestId: job.requestId, status: 'processing' });
}

/**
 * Undoes a charge whose result nobody received: the credits go back, and the
 * image (when one was stored) leaves the history before its file is removed.
 */
async function takeBack(app: SandboxApp, accountId: string, price: number, imageId?: string): Promise<void> {
  await app.store.update((state) => {
    const account = state.accounts.find((candidate) => candidate.id === accountId);
    if (account) account.credits += price;
    const index = imageId === undefined ? -1 : state.images.findIndex((image) => image.id === imageId);
    if (index >= 0) state.images.splice(index, 1);
  });
  if (imageId !== undefined) await app.store.removeImageFile(imageId);
}

type AsyncOutcome = { imageId: string; signingSecret: string } | { error: unknown };

/** Renders and stores the image of an accepted request; a failure is refunded at once. */
async function makeAsyncImage(app: SandboxApp, job: AsyncJob, signal: AbortSignal): Promise<AsyncOutcome> {
  try {
    if (app.faults.shouldFailGeneration()) throw generationFailed(INJECTED_FAILURE_MESSAGE);
    const image = await app.renderer.render(job.request, signal);
    const id = randomUUID();
    await app.store.writeImage(id, image.jpeg);
    const signingSecret = await app.store.update((state) => {
      state.images.push(newStoredImage(state, job.accountId, job.request, image, id, app.now(), job.request.saveImage !== false));
      return state.signingSecret;
    });
    return { imageId: id, signingSecret };
  } catch (error) {
    await takeBack(app, job.accountId, job.price);
    return { error };
  }
}

/** The webhook goes out no sooner than --latency after the 202; the image is made meanwhile. */
async function completeAsyncGeneration(app: SandboxApp, job: AsyncJob, signal: AbortSignal): Promise<void> {
  const latencyElapsed = app.faults.latencyElapsed(performance.now(), signal);
  const outcome = await makeAsyncImage(app, job, signal);
  await latencyElapsed;
  if (signal.aborted) {
    // The sandbox is closing before the result was sent: nothing to charge for (a failure is already refunded).
    if ('imageId' in outcome) await takeBack(app, job.accountId, job.price, outcome.imageId);
    return;
  }
  const payload: WebhookSuccess | WebhookError =
    'imageId' in outcome
      ? {
          requestId: job.requestId,
          signedUrl: signedImageUrl(job.baseUrl, outcome.signingSecret, outcome.imageId, app.now()),
          generatedImageId: outcome.imageId,
          creditsUsed: job.price,
        }
      : {
          requestId: job.requestId,
          errorCode: outcome.error instanceof HttpError ? outcome.error.code : 'ErrorGeneratingImage',
          errorMessage: (outcome.error as Error).message,
        };
  await app.webhooks.deliver(job.callbackUrl, payload, signal);
}

async function listImages(app: SandboxApp, ex: Exchange, account: StoredAccount): Promise<void> {
  const query = parseListQuery(ex.url.searchParams);
  const state = await app.store.snapshot();
  const mine = state.images.filter((image) => image.accountId === account.id && image.inHistory);
  const page = pageOf(sortImages(mine, query.sort), query.page, query.size);
  const baseUrl = publicBaseUrl(ex.req, app.url);
  await ex.earliestAnswer;
  // Signed when answered: the URLs live 2 hours from the answer, not from the request.
  const retrievedAt = app.now();
  sendJson(ex.res, 200, {
    ...page,
    content: page.content.map((image) => imageRecord(image, signedImageUrl(baseUrl, state.signingSecret, image.id, retrievedAt))),
  });
}

/** Someone else's id answers exactly like an unknown one: no way to probe other accounts. */
async function deleteImage(app: SandboxApp, ex: Exchange, account: StoredAccount, rawId: string): Promise<void> {
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    id = rawId;
  }
  const missing = () => notFound(`no image with id '${id.slice(0, 100)}' in this account`);
  const state = await app.store.snapshot();
  if (!state.images.some((image) => image.id === id && image.accountId === account.id && image.inHistory)) throw missing();
  await app.store.update((fresh) => {
    const index = fresh.images.findIndex((image) => image.id === id && image.accountId === account.id && image.inHistory);
    if (index < 0) throw missing();
    fresh.images.splice(index, 1);
  });
  await app.store.removeImageFile(id);
  ex.notes.imageId = id;
  // A deletion stands even when its client leaves before the answer: it charged nothing.
  await ex.earliestAnswer;
  sendEmpty(ex.res, 200);
}
