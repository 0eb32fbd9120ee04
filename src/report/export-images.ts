// An export's index records (the list endpoint's records with their file) as
// report images. The records are the service's: only what has the expected
// type is taken, and the scene parameters are those the records carry (the
// spec shows only the resolution; a service may send more).
import { join } from 'node:path';
import { sceneOf, tagsOf, type ReportImage } from './images.js';

export function exportReportImages(dir: string, records: ReadonlyArray<Record<string, unknown>>): ReportImage[] {
  return records.map((record) => exportReportImage(dir, record));
}

/** One index record as a report image. */
export function exportReportImage(dir: string, record: Record<string, unknown>): ReportImage {
  const coordinates = (record.coordinates ?? {}) as { latitude?: unknown; longitude?: unknown };
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    id: String(record.id),
    lat: number(coordinates.latitude),
    lng: number(coordinates.longitude),
    file: typeof record.file === 'string' ? join(dir, record.file) : undefined,
    scene: sceneOf(record),
    tags: tagsOf(record.tags),
    status: 'done',
    createdAt: typeof record.createdAt === 'string' ? record.createdAt : undefined,
  };
}
