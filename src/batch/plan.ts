// Turns a batch file into a plan: for every row its validated wire request,
// its output file and its manifest key, or the reason it is invalid. Nothing
// here sends a request or writes a file, so --dry-run is the plan printed.
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { flagName, SANDBOX_PRICE, SCENE_ENUM_FIELDS } from '../api/enums.js';
import { UsageError } from '../errors.js';
import type { GenerationRequest } from '../api/schema.js';
import type { Settings } from '../config.js';
import { buildGenerationRequest, type SceneInput } from '../request.js';
import { LOCATION_FIELDS } from '../scene-vocabulary.js';
import { DEFAULT_MANIFEST_NAME, rowKey } from './manifest.js';
import { mapColumns, rowSceneInput, type BatchFile } from './rows.js';
import { inShard, type Shard } from './shard.js';
import { fitName, fitPath, MAX_PATH_BYTES, nameTag, separateNames, splitExtension, utf8Length } from '../file-names.js';
import { checkPlaceholders, expandTemplate, type ExpandedTemplate, type OutputTemplate } from './template.js';

export interface PlannedRow {
  row: number;
  line: number;
  /** Column values as read, for messages and the JSON summary. */
  cells: Record<string, unknown>;
  request?: GenerationRequest;
  /** Absolute output path. */
  target?: string;
  /** Output path relative to the manifest's directory (what the manifest records). */
  file?: string;
  key?: string;
  /** Credits at the sandbox's prices; the real service does not publish its prices. */
  credits?: number;
  /** Why the row cannot be sent, already prefixed with its row number. */
  error?: string;
  /** Its file name clashes with an earlier row's. */
  collision?: boolean;
}

export interface BatchPlan {
  /** The rows of this shard, in file order. */
  rows: PlannedRow[];
  /** Rows of the whole file (all shards): validity and collisions are checked across all of them. */
  allRows: PlannedRow[];
  manifestPath: string;
}

/** Names a template can use besides the columns: the row number and the request's own values. */
export function builtinValue(name: string, row: number, request: GenerationRequest): string | undefined {
  if (name === 'row') return String(row);
  if (name === 'lat') return String(request.coordinates.lat);
  if (name === 'lng') return String(request.coordinates.lng);
  for (const field of SCENE_ENUM_FIELDS) {
    if (name === field || name === flagName(field)) return request[field];
  }
  return undefined;
}

export const BUILTIN_NAMES = ['row', 'lat', 'lng', ...SCENE_ENUM_FIELDS];

/** The directory the template writes under before its first placeholder: where the manifest lives by default. */
export function templateBaseDir(template: OutputTemplate, cwd: string): string {
  const first = template.parts[0];
  const literal = first && 'text' in first ? first.text : '';
  // Up to the last '/' before the first placeholder (for a template without any, its own directory).
  return resolve(cwd, literal.slice(0, literal.lastIndexOf('/') + 1) || '.');
}

export function defaultManifestPath(template: OutputTemplate, cwd: string): string {
  return resolve(templateBaseDir(template, cwd), DEFAULT_MANIFEST_NAME);
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export interface PlanOptions {
  file: BatchFile;
  /** Scene values from the command-line flags: defaults for missing columns. */
  flags: SceneInput;
  sceneDefaults: Settings['sceneDefaults'];
  template: OutputTemplate;
  shard?: Shard;
  manifestPath?: string;
  cwd: string;
}

export function planBatch(options: PlanOptions): BatchPlan {
  const { file, template, cwd } = options;
  const columnByField = mapColumns(file.columns);
  const columns = new Set(file.columns);
  const builtins = new Set<string>([...BUILTIN_NAMES, ...SCENE_ENUM_FIELDS.map(flagName)]);
  checkPlaceholders(template, (name) => builtins.has(name) || columns.has(name), [...BUILTIN_NAMES, ...file.columns]);

  const manifestPath = options.manifestPath ? resolve(cwd, options.manifestPath) : defaultManifestPath(template, cwd);
  const manifestDir = resolve(manifestPath, '..');

  const names = new Map<PlannedRow, ExpandedTemplate>();
  const planned: PlannedRow[] = file.rows.map(({ row, line, cells }) => {
    const entry: PlannedRow = { row, line, cells };
    try {
      const { input, columnOf } = rowSceneInput({ row, line, cells }, columnByField, options.flags);
      const label = (field: string) => {
        const column = columnOf.get(field as keyof SceneInput) ?? columnByField.get(field as keyof SceneInput);
        if (column !== undefined) return `column '${column}'`;
        // The location has no flag in a batch: it can only come from a column.
        return (LOCATION_FIELDS as string[]).includes(field) ? `column '${field}'` : `--${flagName(field)}`;
      };
      const request = buildGenerationRequest(input, options.sceneDefaults, label);
      const expanded = expandTemplate(template, (name) => builtinValue(name, row, request) ?? (columns.has(name) ? cellText(cells[name]) : undefined));
      // Known before anything is paid for: a path the system calls would refuse with ENAMETOOLONG.
      const target = resolve(cwd, fitPath(expanded.path));
      if (utf8Length(target) > MAX_PATH_BYTES) throw new UsageError(`its output path is longer than the system allows (${MAX_PATH_BYTES} bytes)`);
      entry.request = request;
      entry.target = target;
      entry.credits = SANDBOX_PRICE[request.resolution];
      names.set(entry, expanded);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      entry.error = `row ${row}: ${error.message}`;
    }
    return entry;
  });

  markCollisions(planned, names, cwd);
  for (const entry of planned) {
    if (entry.error || !entry.target) continue;
    entry.file = relative(manifestDir, entry.target).split(sep).join('/');
    entry.key = rowKey(entry.request, entry.file);
  }
  return {
    rows: planned.filter((entry) => inShard(entry.row, options.shard)),
    allRows: planned,
    manifestPath,
  };
}

/**
 * Two rows writing one file would silently lose an image (and its credits).
 * Rows alike in every value the template uses are refused: the template does
 * not tell them apart. Rows whose values differ but make one name (`a/b` and
 * `a_b`, a cut long value, names that differ only in case, which are one file
 * on macOS and Windows) are told apart by a hash of their values: the one row
 * whose name is its values unchanged keeps it. Checked across all shards,
 * since shards usually end up in one directory.
 */
function markCollisions(rows: PlannedRow[], names: Map<PlannedRow, ExpandedTemplate>, cwd: string): void {
  const firstByRaw = new Map<string, PlannedRow>();
  const named: PlannedRow[] = [];
  for (const entry of rows) {
    const expanded = names.get(entry);
    if (!expanded || !entry.target) continue;
    const first = firstByRaw.get(expanded.raw);
    if (!first) {
      firstByRaw.set(expanded.raw, entry);
      named.push(entry);
      continue;
    }
    const fromCwd = relative(cwd, entry.target);
    const shown = fromCwd.startsWith('..') || isAbsolute(fromCwd) ? entry.target : fromCwd;
    entry.collision = true;
    entry.error = `row ${entry.row}: writes the same file as row ${first.row} (${shown}); make --output-template unique per row, e.g. with {row}`;
  }
  const separated = separateNames(
    named,
    (entry) => entry.target!,
    (entry, attempt) => {
      const { path, raw } = names.get(entry)!;
      const [stem, ending] = splitExtension(basename(path));
      return join(dirname(entry.target!), fitName(stem, ending, nameTag(raw, attempt)));
    },
    (entry) => {
      const { path, raw } = names.get(entry)!;
      return raw === path && fitPath(path) === path;
    },
  );
  for (const [entry, target] of separated) entry.target = target;
}
