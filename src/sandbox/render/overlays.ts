// What the sandbox draws over the scene, in screen space: the compass, the
// SANDBOX mark, the caption band (the request's prompt and tags, which an
// honest sandbox shows rather than pretends to follow), the label of the
// place (includeContext) and the muted surroundings (includeSurroundings:
// false). Text is set in the Seven plus pixel font from the world data file.
import { BEARING_DEGREES } from '../../api/enums.js';
import type { Bearing } from '../../api/enums.js';
import { FONT_FIRST, FONT_GLYPH_BYTES, FONT_LAST } from '../world/font.js';

export type Rgb = readonly [number, number, number];

export interface Frame {
  width: number;
  height: number;
  /** RGB, three bytes a pixel. Clamped so writes need no range checks. */
  rgb: Uint8ClampedArray;
}

/** Math.hypot for two numbers, without its variadic overhead. */
export function distance(dx: number, dy: number): number {
  return Math.sqrt(dx * dx + dy * dy);
}

export function blendPixel(rgb: Uint8ClampedArray, i: number, r: number, g: number, b: number, alpha: number): void {
  rgb[i] = rgb[i]! + (r - rgb[i]!) * alpha;
  rgb[i + 1] = rgb[i + 1]! + (g - rgb[i + 1]!) * alpha;
  rgb[i + 2] = rgb[i + 2]! + (b - rgb[i + 2]!) * alpha;
}

function clamp01(value: number): number {
  return value < 0 ? 0 : value > 1 ? 1 : value;
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

/** Printable ASCII for the pixel font: accents dropped (São Paulo → Sao Paulo), anything else shown as '?'. */
export function asciiText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/[^\x20-\x7e]/g, '?');
}

export class PixelFont {
  constructor(private readonly glyphs: Uint8Array) {}

  /** Rows of a line of text, descenders included. */
  static readonly LINE_ROWS = 9;

  private base(char: string): number {
    const code = char.charCodeAt(0);
    return (code < FONT_FIRST || code > FONT_LAST ? '?'.charCodeAt(0) - FONT_FIRST : code - FONT_FIRST) * FONT_GLYPH_BYTES;
  }

  /** Width of `text` in pixels at `scale`: glyphs and one column between them. */
  width(text: string, scale: number): number {
    let columns = 0;
    for (const char of text) columns += this.glyphs[this.base(char)]! + 1;
    return Math.max(0, columns - 1) * scale;
  }

  /** Draws `text` with its top-left corner at (left, top), each font pixel a scale × scale square. */
  draw(frame: Frame, text: string, left: number, top: number, scale: number, colour: Rgb, alpha = 1): void {
    let x = left;
    for (const char of text) {
      const base = this.base(char);
      const width = this.glyphs[base]!;
      const offset = this.glyphs[base + 1]!;
      const rows = this.glyphs[base + 2]!;
      for (let row = 0; row < rows; row++) {
        const bits = this.glyphs[base + 3 + row]!;
        for (let column = 0; column < width; column++) {
          if (bits & (1 << column)) fillRect(frame, x + column * scale, top + (offset + row) * scale, scale, scale, colour, alpha);
        }
      }
      x += (width + 1) * scale;
    }
  }

  /** `text` with a one-step dark drop shadow, for contrast on any ground. */
  drawShadowed(frame: Frame, text: string, left: number, top: number, scale: number, colour: Rgb): void {
    const offset = Math.max(1, Math.round(scale / 2));
    this.draw(frame, text, left + offset, top + offset, scale, [0, 0, 0], 0.6);
    this.draw(frame, text, left, top, scale, colour);
  }

  /** `text` cut to fit `maxWidth` pixels, ending in "..." when cut. */
  fit(text: string, scale: number, maxWidth: number): string {
    if (this.width(text, scale) <= maxWidth) return text;
    let cut = text;
    while (cut.length > 0 && this.width(`${cut}...`, scale) > maxWidth) cut = cut.slice(0, -1);
    return `${cut.trimEnd()}...`;
  }

