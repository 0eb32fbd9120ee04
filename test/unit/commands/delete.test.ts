// `aerial delete` in-process against the sandbox fixture: no deletion without
// a terminal to ask on or --yes, the ids it deleted printed, and another
// account's image out of reach (404, exit 5). The spawned smoke test is
// test/e2e/core.test.ts's.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pageSchema } from '../../../src/api/schema.js';
import { registerSecret } from '../../helpers/cli.js';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';

const fixture = useCommandsAgainstSandbox({ seed: 7 });
const { apiRequests } = fixture;

describe('aerial delete', () => {
  let account: { key: string };
  const cli = (args: string[], key = account.key) => fixture.cli(args, { env: { AERIAL_API_KEY: key } });
  async function ids(): Promise<string[]> {
    return pageSchema().parse(JSON.parse((await cli(['list', '--json'])).stdout)).content.map((r) => r.id);
  }

  beforeAll(async () => {
    account = await fixture.sandbox.createAccount({ credits: 100 });
    registerSecret(account.key);
    // One scene three times: three images in the history, rendered once (the sandbox keeps what it rendered).
    for (let i = 0; i < 3; i++) {
      expect((await cli(['generate', '--lat', '1', '--lng', '0', '--resolution', 'HD', '-o', join(fixture.home.path, `del-${i}.jpg`)])).exitCode).toBe(0);
    }
  });

  it('refuses without a terminal and without --yes, sending nothing', async () => {
    const [first] = await ids();
    fixture.sandbox.clearRequests();
    const result = await cli(['delete', first!]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/pass --yes/);
    expect(apiRequests()).toHaveLength(0);
  });

  it('deletes with --yes, printing the ids it deleted', async () => {
    const [first, second, third] = await ids();
    const result = await cli(['delete', first!, second!, '--yes']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([first, second]);
    expect(await ids()).toEqual([third]);
  });

  it('cannot delete another account\'s image (404, exit 5)', async () => {
    const [mine] = await ids();
    const other = await fixture.sandbox.createAccount({ credits: 1 });
    registerSecret(other.key);
    const result = await cli(['delete', mine!, '--yes'], other.key);
    expect(result.exitCode).toBe(5);
    expect(await ids()).toEqual([mine]);
  });
});
