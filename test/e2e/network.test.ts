// The networks real users have, end to end through bin/aerial.js: a real
// forward proxy (Debian's tinyproxy) for an http service, an https service
// (CONNECT), NO_PROXY and proxy credentials; a TLS service whose certificate a
// throw-away CA signs, trusted or not through NODE_EXTRA_CA_CERTS. Where each
// request went is proven twice: by the proxy's log and by the sandbox's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/server.js';
import { registerSecret, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { freePort, startConnectRecorder, startForwardProxy, type RunningProxy } from '../helpers/proxy.js';
import { KEYS, ptyAvailable, spawnInPty } from '../helpers/pty.js';
import { API_PATH, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { makeTestCa, type TestCa } from '../helpers/tls.js';

type TempDir = ReturnType<typeof tempDir>;

let home: TempDir;
let ca: TestCa;
let otherCa: TestCa;
/** The sandbox over plain http, and the same over https with a certificate of the throw-away CA. */
let plain: TestSandbox;
let secure: TestSandbox;
const proxies: RunningProxy[] = [];

beforeAll(async () => {
  home = tempDir('aerial-network-');
  ca = await makeTestCa(join(home.path, 'ca'), 'aerial test CA');
  otherCa = await makeTestCa(join(home.path, 'other-ca'), 'another test CA');
  plain = await startTestSandbox();
  secure = await startTestSandbox({ tls: { cert: ca.cert, key: ca.key } });
  registerSecret(plain.key);
  registerSecret(secure.key);
}, 60_000);

afterAll(async () => {
  while (proxies.length) await proxies.pop()!.close();
  await plain?.close();
  await secure?.close();
  home?.remove();
});

beforeEach(async () => {
  plain.clearRequests();
  secure.clearRequests();
  while (proxies.length) await proxies.pop()!.close();
});

async function proxy(options: Parameters<typeof startForwardProxy>[0] = {}): Promise<RunningProxy> {
  const started = await startForwardProxy(options);
  proxies.push(started);
  return started;
}

/** Runs the CLI with exactly the network settings given: no proxy or extra CA unless the test names one. */
function aerial(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return runCli(args, { configDir: home.path, env: { NODE_EXTRA_CA_CERTS: undefined, NO_COLOR: '1', ...env } });
}

function apiRequests(sandbox: TestSandbox): RequestLogEntry[] {
  return sandbox.requests().filter((r) => r.path.startsWith('/api/') || r.path.startsWith('/__sandbox/images/'));
}

function expectOneLine(result: CliResult, pattern: RegExp): void {
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
}

describe('through a real proxy (tinyproxy, or a Node one where it is not installed)', () => {
  it('an http service: every request is forwarded by the proxy, which the sandbox sees in Via; --verbose names the proxy', async () => {
    const forward = await proxy();
    const out = join(home.path, 'forwarded.jpg');
    const generated = await aerial(['generate', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', out, '--force', '--verbose'], {
      ...plain.env(),
      HTTP_PROXY: forward.url,
    });
    expect(generated.exitCode, generated.stderr).toBe(0);
    expect(generated.stderr, generated.stderr).toContain(`proxy: https and http requests go through ${forward.url} (HTTP_PROXY)`);
    const listed = await aerial(['list', '--json'], { ...plain.env(), http_proxy: forward.url });
    expect(listed.exitCode, listed.stderr).toBe(0);

    expect(forward.requests()).toEqual([
      { method: 'POST', target: `${plain.url}${API_PATH}` },
      { method: 'GET', target: `${plain.url}${API_PATH}` },
    ]);
    const seen = apiRequests(plain);
    expect(seen.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`POST ${API_PATH} 200`, `GET ${API_PATH} 200`]);
    for (const entry of seen) expect(entry.via).toMatch(/proxy/);
  });

  it('an https service: a CONNECT tunnel through the proxy, TLS end to end with the company CA; signed image downloads (export) take the same way', async () => {
    const tunnel = await proxy({ connectPorts: [secure.port] });
    const env = { ...secure.env(), HTTPS_PROXY: tunnel.url, NODE_EXTRA_CA_CERTS: ca.caFile };
    const out = join(home.path, 'tunnelled.jpg');
    const generated = await aerial(['generate', '--lat', '3', '--lng', '4', '--resolution', 'HD', '-o', out, '--force'], env);
    expect(generated.exitCode, generated.stderr).toBe(0);
    expect(readFileSync(out).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

    const backup = join(home.path, 'backup-https');
    const exported = await aerial(['export', backup, '--json'], env);
    expect(exported.exitCode, exported.stderr).toBe(0);
    const images = readdirSync(backup).filter((f) => f.endsWith('.jpg'));
    expect(images).toHaveLength(1);

    // The proxy saw only tunnels to the service: no request in the clear, nothing else.
    const through = tunnel.requests();
    expect(through.length).toBeGreaterThanOrEqual(2);
    expect(new Set(through.map((r) => `${r.method} ${r.target}`))).toEqual(new Set([`CONNECT 127.0.0.1:${secure.port}`]));
    // And the service got the generation, the listing, the signed download and the check's listing, none with a Via (the tunnel is opaque).
    const seen = apiRequests(secure);
    expect(seen.map((r) => `${r.method} ${r.path.startsWith('/__sandbox/images/') ? '<signed image>' : r.path} ${r.status}`)).toEqual([
      `POST ${API_PATH} 200`,
      `GET ${API_PATH} 200`,
      'GET <signed image> 200',
      `GET ${API_PATH} 200`,
    ]);
    for (const entry of seen) expect(entry.via).toBeUndefined();
  });

  it('NO_PROXY: a listed host is reached directly, and the proxy sees nothing', async () => {
    const forward = await proxy();
    for (const [name, value] of [['NO_PROXY', '127.0.0.1'], ['no_proxy', `localhost, 127.0.0.1:${plain.port}`]]) {
      plain.clearRequests();
      const result = await aerial(['list', '--json', '--verbose'], { ...plain.env(), HTTP_PROXY: forward.url, [name!]: value });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain(`direct to ${name}=${value}`);
      const seen = apiRequests(plain);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.via).toBeUndefined();
    }
    expect(forward.requests()).toEqual([]);
    // The in-process sandbox is on loopback in the same process: it never goes through a proxy.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const inProcess = await aerial(['list', '--json', '--sandbox'], { HTTP_PROXY: nowhere, HTTPS_PROXY: nowhere });
    expect(inProcess.exitCode, inProcess.stderr).toBe(0);
    // A NO_PROXY entry for another port does not exempt this one.
    const other = await aerial(['list', '--json'], { ...plain.env(), HTTP_PROXY: forward.url, NO_PROXY: `127.0.0.1:${plain.port + 1}` });
    expect(other.exitCode, other.stderr).toBe(0);
    expect(forward.requests()).toHaveLength(1);
  });

  it('proxy credentials in the URL work (http and CONNECT), and neither the password nor its decoded form is ever printed', async () => {
    // tinyproxy takes only letters, digits and '-' in a password; percent-encoding one of them still proves the decoding.
    const password = 'pr0xy-s3cret';
    const encoded = 'pr0xy%2Ds3cret';
    const guarded = await proxy({ connectPorts: [secure.port], basicAuth: { user: 'alice', password } });
    const proxyUrl = `http://alice:${encoded}@127.0.0.1:${guarded.port}`;
    registerSecret(password);
    registerSecret(encoded);

    const viaHttp = await aerial(['list', '--json', '--verbose'], { ...plain.env(), HTTP_PROXY: proxyUrl });
    expect(viaHttp.exitCode, viaHttp.stderr).toBe(0);
    expect(viaHttp.stderr).toContain(`through http://alice:***@127.0.0.1:${guarded.port} (HTTP_PROXY)`);
    const viaTunnel = await aerial(['list', '--json', '--verbose'], { ...secure.env(), HTTPS_PROXY: proxyUrl, NODE_EXTRA_CA_CERTS: ca.caFile });
    expect(viaTunnel.exitCode, viaTunnel.stderr).toBe(0);
    expect(guarded.requests().map((r) => r.method)).toEqual(['GET', 'CONNECT']);
    expect(apiRequests(plain)).toHaveLength(1);
    expect(apiRequests(secure)).toHaveLength(1);

    // No credentials (407 both ways), or a wrong password through CONNECT (tinyproxy answers that with
    // 401): one line naming the proxy and the variable, exit 7, the request never reaching the service.
    plain.clearRequests();
    secure.clearRequests();
    const wrong = `http://alice:not-${encoded}@127.0.0.1:${guarded.port}`;
    registerSecret(`not-${encoded}`);
    const masked = `http://alice:\\*\\*\\*@127\\.0\\.0\\.1:${guarded.port}`;
    for (const [sandbox, variable, url, what] of [
      [plain, 'HTTP_PROXY', guarded.url, 'wants credentials for the request to 127\\.0\\.0\\.1:PORT \\(HTTP 407\\): add them to HTTP_PROXY as http://user:password@host:port'],
      [secure, 'HTTPS_PROXY', guarded.url, 'wants credentials for the request to 127\\.0\\.0\\.1:PORT \\(HTTP 407\\): add them to HTTPS_PROXY as http://user:password@host:port'],
      [secure, 'HTTPS_PROXY', wrong, `refused the credentials in HTTPS_PROXY \\(${masked}\\) for the request to 127\\.0\\.0\\.1:PORT \\(HTTP ${guarded.wrongCredentialsStatus}\\)`],
    ] as const) {
      const refused = await aerial(['list'], { ...sandbox.env(), [variable]: url, NODE_EXTRA_CA_CERTS: ca.caFile });
      expect(refused.exitCode, refused.stderr).toBe(7);
      expectOneLine(refused, new RegExp(`^error: the proxy 127\\.0\\.0\\.1:${guarded.port} \\(${variable}\\) ${what.replace('PORT', String(sandbox.port))}\n$`));
      expect(refused.stderr).not.toContain('not-');
    }
    expect(apiRequests(plain)).toEqual([]);
    expect(apiRequests(secure)).toEqual([]);
  });

  it('a proxy that refuses the tunnel, or is not there, is named in one line (exit 7)', async () => {
    const strict = await proxy({ connectPorts: [443] });
    const refused = await aerial(['list'], { ...secure.env(), HTTPS_PROXY: strict.url, NODE_EXTRA_CA_CERTS: ca.caFile });
    expect(refused.exitCode).toBe(7);
    expectOneLine(refused, new RegExp(`the proxy 127\\.0\\.0\\.1:${strict.port} \\(HTTPS_PROXY\\) refused to open a tunnel to 127\\.0\\.0\\.1:${secure.port} \\(HTTP 403`));
    expect(strict.requests()).toEqual([{ method: 'CONNECT', target: `127.0.0.1:${secure.port}` }]);

    const nowhere = await freePort();
    const down = await aerial(['list'], { ...plain.env(), HTTP_PROXY: `http://127.0.0.1:${nowhere}` });
    expect(down.exitCode).toBe(7);
    expectOneLine(down, new RegExp(`could not connect to the proxy 127\\.0\\.0\\.1:${nowhere} \\(HTTP_PROXY\\) for 127\\.0\\.0\\.1:${plain.port}: connection refused \\(ECONNREFUSED; 3 attempts in \\d+(\\.\\d)?s\\)`));
    expect(apiRequests(plain)).toEqual([]);
    expect(apiRequests(secure)).toEqual([]);
  });

  it('a proxy URL that is not one is refused before anything is sent (exit 2, naming the variable, password masked)', async () => {
    for (const [variable, value, shown] of [
      ['HTTPS_PROXY', 'socks5://bob:hunter22@127.0.0.1:1080', "got 'socks5://***@127.0.0.1:1080'"],
      ['http_proxy', 'http://', "got 'http://'"],
    ] as const) {
      const result = await aerial(['list'], { ...plain.env(), [variable]: value });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toBe(`error: ${variable} must be an http:// or https:// proxy URL such as http://proxy.example.com:3128; ${shown}\n`);
    }
    expect(apiRequests(plain)).toEqual([]);
  });

  it('generate-async --listen: the API call and the signed download go through the proxy; the webhook listener is not affected', async () => {
    const forward = await proxy();
    const out = join(home.path, 'async.jpg');
    const result = await aerial(
      ['generate-async', '--lat', '5', '--lng', '6', '--resolution', 'HD', '--listen', '--listen-host', '127.0.0.1', '-o', out, '--force'],
      { ...plain.env(), HTTP_PROXY: forward.url },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    await plain.idle();
    expect(forward.requests().map((r) => `${r.method} ${new URL(r.target).pathname.startsWith('/__sandbox/images/') ? '<signed image>' : new URL(r.target).pathname}`)).toEqual([
      `POST ${API_PATH}/async`,
      'GET <signed image>',
    ]);
    // The service's callback reached the listener directly.
    const deliveries = plain.webhookAttempts();
    expect(deliveries.map((d) => d.outcome)).toContain('delivered');
    expect(readFileSync(out).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  });

  it('the public service is the default: a list goes to api.genaerial.com:443 by CONNECT (recorded and refused here; nothing leaves the machine)', async () => {
    const recorder = await startConnectRecorder();
    try {
      const result = await aerial(['list'], { AERIAL_API_KEY: 'sk_default_url_test_123', HTTPS_PROXY: recorder.url });
      registerSecret('sk_default_url_test_123');
      expect(result.exitCode).toBe(7);
      expect(recorder.targets).toEqual(['api.genaerial.com:443']);
      expectOneLine(result, /refused to open a tunnel to api\.genaerial\.com \(HTTP 403/);
    } finally {
      await recorder.close();
    }
  });
});

describe('the base URL', () => {
  it('is the public service unless set: config list says so, and so does --help', async () => {
    const listed = await aerial(['config', 'list', '--json'], {});
    expect(JSON.parse(listed.stdout)['base-url']).toEqual({ value: 'https://api.genaerial.com', source: 'default' });
    const human = await aerial(['config', 'list'], {});
    expect(human.stdout).toMatch(/^base-url\s+https:\/\/api\.genaerial\.com\s+\(default\)$/m);
    const help = await aerial(['--help'], {});
    expect(help.stdout).toMatch(/--base-url <url> +service base URL \(env AERIAL_BASE_URL; default\s+https:\/\/api\.genaerial\.com\)/);
  });

  it('given with the API path (flag, environment or config), it is used without it: no doubled path, no 404', async () => {
    const pasted = `${plain.url}${API_PATH}/`;
    const viaEnv = await aerial(['list', '--json'], { ...plain.env(), AERIAL_BASE_URL: pasted });
    expect(viaEnv.exitCode, viaEnv.stderr).toBe(0);
    const viaFlag = await aerial(['list', '--json', '--base-url', `${plain.url}/api/external/v1`], { AERIAL_API_KEY: plain.key });
    expect(viaFlag.exitCode, viaFlag.stderr).toBe(0);
    const set = await aerial(['config', 'set', 'base-url', pasted, '--profile', 'pasted'], {});
    expect(set.stderr).toContain(`Set base-url = ${plain.url} in profile pasted`);
    const viaConfig = await aerial(['list', '--json', '--profile', 'pasted'], { AERIAL_API_KEY: plain.key });
    expect(viaConfig.exitCode, viaConfig.stderr).toBe(0);
    expect(apiRequests(plain).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(Array(3).fill(`GET ${API_PATH} 200`));
    const query = await aerial(['list'], { ...plain.env(), AERIAL_BASE_URL: `${plain.url}/?tenant=1` });
    expect(query.exitCode).toBe(2);
    expect(query.stderr).toBe(`error: AERIAL_BASE_URL must not have a query or fragment; got '${plain.url}/?tenant=1'\n`);
  });
});

describe('TLS with a company CA (a throw-away one)', () => {
  it('trusted through NODE_EXTRA_CA_CERTS: generate, list and the signed image downloads of export all work over https', async () => {
    const env = { ...secure.env(), NODE_EXTRA_CA_CERTS: ca.caFile };
    const out = join(home.path, 'tls.jpg');
    const generated = await aerial(['generate', '--lat', '7', '--lng', '8', '--resolution', 'HD', '-o', out, '--force'], env);
    expect(generated.exitCode, generated.stderr).toBe(0);
    const backup = join(home.path, 'backup-tls');
    const exported = await aerial(['export', backup], env);
    expect(exported.exitCode, exported.stderr).toBe(0);
    expect(readdirSync(backup).filter((f) => f.endsWith('.jpg')).length).toBeGreaterThanOrEqual(1);
    const seen = apiRequests(secure);
    expect(seen.some((r) => r.path.startsWith('/__sandbox/images/') && r.status === 200)).toBe(true);
    expect(seen.every((r) => r.status === 200)).toBe(true);
  });

  it('not trusted: one line naming the host, what failed and how to trust a company CA; exit 7, no retry, nothing reaches the service', async () => {
    for (const args of [['list'], ['generate', '--lat', '1', '--lng', '2', '-o', join(home.path, 'never.jpg')]]) {
      const result = await aerial(args, secure.env());
      expect(result.exitCode).toBe(7);
      expectOneLine(
        result,
        new RegExp(
          `^error: cannot verify the TLS certificate of 127\\.0\\.0\\.1:${secure.port}: unable to verify the first certificate \\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\\); if your company's CA signs it, set NODE_EXTRA_CA_CERTS to that CA's PEM file\n$`,
        ),
      );
      expect(result.stderr).not.toMatch(/REJECT_UNAUTHORIZED|insecure|verification off|--no-verify/i);
    }
    const json = await aerial(['list', '--json'], secure.env());
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', exitCode: 7 });
    expect(apiRequests(secure)).toEqual([]);
  });

  it('NODE_EXTRA_CA_CERTS set to a file without the right CA: the advice says so', async () => {
    const result = await aerial(['list'], { ...secure.env(), NODE_EXTRA_CA_CERTS: otherCa.caFile });
    expect(result.exitCode).toBe(7);
    expectOneLine(result, new RegExp(`NODE_EXTRA_CA_CERTS \\(${otherCa.caFile.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) does not hold the CA that signed it`));
  });

  it('through the proxy as well: the tunnel opens, and the certificate is still checked end to end', async () => {
    const tunnel = await proxy({ connectPorts: [secure.port] });
    const result = await aerial(['list'], { ...secure.env(), HTTPS_PROXY: tunnel.url });
    expect(result.exitCode).toBe(7);
    expectOneLine(result, /cannot verify the TLS certificate of 127\.0\.0\.1:\d+: .*\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/);
    expect(tunnel.requests()).toEqual([{ method: 'CONNECT', target: `127.0.0.1:${secure.port}` }]);
    expect(apiRequests(secure)).toEqual([]);
  });
});

describe.runIf(ptyAvailable())('init on a terminal', () => {
  function initIn(env: Record<string, string | undefined>) {
    const dir = tempDir('aerial-network-init-');
    const term = spawnInPty(['init'], { configDir: dir.path, env: { NODE_EXTRA_CA_CERTS: undefined, ...env } });
    return { dir, term, saved: () => JSON.parse(readFileSync(join(dir.path, 'config.json'), 'utf8')).profiles.default };
  }

  it("offers the public service first: its test call goes to api.genaerial.com through the proxy (recorded here), and 'save anyway' keeps it", async () => {
    const recorder = await startConnectRecorder();
    const { dir, term, saved } = initIn({ HTTPS_PROXY: recorder.url });
    try {
      const shown = await term.choose('Service', KEYS.enter);
      expect(shown).toContain('GenAerial (https://api.genaerial.com)');
      expect(shown).toContain('The bundled sandbox (http://127.0.0.1:4010)');
      expect(shown).toContain('Another URL');
      await term.answer('API key', `sk_init_public_1234${KEYS.enter}`);
      registerSecret('sk_init_public_1234');
      // Checked as soon as it is typed.
      await term.waitFor(/Test call failed: the proxy 127\.0\.0\.1:\d+ \(HTTPS_PROXY\) refused to open a tunnel to api\.genaerial\.com/);
      await term.answer('Go on and save these settings anyway?', `y${KEYS.enter}`);
      await term.answer('Choose default scene settings now?', KEYS.enter);
      expect((await term.exited).exitCode).toBe(0);
      expect(recorder.targets).toEqual(['api.genaerial.com:443']);
      expect(saved()).toEqual({ baseUrl: 'https://api.genaerial.com', apiKey: 'sk_init_public_1234' });
    } finally {
      term.kill();
      await recorder.close();
      dir.remove();
    }
  });

  it('a custom URL pasted with the API path is taken without it; the test call goes through the proxy', async () => {
    const forward = await proxy();
    const { dir, term, saved } = initIn({ HTTP_PROXY: forward.url });
    try {
      await term.choose('Service', `${KEYS.down}${KEYS.down}${KEYS.enter}`);
      await term.answer('Service base URL', `${plain.url}${API_PATH}${KEYS.enter}`);
      await term.waitFor(`Using ${plain.url}: aerial adds the API path`);
      await term.answer('API key', `${plain.key}${KEYS.enter}`);
      await term.waitFor(/Connected: \d+ images? in your history/);
      await term.answer('Choose default scene settings now?', KEYS.enter);
      expect((await term.exited).exitCode).toBe(0);
      expect(saved()).toEqual({ baseUrl: plain.url, apiKey: plain.key });
      expect(forward.requests()).toEqual([{ method: 'GET', target: `${plain.url}${API_PATH}?page=0&size=1` }]);
      expect(apiRequests(plain).map((r) => r.via)).toEqual([expect.stringMatching(/proxy/)]);
    } finally {
      term.kill();
      dir.remove();
    }
  });

  it('the bundled sandbox: says how to start it and stores its address', async () => {
    const { dir, term, saved } = initIn({});
    try {
      await term.choose('Service', `${KEYS.down}${KEYS.enter}`);
      await term.waitFor("Start the sandbox in another terminal with aerial sandbox; it prints the API key");
      await term.answer('API key', `sbx_not_running_12345${KEYS.enter}`);
      registerSecret('sbx_not_running_12345');
      await term.waitFor('Checking the key against http://127.0.0.1:4010');
      await term.waitFor('Test call failed');
      // Nothing answers on the sandbox's port, or a developer's own sandbox does there and refuses this key.
      const next = await term.waitFor(/Go on and save these settings anyway\?|Enter the key again/);
      if (next.endsWith('Enter the key again')) {
        await term.answer('API key', KEYS.ctrlC);
        expect((await term.exited).exitCode).toBe(130);
        expect(existsSync(join(dir.path, 'config.json'))).toBe(false);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 60));
      term.write(`y${KEYS.enter}`);
      await term.answer('Choose default scene settings now?', KEYS.enter);
      expect((await term.exited).exitCode).toBe(0);
      expect(saved().baseUrl).toBe('http://127.0.0.1:4010');
    } finally {
      term.kill();
      dir.remove();
    }
  });
});
