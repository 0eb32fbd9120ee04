// On-disk counterparts of compact.ts's tables, for state that must not grow
// in memory with the history it is kept for (an export of millions of images):
// an open-addressing hash table keyed by 64-bit hashes, and an array of
// fixed-size records indexed by number, each in a file of its own. Nothing of
// either is held but a small read buffer; the operating system's page cache
// keeps the files' hot parts, outside the process.
//
// Reads and writes are synchronous positional ones (pread, pwrite): a few
// bytes from the page cache take a microsecond or two that way, where an
// asynchronous call would cost a trip through libuv's thread pool for each.
// The caller owns the files' place (a directory under its run lock): they are
// made afresh, replacing what a killed run left, private to the user, and
// removed by remove().
import { closeSync, ftruncateSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { namingFile } from '../lifecycle/errors.js';

/** Slots read at once where a key's probe starts: nearly every probe of a table at most 3/4 full ends within them. */
const PROBE_BLOCK_SLOTS = 16;
/** Keys reserve() makes room for at most: a count that comes from a service is not trusted with the disk. */
const MAX_RESERVED = 2_000_000;
/** Bytes read at once by a walk over every slot or record. */
const SCAN_BYTES = 64 * 1024;

/** A file made afresh at `path` (0600), replacing whatever was there. */
function freshFile(path: string): number {
  try {
    unlinkSync(path);
  } catch {
    // Nothing there, the usual case.
  }
  return openSync(path, 'wx+', 0o600);
}

/** Reads `length` bytes at `position` into `buffer`, zeros past the end of the file. */
function readAt(fd: number, path: string, buffer: Buffer, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const read = on(path, () => readSync(fd, buffer, done, length - done, position + done));
    if (read === 0) break;
    done += read;
  }
  buffer.fill(0, done, length);
}

/** `io()` on the open file at `path`, a failure naming it (a full disk, found by a write). */
function on<T>(path: string, io: () => T): T {
  try {
    return io();
  } catch (error) {
    throw namingFile(error, path);
  }
}

