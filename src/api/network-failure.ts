// What a request that got no (complete) answer is reported as: one line that
// names the host (or the proxy) involved, what failed, and how many attempts
// were made. A certificate that cannot be verified says how to
// trust a company CA; a timeout names the stage that ran out.
import { printable } from '../text/printable.js';
import { NetworkError, RequestError, TimeoutError } from './errors.js';
import { maskProxy, proxyFor, type ProxyEndpoint, type ProxySettings } from './proxy.js';
import { attemptsText, timeoutMessage } from './timeouts.js';

/** The request a failure happened to, and the limits it had. */
export interface FailureScene {
  url: URL;
  /** Attempts made so far, this one included. */
  attempts: number;
  /** Whether the request carried a body the server may have acted on. */
  bodySent: boolean;
  connectMs: number;
  headersMs: number;
  bodyIdleMs: number;
  proxy?: ProxySettings;
  /** How long the call has taken, all attempts included, when the failure ends it. */
  elapsedMs?: number;
  /** NODE_EXTRA_CA_CERTS as set, for the advice on an unverifiable certificate. */
  extraCaCerts?: string;
  /** The caller's signal: what it aborted the request with is the caller's own, passed on as it is. */
  signal?: AbortSignal;
}

interface ErrorLike {
  code?: string;
  message?: string;
  name?: string;
  cause?: unknown;
  address?: string;
  port?: number;
  hostname?: string;
}

/** Node's and undici's codes for a certificate that cannot be verified. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** Codes of failures that happened before any connection was open: the server never saw the request. */
const NOT_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

const PLAIN_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up right now',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  UND_ERR_SOCKET: 'connection closed by the other side',
};

/** Failures that another attempt will not mend. */
const PERMANENT_CODES = new Set([...CERTIFICATE_CODES, 'ProxyAuthenticationRequired', 'ProxyRefused']);

export function isTransient(failure: RequestError): boolean {
  return failure instanceof NetworkError && !PERMANENT_CODES.has(failure.code);
}

/** Like printable(), for text that may be markup: tags are dropped. */
export function oneLine(text: string, max = 200): string {
  return printable(text.replace(/<[^>]*>/g, ' '), max);
}

function named(endpoint: ProxyEndpoint): string {
  return `the proxy ${endpoint.url.host} (${endpoint.variable})`;
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

/**
 * The proxy, when a connection error is about it rather than the target: a
 * proxied request only ever connects to its proxy, but NO_PROXY sends some
 * requests direct, so the error's own address decides.
 */
function failedProxy(err: ErrorLike, proxy: ProxyEndpoint | undefined, target: URL): ProxyEndpoint | undefined {
  if (!proxy) return undefined;
  if (/did not answer CONNECT/.test(err.message ?? '')) return proxy;
  const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, '');
  if (err.hostname) return err.hostname === proxyHost ? proxy : undefined;
  // undici's connect timeout names the address only in its message.
  const attempted = /attempted address: (\S+):(\d+)/.exec(err.message ?? '');
  const address = err.address ?? attempted?.[1];
  const port = err.port ?? (attempted ? Number(attempted[2]) : undefined);
  if (port !== undefined && portOf(proxy.url) !== portOf(target)) return port === portOf(proxy.url) ? proxy : undefined;
  return address !== undefined && address === proxyHost && address !== target.hostname ? proxy : undefined;
}

/** The proxy wants credentials it was not given, or refused the ones it was. */
export function proxyAuthFailure(proxy: ProxyEndpoint, host: string, status: number): NetworkError {
  const message = proxy.url.username
    ? `${named(proxy)} refused the credentials in ${proxy.variable} (${maskProxy(proxy.url)}) for the request to ${host} (HTTP ${status})`
    : `${named(proxy)} wants credentials for the request to ${host} (HTTP ${status}): add them to ${proxy.variable} as http://user:password@host:port`;
  return new NetworkError(message, 'ProxyAuthenticationRequired', false);
}

