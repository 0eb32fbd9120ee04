// Image ids in URL paths, over generated ids built from the pieces that climb
// out of paths (dot segments, their percent-encoded spellings, separators,
// query and fragment marks) and arbitrary Unicode: every id is either refused
// as a usage error, or becomes exactly one path segment that URL parsing
// leaves as it is and that decodes back to the id.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/api/errors.js';
import { cliErrorOf, type CliError, ExitCode } from '../../src/lifecycle/errors.js';
import { checkImageId, imageIdSegment } from '../../src/api/image-id.js';

const PREFIX = '/api/external/v1/image-generation';

/** Pieces of hostile ids; strung together they make dot segments in every spelling, and worse. */
const PIECES = ['.', '..', '%2e', '%2E', '%2e%2e', '/', '\\', '%2F', '%2f', '%5C', '?', '#', ';', '%', '%00', ' ', '\u0000', '\u001b', '\u0085', '\ud800', 'é', '😀', 'a', 'img_1'];
const hostileId = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('.', '/', '%', '2', 'e', 'E', 'f', 'F'), maxLength: 8 }),
);

/** How the CLI reports the refusal of `id`, if it is refused. */
function refusal(id: string): CliError | undefined {
  try {
    checkImageId(id);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return cliErrorOf(error as InvalidInputError);
  }
}

describe('image ids in the delete path', () => {
  it('are refused with exit 2, or travel as exactly one segment that decodes to the id (property)', () => {
    let refused = 0;
    let sent = 0;
    fc.assert(
      fc.property(hostileId, (id) => {
        const error = refusal(id);
        if (error) {
          refused++;
          expect(error.exitCode).toBe(ExitCode.Usage);
          // Refused only for what no encoding can carry: nothing, the dot segments, controls, lone surrogates.
          expect(id === '' || id === '.' || id === '..' || /[\u0000-\u001f\u007f-\u009f]/.test(id) || /\p{Cs}/u.test(id)).toBe(true);
          return;
        }
        sent++;
        const segment = imageIdSegment(id);
        const url = new URL(`https://api.example${PREFIX}/${segment}`);
        expect(url.pathname).toBe(`${PREFIX}/${segment}`);
        expect(url.search).toBe('');
        expect(url.hash).toBe('');
        expect(segment).not.toMatch(/[/\\?#]/);
        expect(decodeURIComponent(segment)).toBe(id);
      }),
      { numRuns: 5000 },
    );
    expect(refused).toBeGreaterThan(100);
    expect(sent).toBeGreaterThan(1000);
  });

  it('names the id and the reason when refusing', () => {
    expect(() => checkImageId('..')).toThrow('image id ".." is a path segment of its own, not an id');
    expect(() => checkImageId('.')).toThrow('is a path segment of its own');
    expect(() => checkImageId('')).toThrow('image id "" is empty');
    expect(() => checkImageId('a\u001b[2Jb')).toThrow('image id "a\\u001b[2Jb" contains control characters');
    expect(() => checkImageId('\ud800')).toThrow('is not valid Unicode');
    expect(imageIdSegment('...')).toBe('...');
    expect(imageIdSegment('%2e%2e')).toBe('%252e%252e');
    expect(imageIdSegment('../x')).toBe('..%2Fx');
  });
});
