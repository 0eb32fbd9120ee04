// Compact per-row state for batches far larger than memory would hold as
// objects: open-addressing hash tables over typed arrays, keyed by a few
// 32-bit words (a 64-bit hash of a name, or the 128 bits of a manifest key),
// and growable typed arrays indexed by row. A million rows cost a few bytes
// each, not a few hundred.

/** A 32-bit hash of `text` (murmur-style mixing of its UTF-16 code units), seeded so that two seeds give independent halves. */
function hashText(text: string, seed: number): number {
  let h = seed ^ text.length;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The 64-bit hash of a text as two words. A hit is not proof of equality:
 * callers that act on one check the texts themselves (two of a million
 * names share a hash about once in 36 million batches).
 */
export function textKey(text: string): [number, number] {
  return [hashText(text, 0x9e3779b9), hashText(text, 0x85ebca77)];
}

/** The words of a manifest key (32 hex digits): the whole key, so equal words mean equal keys. */
export function hexKey(key: string): [number, number, number, number] | undefined {
  if (key.length !== 32) return undefined;
  const words: [number, number, number, number] = [0, 0, 0, 0];
  for (let w = 0; w < 4; w++) {
    let word = 0;
    for (let i = w * 8; i < w * 8 + 8; i++) {
      const c = key.charCodeAt(i);
      const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
      if (digit === -1) return undefined;
      word = word * 16 + digit;
    }
    words[w] = word;
  }
  return words;
}

/**
 * A hash table from keys of `width` 32-bit words to a slot, with `columns`
 * 32-bit values per slot, and a small count per slot of how often its key
 * was met (up to 255). Grows by doubling at 3/4 full. Column arrays are
 * replaced when it grows: read them from `columns` after each slotFor().
 */
export class WordTable {
  private keys: Uint32Array;
  /** 0 for a free slot, else how often its key was met. */
  private used: Uint8Array;
  readonly columns: Uint32Array[];
  private mask: number;
  size = 0;

  constructor(
    private readonly width: number,
    columnCount: number,
    /** Keys expected: room for them is made at once, rather than by doubling (each doubling briefly holds both tables). */
    expected = 768,
  ) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(16, (expected * 4) / 3 + 1)));
    this.keys = new Uint32Array(slots * width);
    this.used = new Uint8Array(slots);
    this.columns = Array.from({ length: columnCount }, () => new Uint32Array(slots));
    this.mask = slots - 1;
  }

  /** The slot holding `key`, or -1. */
  find(key: ArrayLike<number>): number {
    for (let slot = this.start(key); ; slot = (slot + 1) & this.mask) {
      if (!this.used[slot]) return -1;
      if (this.matches(slot, key)) return slot;
    }
  }

  /** The slot holding `key`, made (with zero values) when it is not there; `added` tells which. */
  slotFor(key: ArrayLike<number>): { slot: number; added: boolean } {
    if ((this.size + 1) * 4 > this.used.length * 3) this.grow();
    for (let slot = this.start(key); ; slot = (slot + 1) & this.mask) {
      if (!this.used[slot]) {
        this.used[slot] = 1;
        for (let w = 0; w < this.width; w++) this.keys[slot * this.width + w] = key[w]! >>> 0;
        this.size++;
        return { slot, added: true };
      }
      if (this.matches(slot, key)) {
        if (this.used[slot]! < 255) this.used[slot]! += 1;
        return { slot, added: false };
      }
    }
  }

  /** How often the key in `slot` was met through slotFor (at most 255). */
  hits(slot: number): number {
    return this.used[slot]!;
  }

  /** Every slot in use. */
  *slots(): Generator<number> {
    for (let slot = 0; slot < this.used.length; slot++) if (this.used[slot]) yield slot;
  }

  private start(key: ArrayLike<number>): number {
    return (Math.imul(key[0]! ^ (key[1]! >>> 7), 0x9e3779b1) >>> 0) & this.mask;
  }

  private matches(slot: number, key: ArrayLike<number>): boolean {
    for (let w = 0; w < this.width; w++) if (this.keys[slot * this.width + w] !== key[w]! >>> 0) return false;
    return true;
  }

  private grow(): void {
    const { keys, used, width } = this;
    // A copy of the list: the arrays in `this.columns` are replaced below.
    const columns = [...this.columns];
    const slots = used.length * 2;
    this.keys = new Uint32Array(slots * width);
    this.used = new Uint8Array(slots);
    this.columns.splice(0, columns.length, ...columns.map(() => new Uint32Array(slots)));
    this.mask = slots - 1;
    this.size = 0;
    for (let old = 0; old < used.length; old++) {
      if (!used[old]) continue;
      const { slot } = this.slotFor(keys.subarray(old * width, old * width + width));
      this.used[slot] = used[old]!;
      for (let c = 0; c < columns.length; c++) this.columns[c]![slot] = columns[c]![old]!;
    }
  }
}

/** A Uint8Array or Uint32Array indexed by row number that grows as rows come. */
export class RowArray<T extends Uint8Array | Uint32Array | Float64Array> {
  private data: T;

  constructor(private readonly make: (length: number) => T) {
    this.data = make(1024);
  }

  get(row: number): number {
    return row < this.data.length ? this.data[row]! : 0;
  }

  set(row: number, value: number): void {
    if (row >= this.data.length) {
      const grown = this.make(Math.max(row + 1, this.data.length * 2));
      grown.set(this.data as never);
      this.data = grown;
    }
    this.data[row] = value;
  }
}
