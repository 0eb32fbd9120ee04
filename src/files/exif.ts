// A small EXIF (TIFF) writer: IFD0 with its Exif and GPS sub-IFDs, big-endian,
// as the EXIF 2.32 standard lays them out. Written here because the one pure
// JavaScript writer on npm (piexifjs, unmaintained) puts values where the IFD's
// own next-IFD field is, leaves them on odd offsets and stores UserComment as
// text; `exiftool -validate` rejects all three. The rules kept here: entries
// sorted by tag, each IFD ended by a 4-byte next-IFD offset (0), every value
// longer than 4 bytes placed after its IFD on an even offset, and the
// Exif/GPS IFD pointers as LONG offsets from the TIFF header.

/** The TIFF field types this writer uses, by their number in the standard, with the size of one item. */
export const ExifType = {
  BYTE: 1,
  ASCII: 2,
  SHORT: 3,
  LONG: 4,
  RATIONAL: 5,
  UNDEFINED: 7,
} as const;
type ExifTypeNumber = (typeof ExifType)[keyof typeof ExifType];

const ITEM_BYTES: Record<ExifTypeNumber, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1 };

/** One field: its tag, type and value (items for numbers, text for ASCII, bytes for UNDEFINED). */
export type ExifField =
  | { tag: number; type: typeof ExifType.ASCII; value: string }
  | { tag: number; type: typeof ExifType.UNDEFINED; value: Buffer }
  | { tag: number; type: typeof ExifType.BYTE | typeof ExifType.SHORT | typeof ExifType.LONG; value: number[] }
  | { tag: number; type: typeof ExifType.RATIONAL; value: Array<[numerator: number, denominator: number]> };

export interface ExifDirectories {
  ifd0: ExifField[];
  exif: ExifField[];
  gps: ExifField[];
}

const EXIF_IFD_POINTER = 0x8769;
const GPS_IFD_POINTER = 0x8825;
const TIFF_HEADER_BYTES = 8;
const ENTRY_BYTES = 12;

/** A field's value as bytes, and its count as the entry states it. */
function encodeValue(field: ExifField): { count: number; bytes: Buffer } {
  switch (field.type) {
    case ExifType.ASCII: {
      // NUL-terminated 7-bit text; anything else would be read differently by every reader.
      if (/[^\x00-\x7f]/.test(field.value)) throw new Error(`EXIF ASCII field 0x${field.tag.toString(16)} holds non-ASCII text`);
      const bytes = Buffer.from(`${field.value}\0`, 'latin1');
      return { count: bytes.length, bytes };
    }
    case ExifType.UNDEFINED:
      return { count: field.value.length, bytes: field.value };
    case ExifType.RATIONAL: {
      const bytes = Buffer.alloc(field.value.length * 8);
      field.value.forEach(([numerator, denominator], i) => {
        bytes.writeUInt32BE(numerator, i * 8);
        bytes.writeUInt32BE(denominator, i * 8 + 4);
      });
      return { count: field.value.length, bytes };
    }
    default: {
      const size = ITEM_BYTES[field.type];
      const bytes = Buffer.alloc(field.value.length * size);
      field.value.forEach((item, i) => {
        if (size === 1) bytes.writeUInt8(item, i);
        else if (size === 2) bytes.writeUInt16BE(item, i * 2);
        else bytes.writeUInt32BE(item, i * 4);
      });
      return { count: field.value.length, bytes };
    }
  }
}

const even = (n: number) => n + (n & 1);

interface EncodedField {
  tag: number;
  type: ExifTypeNumber;
  count: number;
  bytes: Buffer;
}

/** Bytes an IFD takes with the values it holds outside its entries. */
function ifdSize(fields: EncodedField[]): number {
  let size = 2 + fields.length * ENTRY_BYTES + 4;
  for (const field of fields) if (field.bytes.length > 4) size += even(field.bytes.length);
  return size;
}

/** Writes one IFD at `offset` (from the TIFF header) into `out`. */
function writeIfd(out: Buffer, offset: number, fields: EncodedField[]): void {
  out.writeUInt16BE(fields.length, offset);
  let values = offset + 2 + fields.length * ENTRY_BYTES + 4;
  fields.forEach((field, i) => {
    const entry = offset + 2 + i * ENTRY_BYTES;
    out.writeUInt16BE(field.tag, entry);
    out.writeUInt16BE(field.type, entry + 2);
    out.writeUInt32BE(field.count, entry + 4);
    if (field.bytes.length <= 4) {
      // Values of 4 bytes or fewer sit in the entry itself, left-justified.
      field.bytes.copy(out, entry + 8);
    } else {
      out.writeUInt32BE(values, entry + 8);
      field.bytes.copy(out, values);
      values += even(field.bytes.length);
    }
  });
  // Next IFD: none (no thumbnail IFD1).
  out.writeUInt32BE(0, offset + 2 + fields.length * ENTRY_BYTES);
}

function encodeFields(fields: ExifField[]): EncodedField[] {
  const tags = new Set<number>();
  return [...fields]
    .sort((a, b) => a.tag - b.tag)
    .map((field) => {
      if (tags.has(field.tag)) throw new Error(`EXIF tag 0x${field.tag.toString(16)} given twice`);
      tags.add(field.tag);
      return { tag: field.tag, type: field.type, ...encodeValue(field) };
    });
}

/**
 * The TIFF structure of an EXIF block ("MM", 42, IFD0 at 8), IFD0 followed by
 * the Exif IFD and the GPS IFD (each left out when it has no field).
 */
export function encodeTiff(directories: ExifDirectories): Buffer {
  const exif = encodeFields(directories.exif);
  const gps = encodeFields(directories.gps);
  const ifd0 = encodeFields([
    ...directories.ifd0,
    // Placeholders, same size as the offsets they become: the layout does not depend on them.
    ...(exif.length ? [{ tag: EXIF_IFD_POINTER, type: ExifType.LONG, value: [0] } as ExifField] : []),
    ...(gps.length ? [{ tag: GPS_IFD_POINTER, type: ExifType.LONG, value: [0] } as ExifField] : []),
  ]);
  const ifd0Offset = TIFF_HEADER_BYTES;
  const exifOffset = ifd0Offset + ifdSize(ifd0);
  const gpsOffset = exifOffset + (exif.length ? ifdSize(exif) : 0);
  for (const field of ifd0) {
    if (field.tag === EXIF_IFD_POINTER) field.bytes = pointerBytes(exifOffset);
    if (field.tag === GPS_IFD_POINTER) field.bytes = pointerBytes(gpsOffset);
  }
  const out = Buffer.alloc(gpsOffset + (gps.length ? ifdSize(gps) : 0));
  out.write('MM', 0, 'latin1');
  out.writeUInt16BE(42, 2);
  out.writeUInt32BE(ifd0Offset, 4);
  writeIfd(out, ifd0Offset, ifd0);
  if (exif.length) writeIfd(out, exifOffset, exif);
  if (gps.length) writeIfd(out, gpsOffset, gps);
  return out;
}

function pointerBytes(offset: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(offset);
  return bytes;
}
