// The pure parts of the network settings: how long a lookup can take at
// worst, how proxy variables are read and shown, how base URLs are
// normalised, and what each network failure is reported as.
import { describe, expect, it } from 'vitest';
import { InvalidInputError, NetworkError } from '../../../src/api/errors.js';
import { cliErrorOf } from '../../../src/lifecycle/errors.js';
import { isTransient, networkFailure, type FailureScene } from '../../../src/api/network-failure.js';
import { describeProxies, maskProxy, proxyFor, proxySecrets, readProxySettings } from '../../../src/api/proxy.js';
import { DEFAULT_RETRY_POLICY, worstCaseMs } from '../../../src/api/retry.js';
import { CallBudget, DEFAULT_TIMEOUTS, readWaitSettings, timeoutsOf } from '../../../src/api/timeouts.js';
import { DEFAULT_BASE_URL, resolveSettings } from '../../../src/config/config.js';
import { hadApiPath, validateBaseUrl } from '../../../src/input/flags.js';

describe('how long a lookup can take', () => {
  const lookup = DEFAULT_TIMEOUTS.calls.lookup;
  const { connectMs } = DEFAULT_TIMEOUTS;

  it('a server that accepts and never answers is given up on in 55 s, after 3 attempts', () => {
    // 20 s, 0.5 s backoff, 20 s, 1 s backoff, then what is left of the 55 s budget (13.5 s).
    expect(worstCaseMs(lookup, 'lookup', 0, 1)).toBe(55_000);
  });

  it('at worst (every connection taking its whole connect limit first) within 90 s, direct or through a proxy tunnel', () => {
    expect(worstCaseMs(lookup, 'lookup', connectMs, 1)).toBeLessThanOrEqual(90_000);
    // Through a tunnel a connection has three steps (TCP to the proxy, CONNECT, TLS), each with the connect limit.
    expect(worstCaseMs(lookup, 'lookup', connectMs, 3)).toBeLessThanOrEqual(90_000);
    expect(worstCaseMs(lookup, 'lookup', connectMs, 3)).toBe(85_000);
  });

  it('without the budget, 3 attempts of 20 s plus 10 s connects would pass 90 s: the budget is what bounds it', () => {
    expect(worstCaseMs({ ...lookup, totalMs: undefined }, 'lookup', connectMs, 3)).toBeGreaterThan(90_000);
  });

  it('AERIAL_TIMEOUT_MS sets every stage of every call and drops the budget; attempts stay', () => {
    const timeouts = timeoutsOf(300);
    expect(timeouts.connectMs).toBe(300);
    for (const limits of Object.values(timeouts.calls)) {
      expect(limits).toMatchObject({ headersMs: 300, bodyIdleMs: 300, responseMs: 300 });
      expect(limits.totalMs).toBeUndefined();
    }
    expect(DEFAULT_RETRY_POLICY.attempts.lookup).toBe(3);
    expect(DEFAULT_RETRY_POLICY.attempts.generation).toBe(1);
    // 3 × (300 connect + 300 headers) + 500 + 1000 backoff at most.
    expect(worstCaseMs(timeouts.calls.lookup, 'lookup', timeouts.connectMs, 1)).toBe(3300);
  });

  it('generation keeps a long header wait and is never repeated', () => {
    expect(DEFAULT_TIMEOUTS.calls.generation).toMatchObject({ headersMs: 180_000 });
    expect(DEFAULT_RETRY_POLICY.attempts.generation).toBe(1);
    expect(DEFAULT_TIMEOUTS.calls.generation.totalMs).toBeUndefined();
    expect(DEFAULT_TIMEOUTS.calls.lookup.headersMs).toBeLessThan(60_000);
  });

  it('a budget leaves rate-limit waits out and clips the last waits', () => {
    let now = 0;
    const budget = new CallBudget({ headersMs: 20_000, bodyIdleMs: 20_000, responseMs: 60_000, totalMs: 55_000 }, () => now);
    now = 50_000;
    expect(budget.headersMs()).toBe(5000);
    expect(budget.allowsRetry(4500)).toBe(false);
    budget.exclude(60_000);
    expect(budget.headersMs()).toBe(20_000);
    expect(budget.allowsRetry(4500)).toBe(true);
  });
});

