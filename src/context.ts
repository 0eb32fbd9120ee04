// What every command receives: the terminal, the resolved settings, the
// signals that stop it (Ctrl-C, SIGTERM, SIGHUP, a reader gone; see
// shutdown.ts), and a lazily built API client (real service or sandbox).
import type { GenAerialClient, Trace } from './api/client.js';
import { UsageError } from './api/errors.js';
import { readConfig, resolveSettings, validateBaseUrl, type Settings } from './config.js';
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
  maxRateLimitRetries?: number;
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
    const baseUrl = settings.baseUrl.value;
    if (!baseUrl) {
      throw new UsageError(
        "no service URL: pass --base-url, set AERIAL_BASE_URL, run 'aerial config set base-url <url>', or try --sandbox",
      );
    }
    if (!settings.apiKey.value?.trim()) {
      throw new UsageError(
        "no API key: set AERIAL_API_KEY, run 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox",
      );
    }
    return { baseUrl: validateBaseUrl(baseUrl, '--base-url'), apiKey: this.usableKey() };
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

  async client(tuning: ClientTuning = {}): Promise<GenAerialClient> {
    this.clientCache ??= (async () => {
      const { baseUrl, apiKey } = await this.endpoint();
      const { GenAerialClient, createDispatcher } = await import('./api/client.js');
      // Knobs for tests and impatient CI: one per-request timeout (headers, body silence, whole body),
      // and the longest Retry-After honoured (seconds; the client's own cap is 60).
      const timeout = Number(this.env.AERIAL_TIMEOUT_MS) || undefined;
      const maxRetryAfter = Number(this.env.AERIAL_MAX_RETRY_AFTER);
      const dispatcher = createDispatcher({ connections: tuning.connections, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
      this.onCleanup(() => dispatcher.close());
      return new GenAerialClient({
        baseUrl,
        apiKey,
        dispatcher,
        maxRateLimitRetries: tuning.maxRateLimitRetries,
        transferTimeoutMs: timeout,
        maxRetryAfterSeconds: this.env.AERIAL_MAX_RETRY_AFTER && maxRetryAfter >= 0 ? maxRetryAfter : undefined,
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
