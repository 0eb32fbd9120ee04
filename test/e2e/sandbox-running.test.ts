// `--sandbox` with an `aerial sandbox` running on the same data: the command
// reaches that one instead of serving in-process, so the image URLs `list
// --json --sandbox` prints still answer once the command has ended. Two
// processes are the subject: spawned.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSecret, runCli, spawnCli, tempDir, until } from '../helpers/cli.js';

const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});

describe('--sandbox beside a running aerial sandbox', () => {
  it('uses it, so the URLs list prints outlive the command; alone again once it has stopped', async () => {
    const home = tempDir();
    dirs.push(home);
    const configDir = join(home.path, 'config');
    mkdirSync(configDir);
    const server = spawnCli(['sandbox', '--port', '0', '--json'], { configDir, timeout: 60_000 });
    let out = '';
    server.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await until(() => out.includes('\n'), 'the sandbox to say it is ready');
    const ready = JSON.parse(out.split('\n')[0]!) as { url: string; key: string; dataDir: string };
    registerSecret(ready.key);
    expect(ready.dataDir).toBe(join(configDir, 'data', 'aerial', 'sandbox'));
    expect(existsSync(join(ready.dataDir, 'server.json'))).toBe(true);

    const made = await runCli(['generate', '--sandbox', '--lat', '1', '--lng', '2', '--resolution', 'HD', '-o', 'a.jpg', '-q'], { configDir });
    expect(made.exitCode, made.stderr).toBe(0);
    const listed = await runCli(['list', '--sandbox', '--json', '-v'], { configDir });
    expect(listed.stderr).toContain(`sandbox: using the one aerial sandbox serves at ${ready.url}`);
    const [image] = JSON.parse(listed.stdout).content as Array<{ url: string }>;
    expect(new URL(image!.url).origin).toBe(ready.url);
    // The command has ended; its URL still answers.
    const response = await fetch(image!.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');

    const refused = await runCli(['sandbox', 'reset'], { configDir });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe(`error: AlreadyRunning — the sandbox at ${ready.url} (pid ${server.pid}) serves ${ready.dataDir}: stop it first\n`);

    server.kill('SIGTERM');
    expect((await server).exitCode).toBe(130);
    expect(existsSync(join(ready.dataDir, 'server.json'))).toBe(false);
    const alone = await runCli(['list', '--sandbox', '--json'], { configDir });
    expect(alone.exitCode).toBe(0);
    expect(new URL((JSON.parse(alone.stdout).content as Array<{ url: string }>)[0]!.url).origin).not.toBe(ready.url);
  }, 60_000);
});
