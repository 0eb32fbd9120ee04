// Cell grids over longitude and latitude, shared by the build (compile.ts)
// and the render threads (atlas.ts): which cell a point is in, and where a
// cell's centre lies.

/** The spatial index of coastlines, lake shores, rivers and places: cells of 1° × 1°. */
export const INDEX_CELL_DEGREES = 1;
export const INDEX_COLUMNS = 360 / INDEX_CELL_DEGREES;
export const INDEX_ROWS = 180 / INDEX_CELL_DEGREES;

/** The climate grid: cells of 0.5° × 0.5°, sampled bilinearly between centres. */
export const CLIMATE_CELL_DEGREES = 0.5;
export const CLIMATE_COLUMNS = 360 / CLIMATE_CELL_DEGREES;
export const CLIMATE_ROWS = 180 / CLIMATE_CELL_DEGREES;

/** Longitude folded into [-180, 180). */
export function wrapLongitude(lng: number): number {
  return ((((lng + 180) % 360) + 360) % 360) - 180;
}

/** The column of a longitude in [-180, 180]: 180 itself falls in the last column, not the first. */
export function indexColumn(lng: number): number {
  return Math.min(INDEX_COLUMNS - 1, Math.max(0, Math.floor((lng + 180) / INDEX_CELL_DEGREES)));
}

export function indexRow(lat: number): number {
  return Math.min(INDEX_ROWS - 1, Math.max(0, Math.floor((lat + 90) / INDEX_CELL_DEGREES)));
}

export function indexCell(lng: number, lat: number): number {
  return indexRow(lat) * INDEX_COLUMNS + indexColumn(lng);
}

/** Centre of index cell (column, row) as [lng, lat]. */
export function indexCellCentre(column: number, row: number): [number, number] {
  return [-180 + (column + 0.5) * INDEX_CELL_DEGREES, -90 + (row + 0.5) * INDEX_CELL_DEGREES];
}

/** Mean radius of the Earth (IUGG), metres. */
export const EARTH_RADIUS = 6371008.8;
/** Ground metres per degree of latitude, on that sphere. */
export const METRES_PER_DEGREE = (EARTH_RADIUS * Math.PI) / 180;
