// The usual setup of a test file for commands run in-process against a
// hostile server (helpers/hostile-server.ts): one server and one temporary
// home for the whole file (started by useHostileServerPerFile, which also
// empties the server's log before each test), and `cli()` to run
// `aerial <args>` through the command seam against the server, with that home
// as the config directory and the file's API key, registered as a secret so
// that no run may print it.
import { registerSecret, type CliResult, type tempDir } from './cli.js';
import { useHostileServerPerFile, type HostileServer } from './hostile-server.js';
import { runCommand } from './terminal.js';

type TempDir = ReturnType<typeof tempDir>;

export interface CommandsAgainstHostileServer {
  /** The file's server; read it inside hooks and tests (it starts in beforeAll). */
  readonly server: HostileServer;
  /** The file's temporary home: the config directory of every `cli()` run, and a place for the files tests write. */
  readonly home: TempDir;
  /** Runs `aerial <args>` in-process against the server with the file's key; `env` adds variables or overrides those two. */
  cli(args: string[], options?: { env?: Record<string, string | undefined> }): Promise<CliResult>;
}

export function useCommandsAgainstHostileServer(apiKey: string, options: { homePrefix?: string } = {}): CommandsAgainstHostileServer {
  registerSecret(apiKey);
  let started: { server: HostileServer; home: TempDir } | undefined;
  useHostileServerPerFile(
    (server, home) => {
      started = { server, home };
    },
    { configPrefix: options.homePrefix },
  );
  const running = () => {
    if (!started) throw new Error('the server starts in beforeAll: use it inside hooks and tests');
    return started;
  };
  return {
    get server() {
      return running().server;
    },
    get home() {
      return running().home;
    },
    cli(args, { env } = {}) {
      const { server, home } = running();
      return runCommand(args, { configDir: home.path, env: { AERIAL_API_KEY: apiKey, AERIAL_BASE_URL: server.url, ...env } });
    },
  };
}
