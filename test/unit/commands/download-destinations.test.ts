// Image URLs a hostile service chose for generate-async --listen's download
// (the webhook's signedUrl), in-process: never a link-local or cloud metadata
// address in any spelling, only plain http(s); exit 6 in one line, nothing
// written. Batch and export with such URLs, names resolving to them, and the
// key never travelling with a download: test/hostile/downloads.test.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptAndCallBack, FORBIDDEN_URLS, NOT_HTTP } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';

const KEY = 'sk_test_hostile_downloads_0c7d3a';

const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-downloads-' });
const { cli } = fixture;

describe('generate-async --listen with a hostile signedUrl', () => {
  for (const signedUrl of [...FORBIDDEN_URLS, ...NOT_HTTP]) {
    it(`refuses ${signedUrl}: exit 6, one line, nothing written`, async () => {
      acceptAndCallBack(fixture.server, (requestId) => ({ signedUrl, generatedImageId: `img-${requestId}`, creditsUsed: 1 }));
      const out = join(fixture.home.path, 'never.jpg');
      const result = await cli(['generate-async', '--lat', '1', '--lng', '2', '--listen', '--timeout', '20s', '-o', out, '--quiet']);
      expect(result.exitCode).toBe(6);
      const lines = result.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(signedUrl.startsWith('http') ? /^error: ForbiddenDestination — refused to download from \S+: a link-local or cloud metadata address$/ : /^error: BadImageUrl — image URL must be http\(s\)/);
      expect(existsSync(out)).toBe(false);
    });
  }
});