describe('AERIAL_TIMEOUT_MS and AERIAL_MAX_RETRY_AFTER', () => {
  it('accept whole milliseconds and seconds (fractions allowed), and an empty value as unset', () => {
    expect(readWaitSettings({ AERIAL_TIMEOUT_MS: ' 1500 ', AERIAL_MAX_RETRY_AFTER: '0.2' })).toEqual({ timeouts: timeoutsOf(1500), maxRetryAfterSeconds: 0.2 });
    expect(readWaitSettings({ AERIAL_TIMEOUT_MS: '', AERIAL_MAX_RETRY_AFTER: '' })).toEqual({ timeouts: DEFAULT_TIMEOUTS, maxRetryAfterSeconds: undefined });
    expect(readWaitSettings({ AERIAL_MAX_RETRY_AFTER: '0' }).maxRetryAfterSeconds).toBe(0);
  });

  it.each([['AERIAL_TIMEOUT_MS', 'abc'], ['AERIAL_TIMEOUT_MS', '-5'], ['AERIAL_TIMEOUT_MS', '3000000000'], ['AERIAL_TIMEOUT_MS', '1e3'], ['AERIAL_MAX_RETRY_AFTER', 'x'], ['AERIAL_MAX_RETRY_AFTER', '-0.5']])(
    'refuse %s=%s naming the variable (exit 2)',
    (variable, value) => {
      let refusal: unknown;
      try {
        readWaitSettings({ [variable]: value });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(InvalidInputError);
      expect(cliErrorOf(refusal as InvalidInputError)).toMatchObject({ exitCode: 2, message: expect.stringMatching(new RegExp(`^${variable} must be .*; got '${value.replace('.', '\\.')}'$`)) });
    },
  );
});

describe('proxy variables', () => {
  it('none set: no proxy at all', () => {
    expect(readProxySettings({})).toBeUndefined();
    expect(readProxySettings({ NO_PROXY: 'localhost', HTTPS_PROXY: '  ' })).toBeUndefined();
  });

  it('lower-case forms win; HTTP_PROXY also serves https when HTTPS_PROXY is not set', () => {
    const settings = readProxySettings({ HTTP_PROXY: 'http://upper:3128', http_proxy: 'http://lower:3128', NO_PROXY: 'a', no_proxy: 'b' })!;
    expect(settings.http).toMatchObject({ variable: 'http_proxy' });
    expect(settings.http!.url.host).toBe('lower:3128');
    expect(settings.noProxy).toEqual({ variable: 'no_proxy', value: 'b' });
    expect(proxyFor(settings, 'https:')).toBe(settings.http);
    const both = readProxySettings({ HTTP_PROXY: 'http://plain:3128', HTTPS_PROXY: 'https://secure:3129' })!;
    expect(proxyFor(both, 'https:')!.url.host).toBe('secure:3129');
    expect(proxyFor(both, 'http:')!.url.host).toBe('plain:3128');
    expect(proxyFor(readProxySettings({ HTTPS_PROXY: 'http://s:1' }), 'http:')).toBeUndefined();
  });

  it('a proxy without a scheme is http, as curl takes it', () => {
    expect(readProxySettings({ HTTPS_PROXY: 'proxy.corp:8080' })!.https!.url.href).toBe('http://proxy.corp:8080/');
  });

  it('anything but an http(s) proxy URL is refused, naming the variable, with any password masked', () => {
    expect(() => readProxySettings({ HTTPS_PROXY: 'socks5://u:hunter2@h:1080' })).toThrow(
      "HTTPS_PROXY must be an http:// or https:// proxy URL such as http://proxy.example.com:3128; got 'socks5://***@h:1080'",
    );
    expect(() => readProxySettings({ http_proxy: 'http://' })).toThrow(/^http_proxy must be/);
  });

  it('is shown with the password masked, and the password (raw and decoded) is a secret', () => {
    const settings = readProxySettings({ HTTPS_PROXY: 'http://alice:p%40ss%3Aword@proxy.corp:3128', NO_PROXY: '.internal,localhost' })!;
    expect(maskProxy(settings.https!.url)).toBe('http://alice:***@proxy.corp:3128');
    expect(describeProxies(settings)).toBe(
      'proxy: https requests go through http://alice:***@proxy.corp:3128 (HTTPS_PROXY), http requests direct; direct to NO_PROXY=.internal,localhost',
    );
    expect(proxySecrets(settings).sort()).toEqual(['p%40ss%3Aword', 'p@ss:word']);
    expect(describeProxies(readProxySettings({ HTTP_PROXY: 'http://p:1' })!)).toBe('proxy: https and http requests go through http://p:1 (HTTP_PROXY)');
  });
});

describe('the base URL', () => {
  it('defaults to the public service', () => {
    expect(resolveSettings({}, {}, {}).baseUrl).toEqual({ value: DEFAULT_BASE_URL, source: 'default' });
    expect(DEFAULT_BASE_URL).toBe('https://api.genaerial.com');
  });

  it.each([
    ['https://api.example.com/', 'https://api.example.com'],
    ['https://api.example.com/api/external/v1', 'https://api.example.com'],
    ['https://api.example.com/api/external/v1/', 'https://api.example.com'],
    ['https://api.example.com/api/external/v1/image-generation', 'https://api.example.com'],
    ['https://api.example.com/API/External/V1/image-generation/async', 'https://api.example.com'],
    ['https://gw.example.com/genaerial/api/external/v1/image-generation', 'https://gw.example.com/genaerial'],
    ['http://127.0.0.1:4010', 'http://127.0.0.1:4010'],
  ])('%s is taken as %s', (raw, normalised) => {
    expect(validateBaseUrl(raw, '--base-url')).toBe(normalised);
    expect(hadApiPath(raw)).toBe(raw.toLowerCase().includes('/api/external/v1'));
  });

  it('a query or fragment is refused: the API path is added after it', () => {
    expect(() => validateBaseUrl('https://api.example.com/?x=1', 'AERIAL_BASE_URL')).toThrow("AERIAL_BASE_URL must not have a query or fragment; got 'https://api.example.com/?x=1'");
    expect(() => validateBaseUrl('https://api.example.com/#top', 'AERIAL_BASE_URL')).toThrow(/must not have a query or fragment/);
  });
});

describe('what a network failure is reported as', () => {
  const scene = (url: string, extra: Partial<FailureScene> = {}): FailureScene => ({
    url: new URL(url),
    attempts: 3,
    bodySent: false,
    connectMs: 10_000,
    headersMs: 20_000,
    bodyIdleMs: 20_000,
    ...extra,
  });
  const error = (code: string, message: string, more: object = {}) => Object.assign(new Error(message), { code, ...more });

  it('a refused connection names the host, in words, with the code and the attempts', () => {
    const failure = networkFailure(error('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:443', { address: '10.0.0.1', port: 443 }), scene('https://api.example.com')) as NetworkError;
    expect(failure.message).toBe('could not connect to api.example.com: connection refused (ECONNREFUSED; 3 attempts)');
    expect(cliErrorOf(failure).exitCode).toBe(7);
    expect(isTransient(failure)).toBe(true);
  });

  it('a refused connection to the proxy names the proxy and its variable', () => {
    const proxy = readProxySettings({ HTTPS_PROXY: 'http://u:secret@127.0.0.1:3128' });
    const failure = networkFailure(error('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3128', { address: '127.0.0.1', port: 3128 }), scene('https://api.example.com', { proxy }));
    expect(failure.message).toBe('could not connect to the proxy 127.0.0.1:3128 (HTTPS_PROXY) for api.example.com: connection refused (ECONNREFUSED; 3 attempts)');
    expect(failure.message).not.toContain('secret');
  });

  it('an unverifiable certificate: the host, what failed, how to trust a company CA; not worth another attempt', () => {
    const failure = networkFailure(error('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), scene('https://api.example.com')) as NetworkError;
    expect(failure.message).toBe(
      "cannot verify the TLS certificate of api.example.com: self-signed certificate in certificate chain (SELF_SIGNED_CERT_IN_CHAIN); if your company's CA signs it, set NODE_EXTRA_CA_CERTS to that CA's PEM file",
    );
    expect(failure).toBeInstanceOf(NetworkError);
    expect(isTransient(failure)).toBe(false);
    // Wrapped by undici inside a proxy tunnel, it is reported the same.
    const wrapped = networkFailure(error('UND_ERR_PRX_TLS', 'wrapped', { cause: error('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames") }), scene('https://api.example.com'));
    expect((wrapped as NetworkError).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('each timeout names its stage', () => {
    const at = scene('https://api.example.com:8443');
    expect(networkFailure(error('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error'), at).message).toBe(
      'timed out connecting to api.example.com:8443: no connection within 10s (3 attempts)',
    );
    expect(networkFailure(error('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error'), at).message).toBe(
      'timed out waiting for response headers from api.example.com:8443: none within 20s (3 attempts)',
    );
    expect(networkFailure(error('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'), { ...at, attempts: 1 }).message).toBe(
      'timed out receiving the response body from api.example.com:8443: no data for 20s (1 attempt)',
    );
  });

  it('a request that carried a body may have been processed unless it never connected', () => {
    expect((networkFailure(error('ECONNRESET', 'socket hang up'), scene('https://a.example', { bodySent: true })) as NetworkError).maybeProcessed).toBe(true);
    expect((networkFailure(error('ECONNREFUSED', 'refused'), scene('https://a.example', { bodySent: true })) as NetworkError).maybeProcessed).toBe(false);
  });
});
