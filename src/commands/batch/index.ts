// `aerial batch <file>`: one generation per row of a CSV or JSON Lines file,
// for CI jobs. The work lives in ../batch/; this file only declares the
// interface, so that `--help` loads nothing heavy.
import { Option, type Command } from 'commander';
import type { BatchOptions } from './run.js';
import type { BatchStatusOptions } from './status.js';
import type { ActionFactory, CommandRegistration, Context } from '../../cli/context.js';
import { UsageError } from '../../lifecycle/errors.js';
import { DEFAULT_LISTEN_HOST } from '../../input/flags.js';
import { CALLBACK_WAIT_HELP, PROGRESS_INTERVAL_HELP, RETRY_DELAY_HELP } from '../shared/help.js';
import { addSceneOptions, sceneColumnsHelp, sceneInputFrom } from '../shared/scene-options.js';

interface BatchCommandOptions {
  [option: string]: unknown;
}

export const registration: CommandRegistration = { name: 'batch', register };

function register(command: Command, action: ActionFactory): void {
  command
    .argument('<file>', 'CSV with a header row, or JSON Lines; "-" reads stdin')
    .helpGroup('Images:')
    .description('generate one image per row of a CSV or JSON Lines file, resumably')
    .option('--format <format>', 'file format: csv, jsonl, json (a JSON array; default: from the extension, then the content)')
    .option('--delimiter <char>', "CSV cell separator: ',' (default; tab for .tsv), ';', tab or '|'")
    .option('--output-template <template>', 'file name per row; {row}, {lat}, {lng}, a scene choice such as {zoom} or {weather}, or a column (default aerial-batch/{row}-{lat}_{lng}.jpg)')
    .option('--concurrency <n>', 'requests in flight at once, 1 to 256 (default 4); halved on a 429, grown back as answers come')
    .option('--rate <n/s|n/m>', 'start at most n requests a second (10/s) or a minute (600/m): this process\'s share of the account\'s rate limit')
    .option('--max-retries <n>', 'retries per row on 429, 5xx, resets and timeouts (default 5)')
    .option('--retry-delay <duration>', RETRY_DELAY_HELP)
    .option('--retry-unsafe', 'also retry rows whose connection broke after the request was sent (the service may charge twice)')
    .addOption(manifestOption())
    .option('--shard <k/n>', 'run only shard k of n (every n-th row, from row k); auto (or auto/N) reads k and n from the CI or job engine')
    .option('--dry-run', 'validate every row and show the credits it would cost; send nothing')
    .option('-f, --force', 'overwrite output files that this batch did not write')
    .option('--wait-for-lock', 'when another run of this batch (same manifest, rows in common) is under way, wait for it to end instead of refusing')
    .option('--no-metadata', 'save the bytes exactly as received: no GPS EXIF, no AI-generated note')
    .option('--skip-invalid', 'run the valid rows even when some rows are invalid (they are reported as failed)')
    .option('--progress-interval <duration>', PROGRESS_INTERVAL_HELP)
    .option('--async', 'use the async endpoint: one local listener catches every row\'s callback, matched by requestId')
    .option('--listen-host <host>', `with --async: address the listener binds (default ${DEFAULT_LISTEN_HOST})`)
    .option('--listen-port <port>', 'with --async: port the listener binds (default 0: a free port)')
    .option('--public-url <url>', 'with --async: URL the service calls to reach the listener (a tunnel); a secret token path is appended')
    .option('--callback-timeout <duration>', `with --async: how long a row waits for its callback, ${CALLBACK_WAIT_HELP}`)
    .option('--report <file.html>', 'write an HTML report at the end: map, thumbnails, every row\'s scene and status (thumbnails go in <file>.thumbnails/)')
    .option('--geojson <file>', 'write a GeoJSON FeatureCollection at the end: one point per row, with its file, scene and status');
  addSceneOptions(command);
  command
    .addHelpText(
      'after',
      `
Columns are named like the scene flags, in camelCase or kebab-case: ${sceneColumnsHelp()}.
Empty cells and missing columns take the flag's value, then the config default. Other
columns can be used in --output-template; one a typo away from a field (zooom) is refused.
The file must be UTF-8; CSV cells are cut by ',' unless --delimiter names another; blank
rows (,,) are skipped. A file that cannot be read as written is refused, naming its line.

The manifest (JSON Lines, mode 0600) gets a line per row event: "started" just before
a row is sent, then "done" (file, bytes, attempts) or "failed" (error); before them, a
record of what the rows were planned from, for batch status. Re-running the
same command skips rows recorded as done whose file is still there, so a killed batch
resumes where it stopped; rows that were in flight when it died are sent again (the
service may have charged for them). A row's identity is its request plus its output
file: edit a row and it is generated again.

One run of a batch at a time: a run holds <manifest>.lock (<manifest>.shard-k-of-n.lock
for a shard; shards whose rows differ run side by side). A second run refuses before
sending anything, naming the pid that holds it, or with --wait-for-lock waits for it
and then sends only what it left. A lock whose process is gone is taken over at once;
one from another host (a shared directory) once it has not been renewed for 2 minutes.

The first Ctrl-C, SIGTERM or SIGHUP sends no new row and lets the requests on the
wire finish and be recorded (for up to 30s), since they are paid for: the re-run
then sends only the rest. A second one aborts them at once.

Exit codes: 0 every row succeeded; 2 invalid rows, clashing file names, output
directories where no file can be created, or another run of the batch under way
(nothing sent), or a disk that filled up
(the batch stops); 3 or 4 stopped early on a 401 or 402 (rows not started are
skipped); otherwise the code most failed rows share (6 generation, 7 network,
8 rate limited); 130 interrupted.

Examples:
  $ aerial batch places.csv --output-template 'out/{row}-{lat}_{lng}.jpg' --concurrency 8
  $ aerial batch places.jsonl --resolution HD --dry-run
  $ aerial batch places.csv --shard 2/4 --json > summary.json     # runner 2 of 4
  $ printf 'lat,lng,zoom\\n48.8584,2.2945,High\\n' | aerial batch - --sandbox`,
    )
    .action(action<BatchCommandOptions>(runBatchCommand));
  registerStatus(command, action);
}

