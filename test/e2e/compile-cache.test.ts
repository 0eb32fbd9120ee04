// bin/aerial.js imports the bundle with Node's compile cache on (Node 22.1 and
// later), so a command compiles the bundle once, not at every run.
import { readdirSync } from 'node:fs';
import module from 'node:module';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { useSandboxPerFile, type TestSandbox } from '../helpers/sandbox.js';

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
let sandbox: TestSandbox;
let home: { path: string };
useSandboxPerFile((s, h) => {
  sandbox = s;
  home = h;
});

/** The files in a compile-cache directory (one folder per Node version, a file per module). */
const cacheFiles = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());

describe('Node’s compile cache', () => {
  it.runIf(hasCompileCache)('list --json fills it with the bundle’s modules, and the next run, reading them, gives the same page', async () => {
    const cacheDir = tempDir('aerial-node-compile-cache-');
    try {
      const env = { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_COMPILE_CACHE: cacheDir.path };
      const first = await runCli(['list', '--json'], { configDir: home.path, env });
      expect(first.exitCode).toBe(0);
      // The entry, commander, zod, undici and the client at least.
      const written = cacheFiles(cacheDir.path).length;
      expect(written).toBeGreaterThanOrEqual(5);
      const second = await runCli(['list', '--json'], { configDir: home.path, env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
      expect(second.exitCode).toBe(0);
      expect(second.stdout).toBe(first.stdout);
      expect(second.stderr).toMatch(/dist\/cli\.js was accepted/);
      expect(second.stderr).not.toMatch(/was rejected/);
    } finally {
      cacheDir.remove();
    }
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off, and the command still works', async () => {
    const cacheDir = tempDir('aerial-node-compile-cache-');
    try {
      const result = await runCli(['list', '--json'], {
        configDir: home.path,
        env: { AERIAL_BASE_URL: sandbox.url, AERIAL_API_KEY: sandbox.key, NODE_COMPILE_CACHE: cacheDir.path, NODE_DISABLE_COMPILE_CACHE: '1' },
      });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ content: expect.any(Array) });
      expect(cacheFiles(cacheDir.path)).toEqual([]);
    } finally {
      cacheDir.remove();
    }
  });
});
