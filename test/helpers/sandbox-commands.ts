// The usual setup of a test file for commands run in-process against the
// sandbox: one sandbox and one temporary home for the whole file, or for the
// describe block it is called in (started by useSandboxPerFile, which also
// clears the request log and faults before each test), `cli()` to run
// `aerial <args>` through the command seam with that home as the config
// directory and the sandbox's URL and key in the environment, and
// `apiRequests()` for what reached the API since the test began.
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import type { CliResult, tempDir } from './cli.js';
import { useSandboxPerFile, type TestSandbox, type TestSandboxOptions } from './sandbox.js';
import { runCommand, type InProcessRunOptions } from './terminal.js';

type TempDir = ReturnType<typeof tempDir>;

/** The terminal to run in (standard input, which streams are terminals), and variables besides the sandbox's. */
export interface CommandAgainstSandboxOptions extends Omit<InProcessRunOptions, 'configDir' | 'env'> {
  /** Variables over the sandbox's AERIAL_BASE_URL and AERIAL_API_KEY: another account's key, another base URL, FORCE_COLOR… */
  env?: Record<string, string | undefined>;
}

export interface CommandsAgainstSandbox {
  /** The file's sandbox; read it inside hooks and tests (it starts in beforeAll). */
  readonly sandbox: TestSandbox;
  /** The file's temporary home: the config directory of every `cli()` run, and a place for the files tests write. */
  readonly home: TempDir;
  /** Runs `aerial <args>` in-process against the sandbox, as the default account unless `env` says otherwise. */
  cli(args: string[], options?: CommandAgainstSandboxOptions): Promise<CliResult>;
  /** The requests the sandbox recorded under /api/ since the test began. */
  apiRequests(): RequestLogEntry[];
}

export function useCommandsAgainstSandbox(options: TestSandboxOptions & { homePrefix?: string } = {}): CommandsAgainstSandbox {
  let started: { sandbox: TestSandbox; home: TempDir } | undefined;
  useSandboxPerFile((sandbox, home) => {
    started = { sandbox, home };
  }, options);
  const running = () => {
    if (!started) throw new Error('the sandbox starts in beforeAll: use it inside hooks and tests');
    return started;
  };
  return {
    get sandbox() {
      return running().sandbox;
    },
    get home() {
      return running().home;
    },
    cli(args, { env, ...terminal } = {}) {
      const { sandbox, home } = running();
      return runCommand(args, { ...terminal, configDir: home.path, env: { ...sandbox.env(), ...env } });
    },
    apiRequests() {
      return running().sandbox.requests().filter((entry) => entry.path.startsWith('/api/'));
    },
  };
}
