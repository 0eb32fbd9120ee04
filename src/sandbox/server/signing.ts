// Temporary image URLs: the sandbox serves images itself at
// /__sandbox/images/<id>.jpg?expires=<epoch seconds>&sig=<HMAC-SHA256(id, expires)>.
// The secret belongs to the data directory, so a URL signed by one process is
// honoured by the next one that opens the same directory.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { URL_LIFETIME_MS } from '../../api/spec.js';

/** Webhook URLs get the same lifetime as list URLs. */
export { URL_LIFETIME_MS };
export const IMAGE_PATH_PREFIX = '/__sandbox/images/';

function signature(secret: string, id: string, expires: number): string {
  return createHmac('sha256', secret).update(`${id}\n${expires}`).digest('hex');
}

/** Rounded up to the next second: a URL is valid for at least the full lifetime. */
export function signedImageUrl(baseUrl: string, secret: string, id: string, nowMs: number): string {
  const expires = Math.ceil((nowMs + URL_LIFETIME_MS) / 1000);
  const query = new URLSearchParams({ expires: String(expires), sig: signature(secret, id, expires) });
  return `${baseUrl}${IMAGE_PATH_PREFIX}${encodeURIComponent(id)}.jpg?${query.toString()}`;
}

export type SignatureCheck =
  | { ok: true }
  | { ok: false; reason: 'unsigned' | 'invalid'; message: string }
  | { ok: false; reason: 'expired'; message: string; expiredAt: Date };

export function checkImageSignature(
  secret: string,
  id: string,
  params: URLSearchParams,
  nowMs: number,
): SignatureCheck {
  const expiresRaw = params.get('expires') ?? '';
  const sig = params.get('sig') ?? '';
  if (!/^\d{1,12}$/.test(expiresRaw) || !/^[0-9a-f]{64}$/.test(sig)) {
    return { ok: false, reason: 'unsigned', message: 'the URL is missing a valid expires or sig parameter' };
  }
  const expires = Number(expiresRaw);
  const expected = Buffer.from(signature(secret, id, expires), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) {
    return { ok: false, reason: 'invalid', message: 'the URL signature does not match; it was altered or is not from this sandbox' };
  }
  if (nowMs >= expires * 1000) {
    const expiredAt = new Date(expires * 1000);
    return { ok: false, reason: 'expired', message: `the URL expired at ${expiredAt.toISOString()}; list the images again for a fresh one`, expiredAt };
  }
  return { ok: true };
}
