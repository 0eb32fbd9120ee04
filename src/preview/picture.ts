// An image made ready for the terminal: decoded, turned upright, sized to the
// columns asked (and to the rows there are), and encoded for the protocol.
// sharp (libvips) does the pixels: it decodes a UHD JPEG at a fraction of its
// size (shrink-on-load), so a preview takes tens of milliseconds.
import sharp, { type Sharp } from 'sharp';
import { UsageError } from '../lifecycle/errors.js';
import { printable } from '../text/printable.js';
import { halfBlocks, itermSequence, kittySequence, sixelSequence, tmuxPassthrough } from './encoders.js';
import type { CellPixels } from './cell-size.js';
import type { ColorDepth, Protocol } from './terminal.js';

/**
 * The pixel size a terminal cell is taken to have when the terminal does not
 * say (cell-size.ts asks it, for sixel). kitty and iTerm2 scale what they get
 * to the columns asked, so only sixel, drawn pixel for pixel, depends on it.
 * Most terminals at a usual font size are near 10 × 20.
 */
export const CELL_PIXELS: CellPixels = { width: 10, height: 20 };

export interface PreviewRequest {
  protocol: Protocol;
  colors: ColorDepth;
  /** Width in terminal columns. */
  columns: number;
  /** When set, the image is made narrower if it would need more rows than this. */
  maxRows?: number;
  passthrough?: 'tmux';
  /** The file name or id, for iTerm2 (which shows it when the image is saved) and for errors. */
  name: string;
  /** A cell's size in pixels, as the terminal said; CELL_PIXELS otherwise. */
  cell?: CellPixels;
}

export interface Preview {
  /** What to write to the terminal, ending with a newline. */
  text: string;
  columns: number;
  /** The image's size in the pixels it was encoded at. */
  width: number;
  height: number;
}

/** Columns for an image of `width` × `height`: as many as asked, or fewer to fit `maxRows` of cells of `cell`'s proportions. */
export function fitColumns(width: number, height: number, columns: number, maxRows?: number, cell: CellPixels = CELL_PIXELS): number {
  const rowsPerColumn = (height / width) * (cell.width / cell.height);
  if (maxRows === undefined || columns * rowsPerColumn <= maxRows) return columns;
  return Math.max(1, Math.floor(maxRows / rowsPerColumn));
}

export async function renderPreview(source: Buffer | string, request: PreviewRequest): Promise<Preview> {
  const name = printable(request.name, 120);
  let image: Sharp;
  let width: number;
  let height: number;
  try {
    image = sharp(source, { failOn: 'error' }).autoOrient();
    const meta = await image.metadata();
    // Oriented as it is shown: EXIF orientations 5 to 8 turn the image a quarter.
    [width, height] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
  } catch (error) {
    throw new UsageError(`${name} is not an image aerial can read (${printable((error as Error).message, 120)})`);
  }
  const cell = request.cell ?? CELL_PIXELS;
  // Half-blocks are two pixels to a cell of the usual proportions; the other protocols fill cells as they are.
  const columns = fitColumns(width, height, request.columns, request.maxRows, request.protocol === 'blocks' ? CELL_PIXELS : cell);
  const sized = (w: number, h: number) => image.resize(Math.max(1, w), Math.max(1, h), { fit: 'fill' }).flatten({ background: '#000000' });
  let text: string;
  let size: { width: number; height: number };
  try {
    switch (request.protocol) {
      case 'blocks': {
        const rows = Math.max(1, Math.round((columns * height) / width / 2));
        size = { width: columns, height: rows * 2 };
        const rgb = await sized(size.width, size.height).removeAlpha().raw().toBuffer();
        return { text: halfBlocks(rgb, size.width, size.height, request.colors), columns, ...size };
      }
      case 'sixel': {
        const pixels = columns * cell.width;
        size = { width: pixels, height: Math.max(1, Math.round((pixels * height) / width)) };
        const rgb = await sized(size.width, size.height).removeAlpha().raw().toBuffer();
        text = sixelSequence(rgb, size.width, size.height);
        break;
      }
      case 'kitty':
      case 'iterm': {
        // No more pixels than the columns can show: the terminal scales the image to them.
        const pixels = Math.min(width, columns * cell.width);
        size = { width: pixels, height: Math.max(1, Math.round((pixels * height) / width)) };
        const resized = sized(size.width, size.height);
        text =
          request.protocol === 'kitty'
            ? kittySequence(await resized.png({ compressionLevel: 2 }).toBuffer(), columns)
            : itermSequence(await resized.jpeg({ quality: 85 }).toBuffer(), columns, request.name);
        break;
      }
    }
  } catch (error) {
    throw new UsageError(`${name} could not be decoded (${printable((error as Error).message, 120)})`);
  }
  return { text: `${request.passthrough === 'tmux' ? tmuxPassthrough(text) : text}\n`, columns, ...size };
}