function closeAndRemove(fd: number | undefined, path: string): void {
  if (fd !== undefined) closeSync(fd);
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function writeAt(fd: number, path: string, buffer: Buffer, length: number, position: number): void {
  let done = 0;
  while (done < length) done += on(path, () => writeSync(fd, buffer, done, length - done, position + done));
}

/** A file of the run's, open until remove() closes and removes it. */
class DiskFile {
  constructor(
    readonly path: string,
    protected fd: number | undefined,
  ) {}

  /** Closes and removes the file. */
  remove(): void {
    closeAndRemove(this.fd, this.path);
    this.fd = undefined;
  }

  protected get handle(): number {
    if (this.fd === undefined) throw new Error(`${this.path} is closed`);
    return this.fd;
  }
}

/**
 * A hash table in a file from 64-bit keys (two 32-bit words, such as
 * compact.ts's textKey) to a slot holding `valueWords` 32-bit values.
 * A slot is a word saying it is used, the key's two words, then the values,
 * little-endian. It doubles at 3/4 full, into a new file renamed over the old.
 */
export class DiskHashTable extends DiskFile {
  private slots: number;
  private mask: number;
  private readonly slotBytes: number;
  private readonly block: Buffer;
  private readonly word = Buffer.alloc(4);
  size = 0;

  private constructor(
    path: string,
    fd: number | undefined,
    private readonly valueWords: number,
    slots: number,
  ) {
    super(path, fd);
    this.slots = slots;
    this.mask = slots - 1;
    this.slotBytes = (3 + valueWords) * 4;
    this.block = Buffer.alloc(PROBE_BLOCK_SLOTS * this.slotBytes);
  }

  /** A new, empty table at `path` with room for `expected` keys before it first doubles. */
  static create(path: string, valueWords: number, expected = 768): DiskHashTable {
    const table = new DiskHashTable(path, freshFile(path), valueWords, slotsFor(expected));
    on(path, () => ftruncateSync(table.handle, table.slots * table.slotBytes));
    return table;
  }

  /** The slot holding `key`, or -1. */
  find(key: ArrayLike<number>): number {
    const { slot, found } = this.probe(key);
    return found ? slot : -1;
  }

  /** The slot holding `key`, made with the values `initial` (else zeros) when it is not there; `added` tells which. */
  slotFor(key: ArrayLike<number>, initial?: readonly number[]): { slot: number; added: boolean } {
    if ((this.size + 1) * 4 > this.slots * 3) this.grow(this.slots * 2);
    const { slot, found } = this.probe(key);
    if (found) return { slot, added: false };
    this.writeSlot(slot, key, initial);
    this.size++;
    return { slot, added: true };
  }

  /** Makes room for `expected` keys (at most MAX_RESERVED) at once, rather than by doubling as they come. */
  reserve(expected: number): void {
    const slots = slotsFor(Math.min(expected, MAX_RESERVED));
    if (slots > this.slots) this.grow(slots);
  }

  /** Value `index` of `slot`. */
  value(slot: number, index: number): number {
    readAt(this.handle, this.path, this.word, 4, slot * this.slotBytes + (3 + index) * 4);
    return this.word.readUInt32LE(0);
  }

  setValue(slot: number, index: number, value: number): void {
    this.word.writeUInt32LE(value >>> 0, 0);
    writeAt(this.handle, this.path, this.word, 4, slot * this.slotBytes + (3 + index) * 4);
  }

  /** Every slot in use with its key and values, in the order of the file (not of the keys' coming). */
  *entries(): Generator<{ slot: number; key: [number, number]; values: number[] }> {
    const perChunk = Math.max(1, Math.floor(SCAN_BYTES / this.slotBytes));
    const chunk = Buffer.alloc(perChunk * this.slotBytes);
    for (let first = 0; first < this.slots; first += perChunk) {
      const count = Math.min(perChunk, this.slots - first);
      readAt(this.handle, this.path, chunk, count * this.slotBytes, first * this.slotBytes);
      for (let i = 0; i < count; i++) {
        const at = i * this.slotBytes;
        if (chunk.readUInt32LE(at) === 0) continue;
        const values = Array.from({ length: this.valueWords }, (_, v) => chunk.readUInt32LE(at + (3 + v) * 4));
        yield { slot: first + i, key: [chunk.readUInt32LE(at + 4), chunk.readUInt32LE(at + 8)], values };
      }
    }
  }

  private start(key: ArrayLike<number>): number {
    return (Math.imul(key[0]! ^ (key[1]! >>> 7), 0x9e3779b1) >>> 0) & this.mask;
  }

  /** Where `key` is, or the free slot where it would go. */
  private probe(key: ArrayLike<number>): { slot: number; found: boolean } {
    const key0 = key[0]! >>> 0;
    const key1 = key[1]! >>> 0;
    for (let slot = this.start(key); ; ) {
      const count = Math.min(PROBE_BLOCK_SLOTS, this.slots - slot);
      readAt(this.handle, this.path, this.block, count * this.slotBytes, slot * this.slotBytes);
      for (let i = 0; i < count; i++) {
        const at = i * this.slotBytes;
        if (this.block.readUInt32LE(at) === 0) return { slot: slot + i, found: false };
        if (this.block.readUInt32LE(at + 4) === key0 && this.block.readUInt32LE(at + 8) === key1) return { slot: slot + i, found: true };
      }
      slot = (slot + count) & this.mask;
    }
  }

  private writeSlot(slot: number, key: ArrayLike<number>, values?: readonly number[]): void {
    const bytes = Buffer.alloc(this.slotBytes);
    bytes.writeUInt32LE(1, 0);
    bytes.writeUInt32LE(key[0]! >>> 0, 4);
    bytes.writeUInt32LE(key[1]! >>> 0, 8);
    values?.forEach((value, v) => bytes.writeUInt32LE(value >>> 0, (3 + v) * 4));
    writeAt(this.handle, this.path, bytes, this.slotBytes, slot * this.slotBytes);
  }

  /** Moves every key into a table of `slots` slots: a new file, renamed over this one once whole. */
  private grow(slots: number): void {
    const oldFd = this.handle;
    const oldSlots = this.slots;
    const growing = `${this.path}.grow`;
    const fd = freshFile(growing);
    on(growing, () => ftruncateSync(fd, slots * this.slotBytes));
    const old = new DiskHashTable(this.path, oldFd, this.valueWords, oldSlots);
    this.fd = fd;
    this.slots = slots;
    this.mask = slots - 1;
    for (const { key, values } of old.entries()) this.writeSlot(this.probe(key).slot, key, values);
    renameSync(growing, this.path);
    closeSync(oldFd);
  }
}

function slotsFor(expected: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(16, (expected * 4) / 3 + 1)));
}

/**
 * Records of `recordBytes` bytes in a file, record n at n × recordBytes; a
 * record never written reads as zeros. read() hands back one shared buffer,
 * good until the next call.
 */
export class DiskRecords extends DiskFile {
  private readonly record: Buffer;

  private constructor(
    path: string,
    fd: number | undefined,
    private readonly recordBytes: number,
  ) {
    super(path, fd);
    this.record = Buffer.alloc(recordBytes);
  }

  static create(path: string, recordBytes: number): DiskRecords {
    return new DiskRecords(path, freshFile(path), recordBytes);
  }

  read(n: number): Buffer {
    readAt(this.handle, this.path, this.record, this.recordBytes, n * this.recordBytes);
    return this.record;
  }

  /** Writes `record` (recordBytes long, such as the buffer read() gave, changed) as record n. */
  write(n: number, record: Buffer): void {
    writeAt(this.handle, this.path, record, this.recordBytes, n * this.recordBytes);
  }

  /** Records 0 to count - 1 in order, each as a view good until the next. */
  *scan(count: number): Generator<Buffer> {
    const perChunk = Math.max(1, Math.floor(SCAN_BYTES / this.recordBytes));
    const chunk = Buffer.alloc(perChunk * this.recordBytes);
    for (let first = 0; first < count; first += perChunk) {
      const n = Math.min(perChunk, count - first);
      readAt(this.handle, this.path, chunk, n * this.recordBytes, first * this.recordBytes);
      for (let i = 0; i < n; i++) yield chunk.subarray(i * this.recordBytes, (i + 1) * this.recordBytes);
    }
  }
}
