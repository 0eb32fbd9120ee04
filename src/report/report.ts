// Writes the HTML report of a batch or an export: thumbnails beside it
// (thumbnails.ts), then the page (html.ts), written to a temp file and renamed
// into place, so a browser or a CI artifact upload never sees half a page.
import { dirname } from 'node:path';
import { InterruptedError } from '../lifecycle/errors.js';
import { writeFileAtomic, writeFileAtomicStream } from '../files/atomic-file.js';
import { VERSION } from '../build-outputs/version.js';
import { relativeFile } from './geojson.js';
import { addToSummary, emptySummary, reportHtml, writeReportHtml } from './html.js';
import type { ReportImage } from './images.js';
import { makeThumbnails, thumbnailDirFor, type ThumbnailResult } from './thumbnails.js';

export interface ReportOptions {
  title: string;
  /** What the report is of, under the title. */
  subtitle: string;
  noun?: 'image' | 'row';
  now?: Date;
  /** Once aborted, no further thumbnail is made and the report is not written (InterruptedError). */
  signal?: AbortSignal;
}

export interface WrittenReport {
  path: string;
  thumbnails: Omit<ThumbnailResult, 'of'> & { dir: string };
}

/** The report of `images` at `outputPath`, its thumbnails in the directory beside it (report.thumbnails/). */
export async function writeReport(images: readonly ReportImage[], outputPath: string, options: ReportOptions): Promise<WrittenReport> {
  const base = dirname(outputPath);
  const dir = thumbnailDirFor(outputPath);
  const files = new Set(images.flatMap((image) => (image.status === 'done' && image.file ? [image.file] : [])));
  const { of, ...thumbnails } = await makeThumbnails(files, base, dir, options.signal);
  if (options.signal?.aborted) throw new InterruptedError();
  const html = reportHtml({ ...pageHead(options), images: images.map((image) => linked(image, base, of)) });
  await writeFileAtomic(outputPath, html, 0o644);
  return { path: outputPath, thumbnails: { ...thumbnails, dir } };
}

/**
 * writeReport for images read one at a time (an export's index on disk),
 * walked once for what the header says, once for the thumbnails, then again
 * as the page is written: the page is never held whole, nor the images'
 * records, nor the list of their files. Each file is taken to be one image's.
 */
export async function writeReportStream(images: () => AsyncIterable<ReportImage>, outputPath: string, options: ReportOptions): Promise<WrittenReport> {
  const base = dirname(outputPath);
  const dir = thumbnailDirFor(outputPath);
  const summary = emptySummary();
  for await (const image of images()) addToSummary(summary, image);
  const files = async function* () {
    for await (const image of images()) if (image.status === 'done' && image.file) yield image.file;
  };
  const { of, ...thumbnails } = await makeThumbnails(files(), base, dir, options.signal);
  if (options.signal?.aborted) throw new InterruptedError();
  const withLinks = async function* () {
    for await (const image of images()) yield linked(image, base, of);
  };
  await writeFileAtomicStream(outputPath, (append) => writeReportHtml(pageHead(options), summary, withLinks, append), 0o644);
  return { path: outputPath, thumbnails: { ...thumbnails, dir } };
}

function pageHead(options: ReportOptions) {
  return { title: options.title, subtitle: options.subtitle, generatedAt: options.now ?? new Date(), generator: `aerial ${VERSION}`, noun: options.noun };
}

/** An image with the relative links of its file and its thumbnail. */
function linked(image: ReportImage, base: string, thumbnailOf: (file: string) => string | undefined): ReportImage & { href?: string; thumbnail?: string } {
  const thumbnail = image.status === 'done' && image.file ? thumbnailOf(image.file) : undefined;
  const href = image.status === 'done' && image.file ? relativeFile(base, image.file) : undefined;
  return { ...image, href, thumbnail: thumbnail ? relativeFile(base, thumbnail) : undefined };
}
