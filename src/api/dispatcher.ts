// The one connection pool a command's requests share: keep-alive connections,
// at most `connections` per origin (a batch's concurrency), and the
// environment's proxies when it names any. Timeouts of headers and bodies are
// set per request by the client (they depend on the call); the connect limit
// belongs to the pool.
import { Agent, EnvHttpProxyAgent, errors, Pool, type Dispatcher } from './undici.js';
import { guardedLookup } from './download-guard.js';
import type { ProxySettings } from './proxy.js';

export interface DispatcherOptions {
  /** Connections per origin; batch and export raise it to their concurrency. */
  connections?: number;
  /** Longest each step of opening a connection may take (TCP, proxy tunnel, TLS handshake). */
  connectMs: number;
  /** Proxies to go through; every request goes direct without. */
  proxy?: ProxySettings;
}

function poolOptions(options: DispatcherOptions): PoolOptions {
  // Every socket's name is resolved through the guard: a link-local or metadata address is never connected to.
  return { connections: options.connections, connect: { timeout: options.connectMs, lookup: guardedLookup } };
}

/** A pool whose every request goes direct. */
export function directDispatcher(options: Omit<DispatcherOptions, 'proxy'>): Dispatcher {
  return new Agent(poolOptions(options));
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  if (!options.proxy) return directDispatcher(options);
  return createProxyDispatcher(options.proxy, poolOptions(options), options.connectMs);
}

interface PoolOptions {
  connections?: number;
  connect: { timeout: number; lookup: typeof guardedLookup };
}

/**
 * undici's EnvHttpProxyAgent, told the settings explicitly: HTTPS_PROXY and
 * HTTP_PROXY per protocol, NO_PROXY for hosts reached directly. https URLs go
 * through a CONNECT tunnel; http URLs are forwarded as absolute-URI requests,
 * which any forward proxy takes.
 */
function createProxyDispatcher(proxy: ProxySettings, pool: PoolOptions, connectMs: number): Dispatcher {
  /**
   * The pool that asks the proxy for tunnels. A proxy that never answers
   * CONNECT would otherwise hold the request for undici's default header wait
   * (5 minutes); its silence is a connect-stage timeout.
   */
  class TunnelPool extends Pool {
    override async connect(connectOptions: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> {
      try {
        return await super.connect(connectOptions);
      } catch (error) {
        if ((error as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT') {
          throw new errors.ConnectTimeoutError(`the proxy did not answer CONNECT within ${connectMs} ms`);
        }
        throw error;
      }
    }
  }

  const tls = { timeout: connectMs };
  return new EnvHttpProxyAgent({
    ...pool,
    httpProxy: proxy.http?.url.href ?? '',
    httpsProxy: proxy.https?.url.href ?? '',
    noProxy: proxy.noProxy?.value ?? '',
    proxyTunnel: false,
    // Each step of opening a connection through the proxy has the connect limit.
    proxyTls: tls,
    requestTls: tls,
    clientFactory: (origin: URL, opts: object) => new TunnelPool(origin, { ...opts, headersTimeout: connectMs }),
    // Every pool, direct, tunnelled or to a forwarding proxy, keeps the command's connection limit.
    factory: (origin: string | URL, opts: object) => new Pool(origin, { ...pool, ...opts }),
  } as ConstructorParameters<typeof EnvHttpProxyAgent>[0]);
}