  /** Words laid into at most `maxLines` lines of `maxWidth` pixels; the last line is cut when the text runs on. */
  wrap(text: string, scale: number, maxWidth: number, maxLines: number): string[] {
    const lines: string[] = [];
    let current = '';
    const words = text.split(' ');
    for (let i = 0; i < words.length; i++) {
      const candidate = current ? `${current} ${words[i]}` : words[i]!;
      if (this.width(candidate, scale) <= maxWidth || !current) {
        current = candidate;
        continue;
      }
      if (lines.length === maxLines - 1) {
        lines.push(this.fit(`${current} ${words.slice(i).join(' ')}`, scale, maxWidth));
        return lines;
      }
      lines.push(current);
      current = words[i]!;
    }
    if (current) lines.push(this.fit(current, scale, maxWidth));
    return lines;
  }
}

/** Text scale for a frame: 1 font pixel per 240 pixels of its short side, at least 1. */
export function textScale(frame: Frame): number {
  return Math.max(1, Math.round(Math.min(frame.width, frame.height) / 240));
}

// ---------------------------------------------------------------------------
// Compass, SANDBOX mark, caption band, place label
// ---------------------------------------------------------------------------

const BEARING_LABELS: Record<Bearing, string> = {
  North: 'N',
  NorthEast: 'NE',
  East: 'E',
  SouthEast: 'SE',
  South: 'S',
  SouthWest: 'SW',
  West: 'W',
  NorthWest: 'NW',
};

const PLATE: Rgb = [20, 24, 30];
const PAPER: Rgb = [245, 245, 240];

/**
 * A dial in the top-right corner with N at the top; the red needle points the
 * way the camera faces and the label below spells it out.
 */
export function paintCompass(frame: Frame, font: PixelFont, bearing: Bearing): void {
  const shortSide = Math.min(frame.width, frame.height);
  const radius = Math.round(shortSide * 0.065);
  const margin = Math.round(shortSide * 0.03);
  const cx = frame.width - margin - radius;
  const cy = margin + radius;
  const scale = Math.max(1, Math.round(shortSide / 480));
  fillDisc(frame, cx, cy, 0, radius, PLATE, 0.5);
  fillDisc(frame, cx, cy, radius - Math.max(2, radius * 0.07), radius, PAPER, 0.9);
  font.draw(frame, 'N', cx - font.width('N', scale) / 2, cy - radius + Math.max(3, radius * 0.12), scale, PAPER);
  // Small ticks at E, S and W.
  for (const angle of [Math.PI / 2, Math.PI, (3 * Math.PI) / 2]) {
    const tx = cx + Math.sin(angle) * radius * 0.8;
    const ty = cy - Math.cos(angle) * radius * 0.8;
    fillDisc(frame, tx, ty, 0, Math.max(1.5, radius * 0.05), PAPER, 0.9);
  }
  const angle = (BEARING_DEGREES[bearing] * Math.PI) / 180;
  const dirX = Math.sin(angle);
  const dirY = -Math.cos(angle);
  const half = radius * 0.17;
  const leftX = cx - dirY * half;
  const leftY = cy + dirX * half;
  const rightX = cx + dirY * half;
  const rightY = cy - dirX * half;
  fillTriangle(frame, cx + dirX * radius * 0.62, cy + dirY * radius * 0.62, leftX, leftY, rightX, rightY, [225, 45, 40]);
  fillTriangle(frame, cx - dirX * radius * 0.45, cy - dirY * radius * 0.45, rightX, rightY, leftX, leftY, [240, 240, 235]);
  fillDisc(frame, cx, cy, 0, Math.max(1.5, radius * 0.06), [30, 30, 30], 1);
  const label = BEARING_LABELS[bearing];
  const labelScale = scale + 1;
  const labelWidth = font.width(label, labelScale);
  const labelY = cy + radius + Math.max(4, radius * 0.15);
  const pad = labelScale * 2;
  fillRect(frame, cx - labelWidth / 2 - pad, labelY - pad, labelWidth + 2 * pad, 7 * labelScale + 2 * pad, PLATE, 0.5);
  font.draw(frame, label, cx - labelWidth / 2, labelY, labelScale, PAPER);
}

