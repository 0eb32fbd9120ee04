// `aerial list` in-process against the sandbox fixture: the API page with
// --json, --all walking every page, the piped lines, one account's history
// only, and paging values refused before anything is sent. The terminal
// table is list-output.test.ts's (e2e); the spawned smoke test core.test.ts's.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pageSchema } from '../../../../src/api/schema.js';
import { registerSecret } from '../../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../../helpers/sandbox-commands.js';

const fixture = useCommandsAgainstSandbox({ seed: 7 });
const { cli, apiRequests } = fixture;

describe('aerial list', () => {
  let account: { key: string };
  const listEnv = () => ({ env: { AERIAL_API_KEY: account.key } });

  beforeAll(async () => {
    account = await fixture.sandbox.createAccount({ credits: 500 });
    registerSecret(account.key);
    for (let i = 0; i < 5; i++) {
      const result = await cli(['generate', '--lat', String(10 + i), '--lng', String(20 + i), '--resolution', 'HD', '-o', join(fixture.home.path, `list-${i}.jpg`)], listEnv());
      expect(result.exitCode).toBe(0);
    }
  });

  it('prints the API page object with --json', async () => {
    const result = await cli(['list', '--json', '--size', '2'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse(result.stdout));
    expect(page).toMatchObject({ totalElements: 5, totalPages: 3, page: 0, size: 2 });
    expect(page.content).toHaveLength(2);
    expect(page.content[0]!.coordinates).toEqual({ latitude: 14, longitude: 24 });
    expect(result.stderr).toBe('');
  });

  it('walks every page with --all, and honours --sort', async () => {
    const result = await cli(['list', '--all', '--size', '2', '--sort', 'createdAt,asc', '--json'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse(result.stdout));
    expect(page.content.map((r) => r.coordinates.latitude)).toEqual([10, 11, 12, 13, 14]);
    expect(apiRequests().filter((r) => r.method === 'GET')).toHaveLength(3);
  });

  it('piped, prints one tab-separated line per image (the terminal table: list-output.test.ts)', async () => {
    const result = await cli(['list'], listEnv());
    expect(result.exitCode).toBe(0);
    const page = pageSchema().parse(JSON.parse((await cli(['list', '--json'], listEnv())).stdout));
    expect(result.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0])).toEqual(page.content.map((record) => record.id));
    expect(result.stdout).toContain('\tHD\t12\t22\n');
    expect(result.stdout).not.toMatch(/\u001b\[/);
    expect(result.stderr).toBe('Page 0, the only one (5 images)\n');
  });

  it('never shows another account\'s images', async () => {
    const other = await fixture.sandbox.createAccount({ credits: 10 });
    registerSecret(other.key);
    const result = await cli(['list', '--json'], { env: { AERIAL_API_KEY: other.key } });
    expect(JSON.parse(result.stdout)).toMatchObject({ totalElements: 0, content: [] });
  });

  it('refuses bad paging values before sending', async () => {
    for (const args of [['--size', '0'], ['--page', '-1'], ['--size', 'ten'], ['--sort', 'createdAt,sideways']]) {
      const result = await cli(['list', ...args], listEnv());
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(new RegExp(args[0]!));
    }
    expect(apiRequests()).toHaveLength(0);
  });
});
