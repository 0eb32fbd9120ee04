// The seam between the program and its commands. A command is registered on
// the commander program with an ActionFactory and runs as a CommandBody: it
// receives a Context, which holds the terminal, the resolved settings, the
// signals that stop it (Ctrl-C, SIGTERM, SIGHUP, a reader gone; see
// shutdown.ts) and a lazily built API client (real service or sandbox). All of
// it is made from a Process: Node's own for the CLI, a test terminal in tests.
import type { Command } from 'commander';
import type { GenAerialClient, Trace } from '../api/client.js';
import type { Network, NetworkSetup } from '../api/network.js';
import type { RetryPolicy } from '../api/retry.js';
import { CliError, ExitCode, UsageError } from '../lifecycle/errors.js';
import { apiKeyProblem, DEFAULT_BASE_URL, DEFAULT_PROFILE, defaultSandboxDir, moveOldSandboxData, readConfig, resolveSettings, type Settings } from '../config/config.js';
import { validateBaseUrl } from '../input/flags.js';
import { colorEnabled, loadStyle, Terminal } from '../terminal/terminal.js';
import type { InFlight, Shutdown, SignalTarget } from '../lifecycle/shutdown.js';

/**
 * What a command runs in: `process` for the CLI; tests pass a terminal of
 * their own. SIGINT, SIGTERM and SIGHUP arrive through `on`.
 */
export interface Process extends SignalTarget {
  env: Record<string, string | undefined>;
  stdout: Terminal['stdout'];
  stderr: Terminal['stderr'];
  stdin: Terminal['stdin'];
  /** Ends the process at once: a signal that comes while the command is already stopping. */
  exit(code: number): void;
}

/** What a command does, given its Context, its options (with the global ones) and its arguments. */
export type CommandBody<O> = (ctx: Context, options: O, args: string[]) => Promise<void>;

/**
 * Makes a command's commander action from its body: the action builds the
 * Context, runs the body and then its cleanups; the caller of the program
 * reports what the body threw (main.ts).
 */
export type ActionFactory = <O>(body: CommandBody<O>) => (...args: unknown[]) => Promise<void>;

/** How a command joins the program: it adds itself to `program`, its action made by `action`. */
/**
 * A command of the program: its name and aliases, known before anything is
 * set up, and what sets it up on the Command the program makes for it. A run
 * sets up only the command it runs (see buildProgram), unless that command
 * needs every other one there too.
 */