/**
 * batch's --manifest. commander reads a parent's options wherever they stand, so
 * in `batch status places.csv --manifest m1.jsonl m2.jsonl` it is this option,
 * not status's, that takes the paths: it takes every path that follows, as
 * status's does, and batch itself refuses more than one.
 */
function manifestOption(): Option {
  const option = new Option('--manifest <file>', 'JSON Lines record of each row (default aerial-batch-manifest.jsonl in the template\'s base directory)');
  option.variadic = true;
  return option;
}

function registerStatus(batch: Command, action: ActionFactory): void {
  const command = batch
    .command('status')
    .argument('[file]', 'the batch file the shards ran: CSV with a header row, or JSON Lines; "-" reads stdin (default: the one their manifests record)')
    // Taken, to say what went wrong when a shell expanded an unquoted glob into several words.
    .allowExcessArguments(true)
    .description('combine the manifests of every shard into one account of the batch: rows done, failed, missing, done more than once')
    .option('--manifest <path-or-glob...>', "shards' manifests, or quoted globs of them ('dir/**/*.jsonl'): several after one --manifest, or --manifest repeated (default: the batch's own manifest)")
    .option('--format <format>', 'file format: csv, jsonl, json (a JSON array; default: from the extension, then the content)')
    .option('--delimiter <char>', "CSV cell separator: ',' (default; tab for .tsv), ';', tab or '|'")
    .option('--output-template <template>', 'the --output-template the shards used, for manifests that do not record it (default aerial-batch/{row}-{lat}_{lng}.jpg)')
    .option('--report <file.html>', 'write an HTML report of the whole batch: map, thumbnails, every row\'s scene and state (thumbnails go in <file>.thumbnails/)')
    .option('--geojson <file>', 'write a GeoJSON FeatureCollection of the whole batch: one point per row, with its file, scene and state');
  addSceneOptions(command);
  command
    .addHelpText(
      'after',
      `
A row is known by its request and its output file. Each manifest records what its rows
were planned from (the batch file's SHA-256, the template, the scene flags and config
defaults, the shard), so status needs no other flag: it plans the rows from that record,
reads the batch file it names unless given one, and refuses a file that is not the one
the shards ran, manifests that ran with different settings, and flags that contradict
the record. Manifests written before the record need the --output-template and scene
flags the shards ran with. --shard does not matter: status covers every row. Manifests
may come from any number of runners (artifacts with one name in several directories):
later lines win within a manifest, a row done in two of them is "done more than once",
and the 429 answers are summed over all of them.

Exit codes: 0 every row done; 2 bad flags, a --manifest that names no file (nothing is
counted from fewer manifests than asked), another batch file than the shards ran, or
shards that ran with different settings; otherwise the code most failed rows share (as
batch exits: 6 generation, 7 network, 8 rate limited, 2 invalid rows), or 6 when rows are
only missing (no shard finished them, or a shard's manifest is missing).

Examples:
  $ aerial batch status --manifest 'manifests/*/aerial-batch-manifest.jsonl'
  $ aerial batch status places.csv --manifest m1.jsonl m2.jsonl
  $ aerial batch status places.csv --manifest 'shards/**/*.jsonl' --json | jq '.missingRows'
  $ aerial batch status places.csv --manifest 'shards/*/*.jsonl' --report shards/report.html`,
    )
    .action(action<BatchCommandOptions>(runStatusCommand));
}

async function runStatusCommand(ctx: Context, options: BatchCommandOptions, args: string[]): Promise<void> {
  if (args.length > 1) {
    throw new UsageError(
      `batch status takes one batch file; got ${args.length} (${args.slice(0, 3).join(' ')}${args.length > 3 ? ' …' : ''}): give the batch file first, then --manifest and its paths or globs`,
    );
  }
  const { runBatchStatus } = await import('./status.js');
  await runBatchStatus(ctx, args[0], { ...(options as Omit<BatchStatusOptions, 'scene'>), scene: sceneInputFrom(options) });
}

async function runBatchCommand(ctx: Context, options: BatchCommandOptions, args: string[]): Promise<void> {
  const manifests = options.manifest as string[] | undefined;
  if (manifests && manifests.length > 1) {
    throw new UsageError(
      `--manifest: a batch writes one manifest; got ${manifests.length} (${manifests.slice(0, 3).join(' ')}${manifests.length > 3 ? ' …' : ''}): give the batch file before --manifest (\`aerial batch status\` reads several)`,
    );
  }
  const { runBatch } = await import('./run.js');
  await runBatch(ctx, args[0]!, { ...(options as Omit<BatchOptions, 'scene'>), manifest: manifests?.[0], scene: sceneInputFrom(options) });
}
