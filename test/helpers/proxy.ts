// A real forward proxy for tests: Debian's tinyproxy, started on loopback with
// a private config file and log in a temp dir (installed by .ci/run), or,
// where tinyproxy is not installed, the npm package `proxy` (a forward proxy
// written for Node) in this process. Each tells which requests went through
// it: plain forwarded ones (GET http://…) and CONNECT tunnels (CONNECT
// host:port). Also a bare CONNECT recorder, for requests to hosts no test may
// reach: it notes the target and refuses.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './cli.js';
import { serveOnLoopback } from './hostile-server.js';

export interface ProxiedRequest {
  method: string;
  /** An absolute URL for forwarded requests, host:port for CONNECT. */
  target: string;
}

export interface RunningProxy {
  url: string;
  port: number;
  /** Which proxy this is. */
  kind: 'tinyproxy' | 'node';
  /** The status a tunnel asked for with the wrong credentials gets: tinyproxy answers 401, the Node proxy 407. */
  wrongCredentialsStatus: number;
  /** Requests the proxy took, in order, from its log. */
  requests(): ProxiedRequest[];
  /** The whole log, for failure messages and for checking what it recorded. */
  log(): string;
  close(): Promise<void>;
}

export interface TinyproxyOptions {
  /** Ports CONNECT may reach; tinyproxy's own default without any line is every port. */
  connectPorts?: number[];
  /** Proxy credentials (tinyproxy's BasicAuth). */
  basicAuth?: { user: string; password: string };
}

export function tinyproxyInstalled(): boolean {
  return spawnSync('tinyproxy', ['-v']).status === 0;
}

/**
 * A port nothing listens on right now (the OS's choice, released again), for a
 * connection that must be refused. Never bound again by a server here: servers
 * listen on port 0, and tinyproxy, which takes its port from its config file,
 * starts over on another when one was taken meanwhile (startTinyproxy).
 */
export async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** tinyproxy's exit status when it cannot bind its port (EX_OSERR: "Could not create listening sockets"). */
const TINYPROXY_COULD_NOT_LISTEN = 71;

function parseLog(text: string): ProxiedRequest[] {
  const requests: ProxiedRequest[] = [];
  for (const match of text.matchAll(/Request \(file descriptor \d+\): (\S+) (\S+) HTTP\/1\.\d/g)) {
    requests.push({ method: match[1]!, target: match[2]! });
  }
  return requests;
}

export async function startTinyproxy(options: TinyproxyOptions = {}): Promise<RunningProxy> {
  if (!tinyproxyInstalled()) throw new Error('tinyproxy is not installed: apt-get install tinyproxy (.ci/run does)');
  const dir = tempDir('aerial-tinyproxy-');
  const logFile = join(dir.path, 'tinyproxy.log');
  // tinyproxy takes its port from its config file, not from a socket handed to it, and refuses `Port 0`
  // (tinyproxy 1.11: "You MUST set a Port in the config file", exit 70), so the port is a candidate
  // the OS gave out a moment ago, which another process may bind first. tinyproxy then cannot bind it and exits
  // (status 71) before it writes its log; having bound it, it opens its log. So: the log is there, the port is
  // tinyproxy's; it exited with 71, the port was taken, and it starts again on a fresh candidate.
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const config = [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 30',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 100',
      'Allow 127.0.0.1',
      ...(options.connectPorts ?? []).map((p) => `ConnectPort ${p}`),
      ...(options.basicAuth ? [`BasicAuth ${options.basicAuth.user} ${options.basicAuth.password}`] : []),
    ].join('\n');
    const configFile = join(dir.path, 'tinyproxy.conf');
    writeFileSync(configFile, `${config}\n`);
    // -d: stay in the foreground, so the test owns the process and its exit.
    const child: ChildProcess = spawn('tinyproxy', ['-d', '-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let up = false;
    for (let i = 0; i < 200 && child.exitCode === null; i++) {
      if (existsSync(logFile)) {
        up = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (!up) {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      if (child.exitCode === TINYPROXY_COULD_NOT_LISTEN && tries < 5) continue;
      dir.remove();
      throw new Error(`tinyproxy did not start (exit ${child.exitCode ?? child.signalCode}): ${stderr}`);
    }
    const log = () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    };
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      kind: 'tinyproxy',
      wrongCredentialsStatus: 401,
      log,
      requests: () => parseLog(log()),
      async close() {
        child.kill('SIGTERM');
        await exited;
        dir.remove();
      },
    };
  }
}

/**
 * The npm package `proxy` on loopback, with tinyproxy's rules as the tests set
 * them: CONNECT only to the ports listed (403 otherwise), and Basic
 * credentials (407 when missing or wrong).
 */
export async function startNodeProxy(options: TinyproxyOptions = {}): Promise<RunningProxy> {
  const { createProxy } = await import('proxy');
  const server = createProxy(createServer());
  const lines: string[] = [];
  const requests: ProxiedRequest[] = [];
  if (options.basicAuth) {
    const expected = `Basic ${Buffer.from(`${options.basicAuth.user}:${options.basicAuth.password}`).toString('base64')}`;
    server.authenticate = (req) => req.headers['proxy-authorization'] === expected;
  }
  server.prependListener('request', (req) => {
    requests.push({ method: req.method ?? '', target: req.url ?? '' });
    lines.push(`${req.method} ${req.url}`);
  });
  // The package's own CONNECT handler runs only for the ports allowed.
  const [tunnel] = server.listeners('connect') as Array<(...args: unknown[]) => void>;
  server.removeAllListeners('connect');
  server.on('connect', (req, socket: Socket, head: Buffer) => {
    requests.push({ method: 'CONNECT', target: req.url ?? '' });
    lines.push(`CONNECT ${req.url}`);
    const port = Number(/:(\d+)$/.exec(req.url ?? '')?.[1]);
    if (options.connectPorts && !options.connectPorts.includes(port)) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    tunnel!.call(server, req, socket, head);
  });
  const { port, close } = await serveOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    kind: 'node',
    wrongCredentialsStatus: 407,
    log: () => lines.join('\n'),
    requests: () => [...requests],
    close,
  };
}

/**
 * tinyproxy where it is installed (and always where CI requires the system
 * tools), otherwise the Node proxy.
 */
export function startForwardProxy(options: TinyproxyOptions = {}): Promise<RunningProxy> {
  return tinyproxyInstalled() || process.env.AERIAL_TEST_REQUIRE_TOOLS === '1' ? startTinyproxy(options) : startNodeProxy(options);
}

/**
 * A stand-in proxy that records each CONNECT it is asked for and refuses it
 * (HTTP 403), without resolving or reaching the target: for proving where a
 * request to the public service would go, with no traffic leaving the machine.
 */
export async function startConnectRecorder(): Promise<{ url: string; targets: string[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const server: Server = createServer((_req, res) => res.writeHead(403).end());
  server.on('connect', (req, socket: Socket) => {
    targets.push(req.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  const { port, close } = await serveOnLoopback(server);
  return { url: `http://127.0.0.1:${port}`, targets, close };
}
