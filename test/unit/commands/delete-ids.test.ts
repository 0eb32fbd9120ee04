// `aerial delete` in-process with ids that try to leave their path segment,
// against a server that records every request line exactly as it arrived: each id is
// refused before anything is sent, or arrives as one encoded segment under
// the image-generation path.
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, listingOf } from '../../helpers/hostile-server.js';
import { useCommandsAgainstHostileServer } from '../../helpers/hostile-server-commands.js';

const KEY = 'sk_test_hostile_ids_7e41b0';
const PREFIX = '/api/external/v1/image-generation';

const fixture = useCommandsAgainstHostileServer(KEY, { homePrefix: 'aerial-ids-' });
const { cli } = fixture;
beforeEach(() => {
  fixture.server.respond(answer(200));
});

describe('delete with ids shaped like paths', () => {
  it('refuses . and .. (alone or among good ids) with exit 2 and sends nothing', async () => {
    for (const ids of [['..'], ['.'], ['img_1', '..', 'img_2'], [' .. ']]) {
      const result = await cli(['delete', ...ids, '--yes']);
      expect(result.exitCode, ids.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: image id "\.\.?" is a path segment of its own, not an id\n$/);
      expect(fixture.server.requests).toEqual([]);
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
    fixture.server.respond(listingOf(sendable, answer(200)));
    const result = await cli(['delete', ...sendable, '--yes', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).deleted).toEqual(sendable);
    const deletions = fixture.server.requests.filter((r) => r.method === 'DELETE');
    expect(deletions.map((r) => `${r.method} ${r.url}`)).toEqual(sendable.map((id) => `DELETE ${PREFIX}/${encodeURIComponent(id)}`));
  });
});

describe('ids found in the history before anything is deleted', () => {
  const HISTORY = ['0f8c2b1e-aaaa', '0f8c2b1e-bbbb', '7d41a9c3-cccc', 'abc', 'abcd-1234'];
  const deletions = () => fixture.server.requests.filter((r) => r.method === 'DELETE').map((r) => r.url.slice(PREFIX.length + 1));

  it('the start of one id deletes that image, named whole; a whole id wins over ids it starts', async () => {
    fixture.server.respond(listingOf(HISTORY, answer(200)));
    const result = await cli(['delete', '7d41', 'abc', '--yes', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).deleted).toEqual(['7d41a9c3-cccc', 'abc']);
    expect(deletions()).toEqual(['7d41a9c3-cccc', 'abc']);
  });

  it('the start of several ids is refused with the candidates (exit 2), and nothing is deleted', async () => {
    fixture.server.respond(listingOf(HISTORY, answer(200)));
    const result = await cli(['delete', '7d41a9c3', '0f8c2b1e', '--yes']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('error: AmbiguousId — 0f8c2b1e is the start of 2 image ids (0f8c2b1e-aaaa, 0f8c2b1e-bbbb); give more of the id\n');
    expect(deletions()).toEqual([]);
  });

  it('an id the history does not hold is not found (exit 5), and the others are not deleted either', async () => {
    fixture.server.respond(listingOf(HISTORY, answer(200)));
    const result = await cli(['delete', '7d41a9c3-cccc', 'img_gone', '--yes']);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toBe('error: NotFound — image img_gone not found in your history (5 images listed)\n');
    expect(deletions()).toEqual([]);
  });

  it('fewer than 4 characters that are no whole id are a usage error (exit 2), not an image missing', async () => {
    fixture.server.respond(listingOf(HISTORY, answer(200)));
    const short = await cli(['delete', '0f8', '--yes']);
    expect(short.exitCode).toBe(2);
    expect(short.stderr).toBe('error: IdTooShort — 0f8 is no image id, and too short for the start of one: give at least 4 characters (see aerial list)\n');
    expect(deletions()).toEqual([]);
  });

  it('whole ids stop the walk of the history as soon as each is found', async () => {
    const history = Array.from({ length: 500 }, (_, index) => `img_${String(index).padStart(3, '0')}`);
    fixture.server.respond(listingOf(history, answer(200)));
    const result = await cli(['delete', 'img_001', 'img_060', '--yes']);
    expect(result.exitCode, result.stderr).toBe(0);
    // Pages of 50: the second holds img_060.
    expect(fixture.server.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
    expect(deletions()).toEqual(['img_001', 'img_060']);
  });
});
