// The frame a render produces: its size, its pixels, and what each pixel shows
// (COVER), which the tests of the sandbox's geography read.
import type { Frame } from './overlays.js';

export interface FrameSize {
  width: number;
  height: number;
}

/** Land cover of a pixel, as the renderer decided it (RenderedFrame.cover). */
export const COVER = {
  sky: 0,
  water: 1,
  ice: 2,
  sand: 3,
  builtUp: 4,
  forest: 5,
  openLand: 6,
  tundra: 7,
  rock: 8,
} as const;

export interface RenderedFrame extends Frame {
  /** One COVER value per pixel, before overlays. */
  cover: Uint8Array;
  /** improveOutput: encode at higher quality, full-resolution colour, sharpened. */
  improved: boolean;
  /** The place includeContext names, when the data knows one near the point. */
  place?: string;
}
