// The sandbox's world data file (dist/sandbox-world.bin): typed arrays packed
// one after another behind a small JSON table of contents, so a render thread
// loads the whole world with one read and a few typed-array views, without
// parsing anything per place. The build writes it (compile.ts) from the npm
// packages that carry the data; atlas.ts reads it.
//
// Layout: "AERW" magic, u32 format version, u32 length of the JSON table, the
// table ({name: {type, offset, length}}), padding to 8 bytes, then the sections,
// each starting on an 8-byte boundary (offsets count from the file's start).

const MAGIC = 'AERW';
/** Bumped whenever the sections or their meaning change; a file of another version is refused. */
export const WORLD_FORMAT_VERSION = 1;

const ARRAY_TYPES = {
  u8: Uint8Array,
  i16: Int16Array,
  u16: Uint16Array,
  i32: Int32Array,
  u32: Uint32Array,
  f32: Float32Array,
  f64: Float64Array,
} as const;

type ArrayType = keyof typeof ARRAY_TYPES;
export type Section = Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

interface Entry {
  type: ArrayType;
  offset: number;
  length: number;
}

function typeOf(array: Section): ArrayType {
  for (const [name, constructor] of Object.entries(ARRAY_TYPES)) if (array instanceof constructor) return name as ArrayType;
  throw new TypeError('unsupported section type');
}

const align8 = (n: number) => (n + 7) & ~7;

/** Packs named typed arrays, plus a JSON value of small facts (`meta`), into one buffer. */
export function packWorld(sections: Record<string, Section>, meta: unknown): Buffer {
  const table: Record<string, Entry> = {};
  const entries = Object.entries(sections);
  // Offsets depend on the table's length, which depends on the offsets' digits: lay out twice.
  let start = 0;
  for (let pass = 0; pass < 2; pass++) {
    let offset = start;
    for (const [name, array] of entries) {
      table[name] = { type: typeOf(array), offset, length: array.length };
      offset = align8(offset + array.byteLength);
    }
    const header = Buffer.from(JSON.stringify({ meta, sections: table }));
    start = align8(12 + header.length + 64);
  }
  const header = Buffer.from(JSON.stringify({ meta, sections: table }));
  const last = entries.at(-1);
  const size = last ? align8(table[last[0]]!.offset + last[1].byteLength) : start;
  const out = Buffer.alloc(size);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(WORLD_FORMAT_VERSION, 4);
  out.writeUInt32LE(header.length, 8);
  header.copy(out, 12);
  for (const [name, array] of entries) {
    Buffer.from(array.buffer, array.byteOffset, array.byteLength).copy(out, table[name]!.offset);
  }
  return out;
}

export interface WorldFile {
  meta: unknown;
  section<T extends Section>(name: string, type: new (...args: never[]) => T): T;
}

/** Views into `bytes` (no copy); throws on a file that is not a world file of this format version. */
export function unpackWorld(bytes: Uint8Array): WorldFile {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!);
  if (magic !== MAGIC) throw new Error('not a sandbox world data file');
  const version = view.getUint32(4, true);
  if (version !== WORLD_FORMAT_VERSION) {
    throw new Error(`the sandbox world data file has format ${version}; this build reads format ${WORLD_FORMAT_VERSION} (run npm run build)`);
  }
  const headerLength = view.getUint32(8, true);
  const { meta, sections } = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength))) as {
    meta: unknown;
    sections: Record<string, Entry>;
  };
  return {
    meta,
    section(name, type) {
      const entry = sections[name];
      if (!entry) throw new Error(`the sandbox world data file has no section ${name}`);
      const constructor = ARRAY_TYPES[entry.type] as unknown as new (buffer: ArrayBufferLike, offset: number, length: number) => Section;
      const array = new constructor(bytes.buffer, bytes.byteOffset + entry.offset, entry.length);
      if (!(array instanceof type)) throw new Error(`section ${name} is ${entry.type}, not the type asked for`);
      return array as never;
    },
  };
}
