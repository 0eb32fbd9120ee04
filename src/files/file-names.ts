// File names made from data the CLI did not choose: image ids (export), and
// batch cells and template values. A name made here is one component: no
// separators, no dot segments, no control or bidirectional-override
// characters, and at most 255 bytes of UTF-8 (ext4, XFS and APFS count bytes,
// not characters), cut between characters. Inputs that would make the same
// name are told apart by a short hash of the input, so a job goes on and the
// same input always gets the same name. The temp files written beside a
// target are named here too, so a name of the full 255 bytes still gets a
// temp name that fits.
import { createHash } from 'node:crypto';
import { relative } from 'node:path';

/** Longest file name (one path component), in bytes of UTF-8. */
export const MAX_NAME_BYTES = 255;
/** Longest path the system calls take (Linux PATH_MAX less its terminator), in bytes. */
export const MAX_PATH_BYTES = 4095;

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

let graphemes: Intl.Segmenter | undefined;

/**
 * The longest start of `text` within `maxBytes` of UTF-8, cut between
 * characters as people see them (a letter keeps its accents, an emoji its
 * modifiers); a single character longer than the room is left out whole.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  if (utf8Length(text) <= maxBytes) return text;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let bytes = 0;
  let end = 0;
  for (const { segment } of graphemes.segment(text)) {
    const size = utf8Length(segment);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += segment.length;
  }
  return text.slice(0, end);
}

/**
 * A short tag that tells one input from another: `~` and ten hex digits of its
 * SHA-256, then `-2`, `-3`… for further attempts (two inputs whose hashes
 * share those digits, which only a server crafting ids would arrange).
 */
export function nameTag(input: string, attempt = 0): string {
  const hash = createHash('sha256').update(input).digest('hex').slice(0, 10);
  return attempt === 0 ? `~${hash}` : `~${hash}-${attempt + 1}`;
}

// Path separators, characters Windows forbids in names, control characters (C0, C1), line and
// paragraph separators, bidirectional marks and overrides (which make a name read as another),
// and lone surrogates (which have no UTF-8 form).
const UNSAFE = /[/\\:*?"<>|\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cs}]/gu;

/** One value made safe as (part of) a single file name. Not cut: see fitName and fitPath. */
export function safeNamePart(value: string): string {
  const text = value
    .normalize('NFC')
    .replace(UNSAFE, '_')
    .replace(/\s+/gu, '_')
    // A leading dot would hide the file or, as '..', name the parent directory.
    .replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  return text === '' ? '_' : text;
}

/** `stem`, `tag` and `ending` within `maxBytes`: the stem is cut, never the tag or the ending. */
export function fitName(stem: string, ending = '', tag = '', maxBytes = MAX_NAME_BYTES): string {
  return `${cutToBytes(stem, maxBytes - utf8Length(tag) - utf8Length(ending))}${tag}${ending}`;
}

/** A name as it is when it fits, else cut and tagged with a hash of the whole name (two long names never become one). */
export function boundedName(stem: string, ending = '', maxBytes = MAX_NAME_BYTES): string {
  const whole = `${stem}${ending}`;
  return utf8Length(whole) <= maxBytes ? whole : fitName(stem, ending, nameTag(whole), maxBytes);
}

/** A name's ending worth keeping when it is cut: its extension (`.jpg`), if it has a short one. */
export function splitExtension(name: string): [stem: string, ending: string] {
  const dot = name.lastIndexOf('.');
  return dot > 0 && name.length - dot <= 8 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
}

/** A path whose every component fits: a longer one is cut and tagged, keeping its extension. */
export function fitPath(path: string): string {
  return path
    .split('/')
    .map((component) => boundedName(...splitExtension(component)))
    .join('/');
}

/** How names compare where they are files: macOS and Windows ignore case, APFS ignores Unicode form. */
export function foldName(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/**
 * Gives every item a name that no other item's name folds to. In each group
 * of clashing names, the one item `keepsName` picks (if exactly one) keeps its
 * name and the others are renamed by `rename(item, attempt)`; should renamed
 * items still clash, the first of a group keeps its name and the others try
 * their next attempt. Deterministic for the same items in the same order.
 */
export function separateNames<T>(
  items: readonly T[],
  nameOf: (item: T) => string,
  rename: (item: T, attempt: number) => string,
  keepsName: (item: T) => boolean,
): Map<T, string> {
  const names = new Map(items.map((item) => [item, nameOf(item)]));
  const attempts = new Map<T, number>();
  // Each round renames at least one item with a higher attempt than before; one round settles honest inputs.
  for (let round = 0; round <= items.length + 1; round++) {
    const groups = new Map<string, T[]>();
    for (const item of items) {
      const key = foldName(names.get(item)!);
      const group = groups.get(key);
      if (group) group.push(item);
      else groups.set(key, [item]);
    }
    let clashed = false;
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      clashed = true;
      const keepers = group.filter((item) => !attempts.has(item) && keepsName(item));
      const keeper = round === 0 ? (keepers.length === 1 ? keepers[0] : undefined) : group[0];
      let next = 0;
      for (const item of group) {
        if (item === keeper) continue;
        const attempt = attempts.has(item) ? attempts.get(item)! + 1 + next++ : 0;
        attempts.set(item, attempt);
        names.set(item, rename(item, attempt));
      }
    }
    if (!clashed) return names;
  }
  throw new Error('file names could not be separated');
}

/** The bytes `.<name>.<12 hex>.part` adds to a name. */
const PART_OVERHEAD = '.'.length + '.'.length + 12 + '.part'.length;

/**
 * What every temp file of a target starts with: `.` and the target's name, then `.`.
 * A name too long for that is cut and tagged so that the whole temp name is no
 * longer than the target's own name: a file system with a limit below 255 bytes
 * that takes the target takes its temp file too.
 */
export function partFilePrefix(targetName: string): string {
  const bytes = utf8Length(targetName);
  if (bytes + PART_OVERHEAD <= MAX_NAME_BYTES) return `.${targetName}.`;
  return `.${boundedName(targetName, '', Math.min(MAX_NAME_BYTES, bytes) - PART_OVERHEAD)}.`;
}

/** The temp file written beside a target before it is renamed into place: `.<name>.<12 hex>.part`. */
export function partFileName(targetName: string, random: string): string {
  return `${partFilePrefix(targetName)}${random}.part`;
}

const PART_ENDING = /^[0-9a-f]{12}\.part$/;

/** The prefix a temp file name was made with (see partFilePrefix), or undefined when it is not a temp file's. */
export function partFilePrefixOf(candidate: string): string | undefined {
  const ending = candidate.slice(-'0123456789ab.part'.length);
  return candidate.startsWith('.') && PART_ENDING.test(ending) ? candidate.slice(0, -ending.length) : undefined;
}

/** Whether `candidate` is one of the temp files partFileName makes for `targetName`. */
export function isPartFileOf(candidate: string, targetName: string): boolean {
  return partFilePrefixOf(candidate) === partFilePrefix(targetName);
}

/** A path as messages show it: relative to the working directory when it lies inside it, else whole. */
export function displayPath(path: string): string {
  const fromCwd = relative(process.cwd(), path);
  return fromCwd && !fromCwd.startsWith('..') ? fromCwd : path;
}
