// Image ids come from the service (list records, webhooks) and from users
// (`aerial delete <id>`), and travel in a URL path: DELETE
// /image-generation/{id}. An id is data, never a path of its own: it is sent
// percent-encoded as exactly one segment, and the few strings that no
// encoding can keep in their place are refused before anything is sent.
import { InvalidInputError } from './errors.js';

/** C0 and C1 control characters: in an identifier they mean a broken server or a mangled argument. */
const CONTROL_RANGES = '\\u0000-\\u001f\\u007f-\\u009f';
export const CONTROL_CHARACTERS = new RegExp(`[${CONTROL_RANGES}]`);
/** A text with none of them. */
export const NO_CONTROL_CHARACTERS = new RegExp(`^[^${CONTROL_RANGES}]*$`);

/** The id, when it can be one; an InvalidInputError (nothing sent) saying why not. */
export function checkImageId(id: string): string {
  const problem = imageIdProblem(id);
  if (problem) throw new InvalidInputError(`image id ${JSON.stringify(id)} ${problem}`);
  return id;
}

function imageIdProblem(id: string): string | undefined {
  if (id === '') return 'is empty';
  // URL parsing resolves these (and their %2E spellings) as "this directory" and "the parent".
  if (id === '.' || id === '..') return 'is a path segment of its own, not an id';
  if (CONTROL_CHARACTERS.test(id)) return 'contains control characters';
  // A lone surrogate has no UTF-8 form: it cannot travel, and encodeURIComponent throws on it.
  if (/\p{Cs}/u.test(id)) return 'is not valid Unicode';
  return undefined;
}

/**
 * The id as one URL path segment. encodeURIComponent leaves only letters,
 * digits and -_.!~*'() as they are, so `/`, `\`, `%2F`, `?` and `#` stay
 * inside the segment; the dot segments are refused by checkImageId.
 */
export function imageIdSegment(id: string): string {
  return encodeURIComponent(checkImageId(id));
}
