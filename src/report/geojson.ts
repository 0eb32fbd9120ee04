// GeoJSON (RFC 7946) of a batch or an export: a FeatureCollection with one
// Point per image, its position [longitude, latitude] in that order, as the RFC
// sets it and QGIS, geojson.io and kepler.gl read it. Every feature carries the
// same properties (null where unknown), so GIS tools see one table.
import { dirname, relative, sep } from 'node:path';
import { writeFileAtomic, writeFileAtomicStream } from '../files/atomic-file.js';
import { located, REPORT_SCENE_FIELDS, sceneKey, type ReportImage } from './images.js';

export interface PointFeature {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [number, number] } | null;
  properties: Record<string, unknown>;
}

export interface FeatureCollection {
  type: 'FeatureCollection';
  features: PointFeature[];
}

/** A path as a relative URL-style path from `from` (a directory): forward slashes everywhere. */
export function relativeFile(from: string, file: string): string {
  return relative(from, file).split(sep).join('/');
}

/** The collection for `images`, their files named relative to `outputPath`'s directory. */
export function geoJson(images: readonly ReportImage[], outputPath: string): FeatureCollection {
  const base = dirname(outputPath);
  return { type: 'FeatureCollection', features: images.map((image) => geoJsonFeature(image, base)) };
}

/** The feature of one image, its file named relative to `base` (the GeoJSON's directory). */
export function geoJsonFeature(image: ReportImage, base: string): PointFeature {
  const position = located(image);
  const scene = Object.fromEntries(REPORT_SCENE_FIELDS.map((field) => [sceneKey(field), image.scene[sceneKey(field)] ?? null]));
  return {
    type: 'Feature',
    // An image without a usable position (an invalid row) is a feature without a geometry, as the RFC allows.
    geometry: position ? { type: 'Point', coordinates: [position.lng, position.lat] } : null,
    properties: {
      id: image.id ?? null,
      row: image.row ?? null,
      file: image.file === undefined || image.status !== 'done' ? null : relativeFile(base, image.file),
      createdAt: image.createdAt ?? null,
      status: image.status,
      error: image.error ?? null,
      tags: image.tags,
      ...scene,
    },
  };
}

/** Writes the collection atomically (temp file, rename): a reader sees the old file or the new one. */
export async function writeGeoJson(images: readonly ReportImage[], outputPath: string): Promise<void> {
  await writeFileAtomic(outputPath, `${JSON.stringify(geoJson(images, outputPath))}\n`, 0o644);
}

/**
 * writeGeoJson for images read one at a time (an export's index on disk):
 * the same bytes, written feature by feature, so the collection of a large
 * history is never held whole.
 */
export async function writeGeoJsonStream(images: AsyncIterable<ReportImage>, outputPath: string): Promise<void> {
  const base = dirname(outputPath);
  await writeFileAtomicStream(
    outputPath,
    async (append) => {
      await append('{"type":"FeatureCollection","features":[');
      let first = true;
      for await (const image of images) {
        await append(`${first ? '' : ','}${JSON.stringify(geoJsonFeature(image, base))}`);
        first = false;
      }
      await append(']}\n');
    },
    0o644,
  );
}
