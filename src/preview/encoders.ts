// The escape sequences that put an image on a terminal, one per protocol, from
// pixels or an encoded image already sized (picture.ts does the pixels). Pure
// functions of their input: the tests parse what they make.
import type { ColorDepth } from './terminal.js';

const ESC = '\x1b';
/** String terminator: ends an APC (kitty), DCS (sixel) or tmux passthrough. */
const ST = `${ESC}\\`;
/** Largest base64 payload of one kitty chunk, as the protocol sets it. */
export const KITTY_CHUNK = 4096;

/**
 * The kitty graphics protocol: a PNG transmitted and shown at once (a=T,
 * f=100), `columns` cells wide; the terminal works out the rows from the
 * image's aspect ratio. q=2 asks for no reply, which would otherwise arrive on
 * stdin as typed text. The payload is split into chunks, every chunk but the
 * last marked m=1.
 */
export function kittySequence(png: Buffer, columns: number): string {
  const payload = png.toString('base64');
  const parts: string[] = [];
  for (let start = 0; start < payload.length || start === 0; start += KITTY_CHUNK) {
    const chunk = payload.slice(start, start + KITTY_CHUNK);
    const more = start + KITTY_CHUNK < payload.length ? 1 : 0;
    const control = start === 0 ? `a=T,f=100,q=2,c=${columns},m=${more}` : `m=${more}`;
    parts.push(`${ESC}_G${control};${chunk}${ST}`);
  }
  return parts.join('');
}

/**
 * iTerm2's inline images (OSC 1337 File=), which WezTerm and mintty speak too:
 * the file itself, `columns` cells wide, height following the aspect ratio.
 */
export function itermSequence(image: Buffer, columns: number, name: string): string {
  const args = [`name=${Buffer.from(name).toString('base64')}`, `size=${image.length}`, `width=${columns}`, 'height=auto', 'preserveAspectRatio=1', 'inline=1'];
  return `${ESC}]1337;File=${args.join(';')}:${image.toString('base64')}\x07`;
}

/** The upper half block: its foreground paints a cell's top pixel, its background the bottom one. */
const UPPER_HALF = '\u2580';

/** Index in the xterm 256-colour palette nearest to an RGB colour: the 6×6×6 cube or the grey ramp. */
export function xterm256(r: number, g: number, b: number): number {
  const level = (v: number) => (v < 48 ? 0 : v < 115 ? 1 : Math.floor((v - 35) / 40));
  const cubeValue = (i: number) => (i === 0 ? 0 : 55 + 40 * i);
  const [cr, cg, cb] = [level(r), level(g), level(b)];
  const cube = 16 + 36 * cr + 6 * cg + cb;
  const cubeError = (cubeValue(cr) - r) ** 2 + (cubeValue(cg) - g) ** 2 + (cubeValue(cb) - b) ** 2;
  const mean = (r + g + b) / 3;
  const grey = mean > 238 ? 23 : Math.max(0, Math.round((mean - 8) / 10));
  const greyValue = 8 + 10 * grey;
  const greyError = (greyValue - r) ** 2 + (greyValue - g) ** 2 + (greyValue - b) ** 2;
  return greyError < cubeError ? 232 + grey : cube;
}

/**
 * Half-block characters: each cell shows two pixels, one above the other, so
 * `rgb` (3 bytes a pixel) of `width` × `height` (even) becomes `height / 2`
 * lines of exactly `width` cells. A colour is written only where it changes,
 * and every line ends with a reset, so nothing bleeds into what follows.
 */
export function halfBlocks(rgb: Buffer, width: number, height: number, colors: ColorDepth): string {
  const lines: string[] = [];
  const color = (offset: number, ground: 38 | 48): string =>
    colors === 'truecolor' ? `${ground};2;${rgb[offset]};${rgb[offset + 1]};${rgb[offset + 2]}` : `${ground};5;${xterm256(rgb[offset]!, rgb[offset + 1]!, rgb[offset + 2]!)}`;
  for (let y = 0; y + 1 < height; y += 2) {
    let line = '';
    let lastFg = '';
    let lastBg = '';
    for (let x = 0; x < width; x++) {
      const fg = color((y * width + x) * 3, 38);
      const bg = color(((y + 1) * width + x) * 3, 48);
      const codes = [fg !== lastFg ? fg : '', bg !== lastBg ? bg : ''].filter(Boolean);
      if (codes.length) line += `${ESC}[${codes.join(';')}m`;
      line += UPPER_HALF;
      lastFg = fg;
      lastBg = bg;
    }
    lines.push(`${line}${ESC}[0m\n`);
  }
  return lines.join('');
}

/**
 * Reduces `rgb` to at most 256 colours by median cut over a 15-bit histogram:
 * each pixel's colour index, and the palette. Fast enough for a UHD preview in
 * well under half a second (one pass to count, one to map).
 */
