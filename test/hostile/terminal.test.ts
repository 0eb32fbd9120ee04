// Foreign text on the way to a terminal from batch, which writes beside its
// working directory: webhook error payloads of batch --async and invalid
// cells, with escape sequences, bidi overrides and line breaks. Human output
// carries none of them; --json output has the reasons exactly as sent. The
// same for generate-async, list, server messages and ids, in-process:
// test/unit/commands/foreign-text.test.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { acceptAndCallBack, answerJson, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';
import { ACTIVE, hostileText } from '../helpers/hostile-text.js';

const KEY = 'sk_test_hostile_terminal_61fa2c';
registerSecret(KEY);

let server: HostileServer;
let home: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  home = tempDir('aerial-terminal-');
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => server.reset());

function aerial(args: string[], extra: { cwd?: string } = {}) {
  return runCli(args, { configDir: home.path, cwd: extra.cwd, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url }, timeout: 60_000 });
}


describe('webhook error payloads', () => {
  it('batch --async: row lines and the summary are clean; the --json summary has the reasons exactly', async () => {
    const errorMessage = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\r\nerror: forged\u202eexe.txt';
    acceptAndCallBack(server, () => ({ errorCode: 'Bad\u001b[31mCode', errorMessage }));
    const work = tempDir('aerial-terminal-batch-');
    try {
      const csv = join(work.path, 'rows.csv');
      writeFileSync(csv, 'lat,lng\n1,2\n3,4\n');
      const args = ['batch', csv, '--async', '--max-retries', '0', '--callback-timeout', '20s'];
      const human = await aerial(args, { cwd: work.path });
      expect(human.exitCode).toBe(6);
      expect(human.stderr).toMatch(/row 1 failed: .*pwned|row 1 failed: .*forged/);
      expect(human.stderr).not.toMatch(ACTIVE);
      expect(human.stdout).not.toMatch(ACTIVE);

      const json = await aerial([...args, '--json'], { cwd: work.path });
      expect(json.exitCode).toBe(6);
      const summary = JSON.parse(json.stdout) as { rows: Array<{ error: string }> };
      expect(json.stdout).not.toMatch(ACTIVE);
      for (const row of summary.rows) expect(row.error).toContain(errorMessage);
      expect(json.stderr).not.toMatch(ACTIVE);
    } finally {
      work.remove();
    }
  }, 60_000);
});

describe('batch cells', () => {
  it('invalid cells quoted in row errors are clean in the dry run, the summary and the error line', async () => {
    const work = tempDir('aerial-terminal-cells-');
    try {
      const csv = join(work.path, 'cells.jsonl');
      const cells = fc.sample(hostileText, { numRuns: 5, seed: 14 });
      writeFileSync(csv, `${cells.map((text, i) => JSON.stringify({ lat: i, lng: 2, bearing: `x${text}`, [`col\u001b[2J${i}`]: 'x' })).join('\n')}\n`);
      const dry = await aerial(['batch', csv, '--dry-run'], { cwd: work.path });
      expect(dry.exitCode).toBe(2);
      expect(dry.stdout).toMatch(/invalid {2}line 1 \(row 1\): column 'bearing' must be one of/);
      expect(dry.stdout + dry.stderr).not.toMatch(ACTIVE);

      server.respond(answerJson(500, { error: 'ErrorGeneratingImage', message: 'no' }));
      const run = await aerial(['batch', csv, '--skip-invalid', '--max-retries', '0'], { cwd: work.path });
      expect(run.stderr).toMatch(/ {2}line 1 \(row 1\) is invalid: column 'bearing' must be one of/);
      expect(run.stdout + run.stderr).not.toMatch(ACTIVE);
    } finally {
      work.remove();
    }
  });
});
