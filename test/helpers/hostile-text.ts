// Text from outside as an attacker would write it, and what must never reach a
// terminal from it: shared by the spawned and the in-process terminal tests.
import fc from 'fast-check';

/** What must never reach a terminal from outside: C0 controls but newline (and tab in data), DEL, C1, separators, overrides, lone surrogates. */
export const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;

/** Pieces of hostile text: escape sequences of every kind, then ordinary text. */
const PIECES = [
  '\u001b[2J',
  '\u001b[H',
  '\u001b]0;pwned\u0007',
  '\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\',
  '\u009b31m',
  '\u001bc',
  '\r\nerror: forged line',
  '\u2028',
  '\u202eexe.txt',
  '\u2066',
  '\ud800',
  '\u0007',
  '\u0000',
  'plain words',
  'é😀',
];

/** One to six pieces joined. */
export const hostileText = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
