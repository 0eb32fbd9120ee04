// What every command receives: the terminal, the resolved settings, the
// signals that stop it (Ctrl-C, SIGTERM, SIGHUP, a reader gone; see
// shutdown.ts), and a lazily built API client (real service or sandbox).
import type { GenAerialClient, Trace } from './api/client.js';
import type { Network } from './api/network.js';
import type { RetryPolicy } from './api/retry.js';
import { UsageError } from './api/errors.js';
import { DEFAULT_BASE_URL, readConfig, resolveSettings, type Settings } from './config.js';
import { validateBaseUrl } from './flags.js';
import { Terminal } from './io.js';
import type { InFlight, Shutdown } from './shutdown.js';

export interface GlobalOptions {
  apiKey?: string;
  baseUrl?: string;
  profile?: string;
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  sandbox?: boolean;
  color?: boolean;
}

export interface ClientTuning {
  /** How the client's calls are retried (batch and export); the default policy when absent. */
  retry?: RetryPolicy;
  /** Reuse one connection pool for many concurrent requests (batch). */
  connections?: number;
}

export class Context {
  private settingsCache?: Settings;
  private clientCache?: Promise<GenAerialClient>;
  private readonly cleanups: Array<() => Promise<void> | void> = [];

  constructor(
    readonly io: Terminal,
    readonly globals: GlobalOptions,
    readonly env: Record<string, string | undefined>,
    private readonly shutdown: Shutdown,
  ) {}

  /** Aborted when the command must end now: whatever is in flight is abandoned. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** Aborted when the command must start nothing new (the first signal in batch and export); always with `signal`. */
  get stopSignal(): AbortSignal {
    return this.shutdown.stopSignal;
  }

  /**
   * For work that has been paid for once it is on the wire: the first signal
   * then only stops new work (stopSignal) and lets this finish, for a while.
   */
  finishInFlightOnStop(inFlight: InFlight): void {
    this.shutdown.finishInFlight(inFlight);
  }

  settings(): Settings {
    if (!this.settingsCache) {
      this.settingsCache = resolveSettings(this.globals, this.env, readConfig(this.env));
      this.io.addSecret(this.settingsCache.apiKey.value);
    }
    return this.settingsCache;
  }

  /** Registers work that must run however the command ends (temp files, listeners, servers). */
  onCleanup(fn: () => Promise<void> | void): void {
    this.cleanups.push(fn);
  }

  async cleanup(): Promise<void> {
    while (this.cleanups.length) {
      const fn = this.cleanups.pop()!;
      try {
        await fn();
      } catch {
        // Cleanup is best effort; the command's own outcome is what gets reported.
      }
    }
  }

  /** Where to connect and with which key: the flags and config, or the bundled sandbox in-process. */
  async endpoint(): Promise<{ baseUrl: string; apiKey: string }> {
    const settings = this.settings();
    if (this.globals.sandbox) {
      const { startSandbox, defaultSandboxDir } = await import('./sandbox/server.js');
      const sandbox = await startSandbox({
        host: '127.0.0.1',
        port: 0,
        dataDir: defaultSandboxDir(this.env),
        onWarning: (message) => this.io.warn(`sandbox: ${message}`),
      });
      this.onCleanup(() => sandbox.close());
      const apiKey = settings.apiKey.source === 'flag' ? this.usableKey() : sandbox.defaultKey;
      this.io.addSecret(apiKey);
      this.io.debug(`sandbox: serving in-process at ${sandbox.url}`);
      return { baseUrl: sandbox.url, apiKey };
    }
    const baseUrl = settings.baseUrl;
    if (!settings.apiKey.value?.trim()) {
      // The public service hands out keys (with free credits) at sign-up.
      const where = baseUrl.value === DEFAULT_BASE_URL ? ' (sign up at genaerial.com for one)' : '';
      throw new UsageError(
        `no API key${where}: set AERIAL_API_KEY, run 'aerial init' or 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox`,
      );
    }
    const label = { flag: '--base-url', env: 'AERIAL_BASE_URL', profile: 'base-url in the config file', default: 'the default base URL' }[baseUrl.source];
    return { baseUrl: validateBaseUrl(baseUrl.value, label), apiKey: this.usableKey() };
  }

  /**
   * The key as it can travel in a header. A CI secret often ends in a newline:
   * that is trimmed. Whitespace or control characters inside are refused here,
   * naming where the key came from, rather than failing later as a network error.
   */
  private usableKey(): string {
    const { value, source } = this.settings().apiKey;
    const key = (value ?? '').trim();
    this.io.addSecret(key);
    if (/[\s\u0000-\u001f\u007f]/.test(key)) {
      const where = { flag: '--api-key', env: 'AERIAL_API_KEY', profile: `the config file (profile ${this.settings().profile.value})`, default: 'the default' }[source];
      throw new UsageError(`the API key in ${where} contains whitespace or control characters`);
    }
    return key;
  }

  /**
   * The command's connection pool, from the environment's settings (checked
   * first: a bad value exits 2 naming its variable, before anything is sent).
   * `direct` skips proxies, for the in-process sandbox on loopback.
   */
  async network(options: { connections?: number; direct?: boolean } = {}): Promise<Network> {
    const { openNetwork } = await import('./api/client.js');
    const { network, proxyDescription, secrets } = await openNetwork(this.env, options);
    for (const secret of secrets) this.io.addSecret(secret);
    if (proxyDescription) this.io.debug(proxyDescription);
    this.onCleanup(() => network.dispatcher.close());
    return network;
  }

  async client(tuning: ClientTuning = {}): Promise<GenAerialClient> {
    this.clientCache ??= (async () => {
      const network = await this.network({ connections: tuning.connections, direct: this.globals.sandbox });
      const { baseUrl, apiKey } = await this.endpoint();
      const { GenAerialClient } = await import('./api/client.js');
      return new GenAerialClient({
        baseUrl,
        apiKey,
        ...network,
        retry: tuning.retry,
        onTrace: (trace: Trace) => this.io.debug(formatTrace(trace)),
      });
    })();
    return this.clientCache;
  }
}

export function formatTrace(trace: Trace): string {
  const status = `${trace.status === 'error' ? 'failed' : trace.status}${trace.detail ? ` (${trace.detail})` : ''}`;
  const attempt = trace.attempt > 1 ? ` attempt ${trace.attempt}` : '';
  return `→ ${trace.method} ${trace.url} ${status} ${Math.round(trace.ms)}ms${attempt}`;
}
