// The report and the GeoJSON of a set of images, as batch (--report,
// --geojson) and export (index.html, index.geojson) write them: the paths
// checked before any work starts, then both files written at the end.
import { lstat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { UsageError } from '../lifecycle/errors.js';
import { displayPath } from '../files/file-names.js';
import { printable } from '../text/printable.js';
import { redactValue, type Redact } from '../text/secrets.js';
import type { ReportImage } from './images.js';
import type { WrittenReport } from './report.js';

/**
 * Checks where a report or GeoJSON file will go, before anything is sent: a
 * file name (not a directory, nor a device), in a directory that is made if
 * missing and where a file can be created. Returns the absolute path.
 */
export async function checkOutputFile(raw: string, flag: string): Promise<string> {
  if (raw.trim() === '' || raw.endsWith('/')) throw new UsageError(`${flag} must name a file${raw.trim() ? `; got '${raw}'` : ''}`);
  const path = resolve(raw);
  const info = await lstat(path).catch(() => undefined);
  if (info?.isDirectory()) throw new UsageError(`${flag} ${raw} is a directory; name a file`);
  if (info && !info.isFile() && !info.isSymbolicLink()) throw new UsageError(`${flag} ${raw} is not a regular file; name another`);
  const { checkOutputDirectory } = await import('../files/jpeg-file.js');
  await checkOutputDirectory(dirname(path), basename(path), `${flag} ${raw}`);
  return path;
}

export interface ImageOutputs {
  /** The HTML report's path; its thumbnails go beside it. */
  report?: string;
  geojson?: string;
  title: string;
  subtitle: string;
  noun?: 'image' | 'row';
  /** Stops making thumbnails (and writes no report) once aborted. */
  signal?: AbortSignal;
  /** What every text shown goes through first (secrets.ts): errors, ids and listing fields are a service's words. */
  redact: Redact;
}

export interface WrittenOutputs {
  report?: WrittenReport;
  geojson?: string;
}

/** The GeoJSON and the report of `images`, those of the two that `outputs` names. */
export async function writeImageOutputs(given: readonly ReportImage[], outputs: ImageOutputs): Promise<WrittenOutputs> {
  const written: WrittenOutputs = {};
  // Redacted as data, before HTML or JSON escapes the text in its own way.
  const images = given.map((image) => ({ ...redactValue(image, outputs.redact), file: image.file }));
  if (outputs.geojson) {
    const { writeGeoJson } = await import('./geojson.js');
    await writeGeoJson(images, outputs.geojson);
    written.geojson = outputs.geojson;
  }
  if (outputs.report) {
    const { writeReport } = await import('./report.js');
    written.report = await writeReport(images, outputs.report, { title: outputs.title, subtitle: outputs.subtitle, noun: outputs.noun, signal: outputs.signal });
  }
  return written;
}

/** What became of a report's thumbnails, for its closing line: only what needs saying. */
export function describeThumbnails(report: WrittenReport): string {
  const { failed } = report.thumbnails;
  if (failed.length === 0) return '';
  return ` (${failed.length} image${failed.length > 1 ? 's' : ''} without a thumbnail; first: ${displayPath(failed[0]!.file)}: ${printable(failed[0]!.reason, 200)})`;
}
