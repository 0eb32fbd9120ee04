// `aerial delete` with ids that try to leave their path segment, against a
// server that records every request line exactly as it arrived: each id is
// refused before anything is sent, or arrives as one encoded segment under
// the image-generation path.
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret, runCli, tempDir } from '../helpers/cli.js';
import { answer, startHostileServer, type HostileServer } from '../helpers/hostile-server.js';

const KEY = 'sk_test_hostile_ids_7e41b0';
registerSecret(KEY);
const PREFIX = '/api/external/v1/image-generation';

let server: HostileServer;
let home: ReturnType<typeof tempDir>;

beforeAll(async () => {
  server = await startHostileServer();
  home = tempDir('aerial-ids-');
});
afterAll(async () => {
  await server.close();
  home.remove();
});
beforeEach(() => {
  server.reset();
  server.respond(answer(200));
});

function aerial(args: string[]) {
  return runCli(args, { configDir: home.path, env: { AERIAL_API_KEY: KEY, AERIAL_BASE_URL: server.url } });
}

describe('delete with ids shaped like paths', () => {
  it('refuses . and .. (alone or among good ids) with exit 2 and sends nothing', async () => {
    for (const ids of [['..'], ['.'], ['img_1', '..', 'img_2'], [' .. ']]) {
      const result = await aerial(['delete', ...ids, '--yes']);
      expect(result.exitCode, ids.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: image id "\.\.?" is a path segment of its own, not an id\n$/);
      expect(server.requests).toEqual([]);
    }
  });

  it('sends every other id as one encoded segment under the image path (generated ids)', async () => {
    const piece = fc.constantFrom('.', '..', '%2e', '%2E%2E', '/', '\\', '%2F', '?', '#', ';', ' ', 'é', '😀', 'a', 'x.y');
    const ids = fc.sample(
      fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')),
      { numRuns: 400, seed: 14 },
    );
    // As a shell would pass them: trimmed of surrounding blanks, not empty, not a dot segment.
    const sendable = [...new Set(ids.map((id) => id.trim()))].filter((id) => id !== '' && id !== '.' && id !== '..').slice(0, 60);
    expect(sendable.length).toBeGreaterThan(40);
    const result = await aerial(['delete', ...sendable, '--yes', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).deleted).toEqual(sendable);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(sendable.map((id) => `DELETE ${PREFIX}/${encodeURIComponent(id)}`));
  });
});
