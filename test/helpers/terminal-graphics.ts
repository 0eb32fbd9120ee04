// Parsers for what `aerial view` writes to a terminal, strict enough that a
// malformed sequence fails the test: the kitty graphics protocol's APC chunks,
// iTerm2's OSC 1337 File=, sixel's DCS, and half-block lines.

/** Width and height of a PNG, from its IHDR chunk; throws if the bytes are not a PNG. */
export function pngSize(png: Buffer): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!png.subarray(0, 8).equals(signature) || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(text: string, what: string): Buffer {
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new Error(`${what} is not base64 (${text.length} characters)`);
  return Buffer.from(text, 'base64');
}

function keyValues(text: string, separator: string): Map<string, string> {
  return new Map(text.split(separator).map((pair) => pair.split('=', 2) as [string, string]));
}

export interface KittyImage {
  /** The control keys of the first chunk (a, f, c, q, m…). */
  control: Map<string, string>;
  chunks: number;
  data: Buffer;
}

/**
 * Every kitty image in `text`: a run of APC chunks (ESC _ G keys ; payload ESC \),
 * each but the last with m=1, the last with m=0, payloads of at most 4096 base64
 * characters, decoded and joined.
 */
export function parseKitty(text: string): KittyImage[] {
  const images: KittyImage[] = [];
  let current: { control: Map<string, string>; payload: string; chunks: number } | undefined;
  for (const [, keys, payload] of text.matchAll(/\x1b_G([^;\x1b]*);([^\x1b]*)\x1b\\/g)) {
    const control = keyValues(keys!, ',');
    if (payload!.length > 4096) throw new Error(`a kitty chunk carries ${payload!.length} characters, more than 4096`);
    if (!current) current = { control, payload: '', chunks: 0 };
    else if ([...control.keys()].some((key) => key !== 'm')) throw new Error(`a continuation chunk has keys besides m: ${keys}`);
    current.payload += payload;
    current.chunks++;
    const more = control.get('m');
    if (more === '0') {
      images.push({ control: current.control, chunks: current.chunks, data: decodeBase64(current.payload, 'the kitty payload') });
      current = undefined;
    } else if (more !== '1') throw new Error(`a kitty chunk has m=${more}`);
  }
  if (current) throw new Error('a kitty image never ended with m=0');
  return images;
}

export interface ItermImage {
  args: Map<string, string>;
  data: Buffer;
}

/** Every iTerm2 inline image (ESC ] 1337 ; File= args : base64 BEL): its size= must be the decoded length. */
export function parseIterm(text: string): ItermImage[] {
  return [...text.matchAll(/\x1b\]1337;File=([^:\x07\x1b]*):([^\x07\x1b]*)\x07/g)].map(([, args, payload]) => {
    const map = keyValues(args!, ';');
    const data = decodeBase64(payload!, 'the iTerm2 payload');
    if (Number(map.get('size')) !== data.length) throw new Error(`size=${map.get('size')} but the payload is ${data.length} bytes`);
    return { args: map, data };
  });
}

export interface SixelImage {
  width: number;
  height: number;
  colors: number;
  /** Bands of six pixel rows. */
  bands: number;
}

/**
 * Every sixel image (ESC P params q "1;1;W;H … ESC \): its raster attributes,
 * its colour registers, and its bands, each pass of which must paint no more
 * than W columns and use only colours it defined.
 */
export function parseSixel(text: string): SixelImage[] {
  return [...text.matchAll(/\x1bP([0-9;]*)q([^\x1b]*)\x1b\\/g)].map(([, , body]) => {
    const raster = /^"(\d+);(\d+);(\d+);(\d+)/.exec(body!);
    if (!raster) throw new Error('the sixel image has no raster attributes');
    const [width, height] = [Number(raster[3]), Number(raster[4])];
    const rest = body!.slice(raster[0].length);
    const defined = new Set<string>();
    for (const [, register] of rest.matchAll(/#(\d+);2;(\d+);(\d+);(\d+)/g)) defined.add(register!);
    const data = rest.replace(/#(\d+);2;\d+;\d+;\d+/g, '');
    const bands = data.split('-');
    if (bands.pop() !== '') throw new Error('the sixel data does not end with a graphics new line');
    for (const band of bands) {
      for (const pass of band.split('$')) {
        const match = /^#(\d+)([?-~!0-9]*)$/.exec(pass);
        if (!match) throw new Error(`malformed sixel pass: ${pass.slice(0, 40)}`);
        if (!defined.has(match[1]!)) throw new Error(`colour #${match[1]} is used but not defined`);
        let columns = 0;
        for (const [, count] of match[2]!.matchAll(/(?:!(\d+))?([?-~])/g)) columns += count ? Number(count) : 1;
        if (columns > width) throw new Error(`a sixel pass paints ${columns} columns of ${width}`);
      }
    }
    return { width, height, colors: defined.size, bands: bands.length };
  });
}

/** Text without control sequences (CSI: colours, queries) and carriage returns. */
export function withoutSgr(text: string): string {
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '').replace(/\r/g, '');
}

/** The half-block lines of `text` (lines of ▀ only, once the colours are taken out). */
export function blockLines(text: string): string[] {
  return withoutSgr(text)
    .split('\n')
    .filter((line) => line.includes('\u2580'));
}