/**
 * "SANDBOX" in the bottom-left corner (above the caption band, if any) on a
 * translucent plate, so nobody mistakes it for a real image.
 */
export function paintSandboxMark(frame: Frame, font: PixelFont, bottom = frame.height): void {
  const shortSide = Math.min(frame.width, frame.height);
  const scale = Math.max(2, Math.round(shortSide / 240));
  const text = 'SANDBOX';
  const margin = Math.round(shortSide * 0.03);
  const pad = scale * 3;
  const plateWidth = font.width(text, scale) + 2 * pad;
  const plateHeight = 7 * scale + 2 * pad;
  const x = margin;
  const y = bottom - margin - plateHeight;
  fillRect(frame, x, y, plateWidth, plateHeight, PLATE, 0.55);
  font.drawShadowed(frame, text, x + pad, y + pad, scale, [250, 250, 245]);
}

/**
 * A dark band across the bottom of the frame with the request's words, one
 * line each, cut to fit: what the caller asked for, shown rather than followed.
 * Returns the band's top row (the frame's height when there is nothing to show).
 */
export function paintCaptionBand(frame: Frame, font: PixelFont, lines: readonly string[]): number {
  if (lines.length === 0) return frame.height;
  const scale = textScale(frame);
  const pad = 4 * scale;
  const lineHeight = (PixelFont.LINE_ROWS + 2) * scale;
  const top = frame.height - (lines.length * lineHeight + 2 * pad);
  fillRect(frame, 0, top, frame.width, frame.height - top, [12, 14, 18], 0.78);
  fillRect(frame, 0, top, frame.width, Math.max(1, scale), [250, 200, 90], 0.9);
  lines.forEach((line, i) => font.draw(frame, line, pad, top + pad + i * lineHeight + scale, scale, PAPER));
  return top;
}

/**
 * includeContext: a pin on the recognised place, at (x, y) on screen, and
 * a plate with its name beside it.
 */
export function paintPlaceLabel(frame: Frame, font: PixelFont, x: number, y: number, text: string): void {
  const scale = textScale(frame);
  const shortSide = Math.min(frame.width, frame.height);
  const pin = Math.max(4, shortSide * 0.012);
  fillDisc(frame, x, y, 0, pin * 1.8, PLATE, 0.45);
  fillDisc(frame, x, y, pin * 0.55, pin, [250, 200, 90], 1);
  fillDisc(frame, x, y, 0, pin * 0.45, PAPER, 1);
  const pad = 3 * scale;
  const label = font.fit(text, scale, frame.width * 0.6);
  const width = font.width(label, scale) + 2 * pad;
  const height = (PixelFont.LINE_ROWS + 1) * scale + 2 * pad;
  // Up and to the right of the pin, kept inside the frame.
  const left = Math.min(frame.width - width - pin, Math.max(pin, x + pin * 2));
  const top = Math.min(frame.height - height - pin, Math.max(pin, y - pin * 2 - height));
  fillRect(frame, left, top, width, height, PLATE, 0.72);
  fillRect(frame, left, top + height - scale, width, scale, [250, 200, 90], 0.9);
  font.draw(frame, label, left + pad, top + pad, scale, PAPER);
  // A leader from the plate to the pin.
  const steps = Math.ceil(distance(left - x, top + height - y));
  for (let s = 0; s <= steps; s++) {
    const t = s / Math.max(1, steps);
    fillRect(frame, x + (left - x) * t - scale / 2, y + (top + height - y) * t - scale / 2, scale, scale, [250, 200, 90], 0.8);
  }
}

/**
 * includeSurroundings false: the subject, a disc of `radius` pixels around
 * (x, y), stays as drawn; beyond a soft edge the rest fades to a pale,
 * colourless wash of itself.
 */