export interface CommandRegistration {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** Its run looks at the whole program (completion describes every command). */
  readonly needsWholeProgram?: boolean;
  register(command: Command, action: ActionFactory): void;
}

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
      this.settingsCache = resolveSettings(this.globals, this.env, readConfig(this.env, (message) => this.io.warn(message)));
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
      const moved = await moveOldSandboxData(this.env);
      if (moved) this.io.info(`Moved the sandbox's data from ${moved} to ${defaultSandboxDir(this.env)}`);
      // An `aerial sandbox` serving the same data is used as it is: URLs it signs outlive this command.
      const { runningSandbox } = await import('../sandbox/advert.js');
      const running = await runningSandbox(defaultSandboxDir(this.env));
      if (running) {
        const apiKey = settings.apiKey.source === 'flag' ? this.usableKey() : running.key;
        this.io.addSecret(apiKey);
        this.io.debug(`sandbox: using the one aerial sandbox serves at ${running.url} (pid ${running.pid})`);
        return { baseUrl: running.url, apiKey };
      }
      const { startSandbox } = await import('../sandbox/server.js');
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
      // The public service hands out keys (with free credits) at sign-up. No key is an authentication failure, as a refused one is.
      const where = baseUrl.value === DEFAULT_BASE_URL ? ' (sign up at genaerial.com for one)' : '';
      throw new CliError(
        `no API key${where}: set AERIAL_API_KEY, run 'aerial init' or 'aerial config set api-key' (hidden prompt or stdin), or try --sandbox`,
        ExitCode.Auth,
        'MissingApiKey',
      );
    }
    const label = { flag: '--base-url', env: 'AERIAL_BASE_URL', profile: 'base-url in the config file', default: 'the default base URL' }[baseUrl.source];
    return { baseUrl: validateBaseUrl(baseUrl.value, label), apiKey: this.usableKey() };
  }

  /**
   * The key as it can travel in a header. A CI secret often ends in a newline:
   * that is trimmed. Anything inside that no header carries or no key holds
   * (apiKeyProblem) is refused here, naming where the key came from and what
   * was found, rather than failing later as a network error.
   */
  private usableKey(): string {
    const { value, source } = this.settings().apiKey;
    const key = (value ?? '').trim();
    this.io.addSecret(key);
    const problem = apiKeyProblem(key);
    if (problem) {
      const profile = this.settings().profile.value;
      const [where, fix] = {
        flag: ['--api-key', 'pass it again without that'],
        env: ['AERIAL_API_KEY', 'set it again without that'],
        profile: [`the config file (profile ${profile})`, `set it again with 'aerial config set api-key${profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`}'`],
        default: ['the default', 'set it again'],
      }[source];
      throw new UsageError(`the API key in ${where} contains ${problem}; a key is printable ASCII without spaces: ${fix}`);
    }
    return key;
  }

  /**
   * The command's connection pool, from the environment's settings (checked
   * first: a bad value exits 2 naming its variable, before anything is sent).
   * `direct` skips proxies, for the in-process sandbox on loopback.
   */
  async network(options: { connections?: number; direct?: boolean } = {}): Promise<Network> {
    const { openNetwork } = await import('../api/client.js');
    const setup = await openNetwork(this.env, options);
    this.adopt(setup);
    return setup.network;
  }

  /** A network just opened: its secrets kept out of every output, its proxies told with --verbose, its pool closed at the end. */
  private adopt({ network, proxyDescription, secrets }: NetworkSetup): void {
    for (const secret of secrets) this.io.addSecret(secret);
    if (proxyDescription) this.io.debug(proxyDescription);
    this.onCleanup(() => network.dispatcher.close());
  }

  async client(tuning: ClientTuning = {}): Promise<GenAerialClient> {
    this.clientCache ??= (async () => {
      const { openClient } = await import('../api/client.js');
      return openClient(this.env, {
        connections: tuning.connections,
        direct: this.globals.sandbox,
        onNetwork: (setup) => this.adopt(setup),
        endpoint: () => this.endpoint(),
        retry: tuning.retry,
        redact: this.io.redact,
        onTrace: (trace: Trace) => this.io.debug(formatTrace(trace)),
      });
    })();
    return this.clientCache;
  }
}

/**
 * The Context of a command run with `globals` in `proc`: its terminal, with
 * colour decided by the flags, NO_COLOR, FORCE_COLOR and the TTY, and an API
 * key given as a flag kept out of every output.
 */
export async function openContext(proc: Process, globals: GlobalOptions, shutdown: Shutdown): Promise<Context> {
  const color = colorEnabled(proc.env, Boolean(proc.stderr.isTTY), globals.color ?? true);
  const io = new Terminal({
    stdout: proc.stdout,
    stderr: proc.stderr,
    // Node builds process.stdin on first access; commands that never read it should not pay for it.
    stdin: () => proc.stdin,
    env: proc.env,
    json: globals.json,
    quiet: globals.quiet,
    verbose: globals.verbose,
    color,
    style: await loadStyle(color),
  });
  if (globals.apiKey) {
    io.addSecret(globals.apiKey);
    if (io.stderrIsTTY) io.warn('--api-key is visible in the process list; prefer AERIAL_API_KEY or `aerial config set api-key`');
  }
  return new Context(io, globals, proc.env, shutdown);
}

export function formatTrace(trace: Trace): string {
  const status = `${trace.status === 'error' ? 'failed' : trace.status}${trace.detail ? ` (${trace.detail})` : ''}`;
  const attempt = trace.attempt > 1 ? ` attempt ${trace.attempt}` : '';
  return `→ ${trace.method} ${trace.url} ${status} ${Math.round(trace.ms)}ms${attempt}`;
}
