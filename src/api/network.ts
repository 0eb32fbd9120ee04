// Everything a command's requests share, read from the environment once and
// checked before anything is sent: the limits (AERIAL_TIMEOUT_MS,
// AERIAL_MAX_RETRY_AFTER), the proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY),
// NODE_EXTRA_CA_CERTS for the advice on certificates, and the one pool.
import type { Dispatcher } from 'undici';
import { createDispatcher } from './dispatcher.js';
import { describeProxies, proxySecrets, readProxySettings, type ProxySettings } from './proxy.js';
import { readWaitSettings, type Timeouts } from './timeouts.js';

export interface Network {
  dispatcher: Dispatcher;
  timeouts: Timeouts;
  maxRetryAfterSeconds?: number;
  proxy?: ProxySettings;
  extraCaCerts?: string;
}

export interface NetworkSetup {
  network: Network;
  /** What --verbose says about the proxies in use, if any. */
  proxyDescription?: string;
  /** Values no output may show (proxy passwords). */
  secrets: string[];
}

/** `direct` leaves proxies out: for the in-process sandbox on loopback. A bad setting throws an InvalidInputError naming its variable. */
export async function openNetwork(
  env: Record<string, string | undefined>,
  options: { connections?: number; direct?: boolean } = {},
): Promise<NetworkSetup> {
  const { timeouts, maxRetryAfterSeconds } = readWaitSettings(env);
  const proxy = options.direct ? undefined : readProxySettings(env);
  const dispatcher = createDispatcher({ connections: options.connections, connectMs: timeouts.connectMs, proxy });
  return {
    network: { dispatcher, timeouts, maxRetryAfterSeconds, proxy, extraCaCerts: env.NODE_EXTRA_CA_CERTS || undefined },
    proxyDescription: proxy && describeProxies(proxy),
    secrets: proxySecrets(proxy),
  };
}
