// How the world data file stores the caption font (compile.ts writes it,
// render/overlays.ts draws with it): printable ASCII, one fixed-size record a glyph.

/** The first and last character codes stored: printable ASCII. */
export const FONT_FIRST = 32;
export const FONT_LAST = 126;
/** Bytes per glyph: width, row offset, height, then up to 9 rows of pixels (bit 0 leftmost). */
export const FONT_GLYPH_BYTES = 12;
