// `aerial export <dir>`: back up the whole image history (the list URLs expire
// two hours after listing). The work lives in run.ts.
import type { Command } from 'commander';
import type { ExportOptions } from './run.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { PROGRESS_INTERVAL_HELP, RETRY_DELAY_HELP } from '../shared/help.js';

export const registration: CommandRegistration = { name: 'export', register };

function register(command: Command, action: ActionFactory): void {
  command
    .argument('<dir>', 'directory to write <id>.jpg files, index.jsonl, index.html and index.geojson into (created if missing)')
    .helpGroup('Images:')
    .description('download every image in your history, with an index, an HTML report and GeoJSON')
    .option('--concurrency <n>', 'downloads in flight at once, 1 to 256 (default 4)')
    .option('--max-retries <n>', 'retries per request on 429, 5xx, resets and timeouts (default 5)')
    .option('--retry-delay <duration>', RETRY_DELAY_HELP)
    .option('--page-size <n>', 'images per list request, 1 to 1000 (default: 1000, or what the service grants)')
    .option('--progress-interval <duration>', PROGRESS_INTERVAL_HELP)
    .option('--wait-for-lock', 'when another export into <dir> is under way, wait for it to end instead of refusing')
    .option('--no-metadata', 'save the bytes exactly as served: no GPS EXIF, no AI-generated note')
    .option('--no-report', 'write the images and index.jsonl only: no index.html, thumbnails or index.geojson')
    .option('--report-only', 'download nothing: make index.html, its thumbnails and index.geojson from the index.jsonl already in <dir>')
    .addHelpText(
      'after',
      `
Each image gets the GPS EXIF and AI-generated note that generate writes, from
the coordinates and scene of its listing record. Files already in <dir> (whole
JPEGs) are kept, so an interrupted export resumes where it stopped. index.jsonl holds one record per image file (the list record
plus its "file" name), rewritten at the end; images since deleted from the account
keep their earlier record. Expired download URLs (2 hours after listing, or a 403)
are refreshed by listing again.

index.html is a report to open in a browser, offline: a world map with a marker per
image, a card per image (thumbnail, location, scene, tags, time) and filters;
its thumbnails are kept in index.thumbnails/ and reused by the next export.
index.geojson holds one point per image (RFC 7946) for QGIS, geojson.io or kepler.gl.
Thumbnails are made while the downloads go on. --no-report writes the images and
index.jsonl only (a report an earlier export wrote is left as it was);
--report-only makes the report and the GeoJSON later, from index.jsonl alone,
sending nothing.

It ends with a check: the history is listed again and any image that listing shows
and <dir> lacks (added meanwhile, or passed over by pages that shifted as images
were deleted) is fetched; the check repeats until a listing is shown to have missed
nothing (the next one still lists all its images), at most 3 times. Exit 0 means
every image listed at the end is saved; otherwise it says what is missing: exit 6
(ExportUnconfirmed) when images kept being deleted during every listing.

One export into a directory at a time (<dir>/.aerial-export.lock): a second one
refuses with exit 2, naming the pid that holds it, or with --wait-for-lock waits.

The first Ctrl-C, SIGTERM or SIGHUP starts no new download and lets those under
way finish and be indexed (for up to 30s); a second one aborts them. Exit 130.

Examples:
  $ aerial export backup/
  $ aerial export backup/ --concurrency 8 --json | jq '.failed'
  $ aerial export backup/ --no-report && aerial export --report-only backup/`,
    )
    .action(action<ExportOptions>(runExportCommand));
}

async function runExportCommand(ctx: Context, options: ExportOptions & { reportOnly?: boolean }, args: string[]): Promise<void> {
  if (options.reportOnly) {
    const { runReportOnly } = await import('./report.js');
    await runReportOnly(ctx, args[0]!, options);
    return;
  }
  const { runExport } = await import('./run.js');
  await runExport(ctx, args[0]!, options);
}
