// bin/aerial.js never lets a command that stopped before it finished pass for
// one that succeeded: when Node's event loop empties while the command still
// awaits something that can no longer happen, the process exits 1
// ("unexpected"), never 0. Such a stall is made here by a preload that makes
// every fs/promises open() wait for ever without keeping the loop alive.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

const home = tempDir('aerial-stalled-');
afterAll(() => home.remove());
mkdirSync(join(home.path, 'config'));
const preload = join(home.path, 'open-never-settles.cjs');
writeFileSync(preload, "require('node:fs/promises').open = () => new Promise(() => {});\n");
const stalled = (args: string[]) => runCli(args, { configDir: join(home.path, 'config'), env: { NODE_OPTIONS: `--require ${preload}` } });

describe('a command that stalls with nothing left to wait for', () => {
  it('exits 1 with one line saying it stopped before it finished', async () => {
    const result = await stalled(['config', 'set', 'defaults.zoom', 'High']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('error: unexpected: the command stopped before it finished (a bug in aerial; please report it)\n');
  });

  it('with --json, as one JSON line', async () => {
    const result = await stalled(['config', 'set', 'defaults.zoom', 'High', '--json']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'Unexpected', exitCode: 1 });
  });

  it('while the same command without the stall succeeds', async () => {
    const result = await runCli(['config', 'set', 'defaults.zoom', 'High'], { configDir: join(home.path, 'config') });
    expect(result.exitCode, result.stderr).toBe(0);
  });
});