function certificateFailure(err: ErrorLike, code: string, scene: FailureScene): NetworkError {
  const advice = scene.extraCaCerts
    ? `NODE_EXTRA_CA_CERTS (${scene.extraCaCerts}) does not hold the CA that signed it: add your company's CA certificate to that PEM file`
    : "if your company's CA signs it, set NODE_EXTRA_CA_CERTS to that CA's PEM file";
  // Node 23 and later append advice of their own ("; if the root CA is installed locally, try running
  // Node.js with --use-system-ca"), which names a flag a CLI's user cannot pass: this line gives its own.
  const what = oneLine((err.message ?? code).replace(/;\s*if the root CA is installed locally.*$/s, ''), 160);
  return new NetworkError(`cannot verify the TLS certificate of ${scene.url.host}: ${what} (${code}); ${advice}`, code, false);
}

/**
 * Turns a network-level failure into a NetworkError saying what failed where,
 * and whether the server may have acted on the request. What is not one passes
 * as it is: this layer's own failures (a refused address), and the reason the
 * caller aborted with.
 */
export function networkFailure(error: unknown, scene: FailureScene): Error {
  if (error instanceof RequestError) return error;
  if (scene.signal?.aborted && error === scene.signal.reason) return error as Error;
  const raw = error as ErrorLike;
  // A certificate problem inside a proxy tunnel arrives wrapped.
  const err = (raw?.code === 'UND_ERR_PRX_TLS' && raw.cause ? raw.cause : raw) as ErrorLike;
  const code = err?.code ?? 'NetworkError';
  const host = scene.url.host;
  const tries = attemptsText(scene.attempts, scene.elapsedMs);
  const proxy = proxyFor(scene.proxy, scene.url.protocol);

  if (CERTIFICATE_CODES.has(code)) return certificateFailure(err, code, scene);

  // undici reports a proxy's refusal as an invalid argument (plain forwarding) or an abort (CONNECT).
  const refusal = /Proxy Authentication Required \((\d+)\)|Proxy response \((\d+)\) !== 200/.exec(err?.message ?? '');
  if (!refusal && raw?.name === 'AbortError') return raw as Error;
  if (refusal && proxy) {
    const status = Number(refusal[1] ?? refusal[2]);
    // Through a tunnel, a 401 can only be the proxy's own (tinyproxy answers a wrong password so).
    if (status === 407 || status === 401) return proxyAuthFailure(proxy, host, status);
    return new NetworkError(`${named(proxy)} refused to open a tunnel to ${host} (HTTP ${status}; ${tries})`, 'ProxyRefused', false);
  }

  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    const via = failedProxy(err, proxy, scene.url);
    return new TimeoutError(timeoutMessage('connect', via ? `${named(via)} for ${host}` : host, scene.connectMs, scene.attempts, false, scene.elapsedMs), 'ConnectTimeout', false);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new TimeoutError(timeoutMessage('headers', host, scene.headersMs, scene.attempts, false, scene.elapsedMs), 'HeadersTimeout', scene.bodySent);
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new TimeoutError(timeoutMessage('body', host, scene.bodyIdleMs, scene.attempts), 'BodyTimeout', true);
  }

  const words = PLAIN_WORDS[code] ?? (err?.message ? oneLine(err.message, 120) : code);
  const detail = words === code ? `(${code}; ${tries})` : `${words} (${code}; ${tries})`;
  if (NOT_CONNECTED_CODES.has(code)) {
    const via = failedProxy(err, proxy, scene.url);
    return new NetworkError(`could not connect to ${via ? `${named(via)} for ${host}` : host}: ${detail}`, code, false);
  }
  return new NetworkError(`connection to ${host} failed: ${detail}`, code, scene.bodySent);
}

/** A body that did not finish within its deadline (endless or drip-fed: the idle timeout never catches those). */
export function responseTimeout(host: string, deadlineMs: number, attempts: number): NetworkError {
  return new TimeoutError(timeoutMessage('body', host, deadlineMs, attempts, true), 'ResponseTimeout', true);
}