export function quantize(rgb: Buffer, pixels: number): { indices: Uint8Array; palette: Array<[number, number, number]> } {
  const histogram = new Uint32Array(1 << 15);
  // The colours' sums per bin, so a palette entry is the mean of the pixels it stands for.
  const sums = [new Float64Array(1 << 15), new Float64Array(1 << 15), new Float64Array(1 << 15)] as const;
  const bin = (i: number) => ((rgb[i]! >> 3) << 10) | ((rgb[i + 1]! >> 3) << 5) | (rgb[i + 2]! >> 3);
  for (let p = 0, i = 0; p < pixels; p++, i += 3) {
    const b = bin(i);
    histogram[b]!++;
    sums[0][b]! += rgb[i]!;
    sums[1][b]! += rgb[i + 1]!;
    sums[2][b]! += rgb[i + 2]!;
  }
  const used: number[] = [];
  for (let b = 0; b < histogram.length; b++) if (histogram[b]) used.push(b);
  const channel = (b: number, c: number) => (b >> (10 - 5 * c)) & 31;
  // Boxes of bins, split at the median of their widest channel until there are 256 (or nothing left to split).
  interface Box {
    bins: number[];
    range: number;
    channel: number;
  }
  const measure = (bins: number[]): Box => {
    let range = 0;
    let widest = 0;
    for (let c = 0; c < 3; c++) {
      let min = 31;
      let max = 0;
      for (const b of bins) {
        const v = channel(b, c);
        if (v < min) min = v;
        if (v > max) max = v;
      }
      if (max - min > range) [range, widest] = [max - min, c];
    }
    return { bins, range, channel: widest };
  };
  const boxes: Box[] = [measure(used)];
  while (boxes.length < 256) {
    let widest = -1;
    for (const [index, box] of boxes.entries()) if (box.range > 0 && (widest < 0 || box.range > boxes[widest]!.range)) widest = index;
    if (widest < 0) break;
    const { bins, channel: c } = boxes[widest]!;
    bins.sort((a, b) => channel(a, c) - channel(b, c));
    const total = bins.reduce((sum, b) => sum + histogram[b]!, 0);
    let count = 0;
    let cut = 1;
    for (; cut < bins.length - 1; cut++) {
      count += histogram[bins[cut - 1]!]!;
      if (count * 2 >= total) break;
    }
    boxes.splice(widest, 1, measure(bins.slice(0, cut)), measure(bins.slice(cut)));
  }
  const lookup = new Uint8Array(1 << 15);
  const palette: Array<[number, number, number]> = boxes.map(({ bins }, index) => {
    let weight = 0;
    const sum = [0, 0, 0];
    for (const b of bins) {
      lookup[b] = index;
      const n = histogram[b]!;
      weight += n;
      for (let c = 0; c < 3; c++) sum[c]! += sums[c]![b]!;
    }
    return sum.map((s) => Math.min(255, Math.round(s / Math.max(1, weight)))) as [number, number, number];
  });
  const indices = new Uint8Array(pixels);
  for (let p = 0, i = 0; p < pixels; p++, i += 3) indices[p] = lookup[bin(i)]!;
  return { indices, palette };
}

/** One run of a sixel character: `!n` repeats it when that is shorter. */
function sixelRun(code: number, count: number): string {
  const char = String.fromCharCode(63 + code);
  return count > 3 ? `!${count}${char}` : char.repeat(count);
}

/**
 * Sixel (DEC's bitmap graphics, in foot, mlterm, xterm with sixel support):
 * a DCS with raster attributes giving the size in pixels, a palette of up to
 * 256 colours (percentages, as sixel writes them), then the image in bands of
 * six rows, one pass per colour present in the band.
 */
export function sixelSequence(rgb: Buffer, width: number, height: number): string {
  const { indices, palette } = quantize(rgb, width * height);
  // P2=1: pixels not painted keep the background; the raster attributes say 1:1 pixels of width × height.
  const out: string[] = [`${ESC}P0;1;0q"1;1;${width};${height}`];
  palette.forEach(([r, g, b], index) => out.push(`#${index};2;${Math.round((r * 100) / 255)};${Math.round((g * 100) / 255)};${Math.round((b * 100) / 255)}`));
  const bits = new Uint8Array(palette.length * width);
  const present = new Uint8Array(palette.length);
  for (let top = 0; top < height; top += 6) {
    bits.fill(0);
    present.fill(0);
    const rows = Math.min(6, height - top);
    for (let row = 0; row < rows; row++) {
      const base = (top + row) * width;
      for (let x = 0; x < width; x++) {
        const index = indices[base + x]!;
        bits[index * width + x]! |= 1 << row;
        present[index] = 1;
      }
    }
    const passes: string[] = [];
    for (let index = 0; index < palette.length; index++) {
      if (!present[index]) continue;
      let line = `#${index}`;
      const start = index * width;
      let run = bits[start]!;
      let count = 1;
      for (let x = 1; x < width; x++) {
        const code = bits[start + x]!;
        if (code === run) count++;
        else {
          line += sixelRun(run, count);
          run = code;
          count = 1;
        }
      }
      // Trailing blanks are left out: the next pass starts over from the left ($) anyway.
      if (run !== 0) line += sixelRun(run, count);
      passes.push(line);
    }
    out.push(`${passes.join('$')}-`);
  }
  out.push(ST);
  return out.join('');
}

/** tmux's passthrough: the sequence wrapped in DCS tmux; …, every ESC in it doubled. */
export function tmuxPassthrough(sequence: string): string {
  return `${ESC}Ptmux;${sequence.replaceAll(ESC, `${ESC}${ESC}`)}${ST}`;
}
