// The file names of an export's images: `<id>.jpg` where the id is a safe name
// that fits, else the id made safe, cut and tagged with a hash of itself; an id
// whose name would be one file with an earlier id's where case does not count
// (macOS, Windows) is told apart by a tag too. A large history is named as it
// is listed, so the names given are remembered as 64-bit hashes of their
// folded form in a hash table on disk (bulk/disk-table.ts), not in memory.
import { join } from 'node:path';
import { textKey } from '../../bulk/compact.js';
import { DiskHashTable } from '../../bulk/disk-table.js';
import { fitName, foldName, MAX_NAME_BYTES, nameTag, safeNamePart, utf8Length } from '../../files/file-names.js';
import type { Redact } from '../../text/secrets.js';

/**
 * File name of an image: `<id>.jpg` when the id is a safe name that fits;
 * otherwise the id made safe, cut to fit and tagged with a hash of the id, so
 * that `<id>.jpg` never holds another id's image (a re-run trusts what it finds).
 * Ids are the service's; they are not trusted as paths, and an id that holds
 * a secret is named redacted (secrets.ts), told apart by its hash.
 */
export function imageFileName(id: string, redact: Redact = (text) => text): string {
  const safe = safeNamePart(id);
  return safe === id && redact(id) === id && utf8Length(`${id}.jpg`) <= MAX_NAME_BYTES ? `${id}.jpg` : taggedFileName(id, 0, redact);
}

function taggedFileName(id: string, attempt: number, redact: Redact = (text) => text): string {
  return fitName(safeNamePart(redact(id)), '.jpg', nameTag(id, attempt));
}

/** The names' file in the export directory (under its run lock; removed when the export ends). */
export const NAMES_NAME = '.aerial-export.names';

/**
 * The names of one export, given as ids are first listed (oldest first) and
 * kept for the run: an id whose name would be one file with a name already
 * given (made safe, cut, differing only in case) is the one tagged, so a name
 * depends on the order of the listing alone, not on where its pages break.
 * What is kept: on disk, the hash of each folded name given (a slot of 12
 * bytes, 16 to 32 bytes an image); in memory, the ids whose name is not
 * imageFileName's (only those tagged for a clash). Two folded names that
 * share a 64-bit hash only cost the later one a tag.
 */
export class ExportNames {
  private readonly tagged = new Map<string, string>();

  private constructor(
    private readonly given: DiskHashTable,
    private readonly redact: Redact,
  ) {}

  /** No names given yet, kept in `dir` (replacing the file a killed export left there). */
  static create(dir: string, redact: Redact = (text) => text): ExportNames {
    return new ExportNames(DiskHashTable.create(join(dir, NAMES_NAME), 0), redact);
  }

  /** Makes room at once for the images a listing says it has. */
  reserve(images: number): void {
    this.given.reserve(images);
  }

  /** Names `ids`, none of them named before, in order. */
  name(ids: readonly string[]): void {
    for (const id of ids) {
      const plain = imageFileName(id, this.redact);
      let name = plain;
      for (let attempt = 0; this.given.find(textKey(foldName(name))) !== -1; attempt++) name = taggedFileName(id, attempt, this.redact);
      this.given.slotFor(textKey(foldName(name)));
      if (name !== plain) this.tagged.set(id, name);
    }
  }

  /** The name given to `id` (named before). */
  of(id: string): string {
    return this.tagged.get(id) ?? imageFileName(id, this.redact);
  }

  /** Whether a name given in this run is, where case does not count, the file `name` (or shares its hash). */
  taken(name: string): boolean {
    return this.given.find(textKey(foldName(name))) !== -1;
  }

  /** Closes and removes the names' file. */
  remove(): void {
    this.given.remove();
  }
}