export function muteSurroundings(frame: Frame, x: number, y: number, radius: number): void {
  const { width, height, rgb } = frame;
  const feather = radius * 0.25;
  for (let row = 0; row < height; row++) {
    const dy = row + 0.5 - y;
    let i = row * width * 3;
    for (let column = 0; column < width; column++, i += 3) {
      const mute = 0.85 * clamp01((distance(column + 0.5 - x, dy) - radius) / feather);
      if (mute === 0) continue;
      const grey = 0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!;
      const washed = 165 + grey * 0.3;
      rgb[i] = rgb[i]! + (washed - rgb[i]!) * mute;
      rgb[i + 1] = rgb[i + 1]! + (washed + 2 - rgb[i + 1]!) * mute;
      rgb[i + 2] = rgb[i + 2]! + (washed + 8 - rgb[i + 2]!) * mute;
    }
  }
  // A fine ring marks the subject's edge.
  fillDisc(frame, x, y, radius - 1, radius + Math.max(1, Math.min(width, height) / 720), [250, 250, 245], 0.55);
}

// ---------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------

export function fillRect(frame: Frame, left: number, top: number, w: number, h: number, colour: Rgb, alpha: number): void {
  const x0 = Math.max(0, Math.round(left));
  const y0 = Math.max(0, Math.round(top));
  const x1 = Math.min(frame.width, Math.round(left + w));
  const y1 = Math.min(frame.height, Math.round(top + h));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) blendPixel(frame.rgb, (y * frame.width + x) * 3, colour[0], colour[1], colour[2], alpha);
  }
}

/** A ring between radii `inner` and `outer` (inner 0 = full disc), edges anti-aliased over one pixel. */
export function fillDisc(frame: Frame, cx: number, cy: number, inner: number, outer: number, colour: Rgb, alpha: number): void {
  const x0 = Math.max(0, Math.floor(cx - outer - 1));
  const x1 = Math.min(frame.width - 1, Math.ceil(cx + outer + 1));
  const y0 = Math.max(0, Math.floor(cy - outer - 1));
  const y1 = Math.min(frame.height - 1, Math.ceil(cy + outer + 1));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const d = distance(x + 0.5 - cx, y + 0.5 - cy);
      const coverage = Math.min(clamp01(outer + 0.5 - d), inner > 0 ? clamp01(d - inner + 0.5) : 1);
      if (coverage > 0) blendPixel(frame.rgb, (y * frame.width + x) * 3, colour[0], colour[1], colour[2], alpha * coverage);
    }
  }
}

/** A filled triangle (clockwise on screen), anti-aliased by distance to its edges. */
function fillTriangle(frame: Frame, ax: number, ay: number, bx: number, by: number, cx: number, cy: number, colour: Rgb): void {
  const x0 = Math.max(0, Math.floor(Math.min(ax, bx, cx)) - 1);
  const x1 = Math.min(frame.width - 1, Math.ceil(Math.max(ax, bx, cx)) + 1);
  const y0 = Math.max(0, Math.floor(Math.min(ay, by, cy)) - 1);
  const y1 = Math.min(frame.height - 1, Math.ceil(Math.max(ay, by, cy)) + 1);
  // Orientation decides which side of each edge is inside.
  const sign = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) > 0 ? 1 : -1;
  const edge = (ex: number, ey: number, fx: number, fy: number, px: number, py: number) =>
    (sign * ((fx - ex) * (py - ey) - (fy - ey) * (px - ex))) / (distance(fx - ex, fy - ey) || 1);
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      const inside = Math.min(edge(ax, ay, bx, by, px, py), edge(bx, by, cx, cy, px, py), edge(cx, cy, ax, ay, px, py));
      const coverage = clamp01(inside + 0.5);
      if (coverage > 0) blendPixel(frame.rgb, (y * frame.width + x) * 3, colour[0], colour[1], colour[2], coverage);
    }
  }
}
