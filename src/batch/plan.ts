// Turns a batch file into a plan: for every row its validated wire request,
// its output file and its manifest key, or the reason it is invalid. Nothing
// here sends a request or writes a file, so --dry-run is the plan printed.
//
// The plan is never held whole. A first pass (surveyBatch) checks every row of
// the file and keeps, per row, only a 64-bit hash of its output name, for the
// collision check; later passes (plannedRows) plan the rows again one at a
// time, as they are sent or printed. Only rows whose names clash are kept
// whole, in a pass of their own, to tell them apart.
import { hash } from 'node:crypto';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { flagName, SANDBOX_PRICE, SCENE_ENUM_FIELDS } from '../api/enums.js';
import { UsageError } from '../lifecycle/errors.js';
import type { GenerationRequest } from '../api/schema.js';
import { fitName, fitPath, foldName, MAX_PATH_BYTES, nameTag, separateNames, splitExtension, utf8Length } from '../files/file-names.js';
import { buildGenerationRequest, type SceneDefaults, type SceneInput } from '../input/scene-request.js';
import { LOCATION_FIELDS } from '../scene/vocabulary.js';
import { VERSION } from '../build-outputs/version.js';
import { RowArray, textKey, WordTable } from '../bulk/compact.js';
import { DEFAULT_MANIFEST_NAME, rowKey } from './manifest.js';
import { inputError } from './input-text.js';
import { ColumnMap, misspeltColumn, rowName, rowSceneInput, sceneFieldOf, type BatchRow } from './row-columns.js';
import { inShard, type Shard } from './shard.js';
import { checkPlaceholders, expandTemplate, type ExpandedTemplate, type OutputTemplate } from './template.js';

export interface PlannedRow {
  row: number;
  /** Column values as read, for messages and the JSON summary. */
  cells: Record<string, unknown>;
  request?: GenerationRequest;
  /** Absolute output path. */
  target?: string;
  /** Output path relative to the manifest's directory (what the manifest records). */
  file?: string;
  key?: string;
  /** The digest of what the row was planned from (RowPlanner.inputDigest), for the manifest; absent for a row whose name was changed to tell it from another. */
  input?: string;
  /** Credits at the sandbox's prices; the real service does not publish its prices. */
  credits?: number;
  /** Why the row cannot be sent, already prefixed with its row number. */
  error?: string;
  /** Its file name clashes with an earlier row's. */
  collision?: boolean;
}

/** A valid row, ready to send. */
export type ValidRow = PlannedRow & { request: GenerationRequest; target: string; file: string; key: string };

/** Where the rows come from: a batch file (input.ts), read afresh for each pass. */
export interface RowSource {
  readonly format: 'csv' | 'jsonl' | 'json';
  /** The CSV header; none for JSON, whose columns are the keys the rows use. */
  readonly header: string[];
  /** At least as many as the rows there are, when known. */
  readonly rowsAtMost?: number;
  /** The rows in file order, in batches; rows `skip` names may be left out unread. */
  rows(options?: { skip?: (row: number) => boolean }): AsyncIterable<BatchRow[]>;
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

/** A path with an empty, '.' or '..' name in it: left to relative(). */
const UNNORMAL = /(^|\/)\.{0,2}(\/|$)/;

export const BUILTIN_NAMES = ['row', 'lat', 'lng', ...SCENE_ENUM_FIELDS];
const BUILTINS = new Set<string>([...BUILTIN_NAMES, ...SCENE_ENUM_FIELDS.map(flagName)]);

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

export interface PlannerOptions {
  /** The CSV header; JSON Lines columns are learnt from the rows. */
  header: string[];
  /** Scene values from the command-line flags: defaults for missing columns. */
  flags: SceneInput;
  /** The config's scene defaults (Settings['sceneDefaults']), or those a manifest's plan record gives. */
  sceneDefaults: SceneDefaults;
  template: OutputTemplate;
  manifestPath?: string;
  cwd: string;
  /** Give each planned row with a key the digest of what it was planned from (the manifest records it). */
  inputDigests?: boolean;
  /** The batch file as messages name it. */
  path?: string;
}

/** A row as planned before its name is final (names that clash are changed after the first pass). */
interface DraftRow extends PlannedRow {
  name?: ExpandedTemplate;
}

/**
 * Everything a row's plan is made from besides its number and cells: the
 * version of the rules, the template, the flags, the config defaults and the
 * directories. The cells' columns map to fields by their names alone (two
 * columns for one field are refused), so the cells themselves say which
 * columns a row's values came from.
 */
function planningContext(options: PlannerOptions, manifestDir: string): string {
  // Hashed once: each row's digest then hashes a few dozen bytes of it, not the whole text.
  return hash('sha256', JSON.stringify([VERSION, options.template.source, options.flags, options.sceneDefaults, options.cwd, manifestDir]));
}

/**
 * Plans one row at a time. The columns are the CSV header, or for JSON Lines
 * every key seen so far, in first-seen order; each scene field is set by at
 * most one column.
 */
export class RowPlanner {
  readonly manifestPath: string;
  readonly manifestDir: string;
  private readonly manifestDirSlash: string;
  readonly columns = new ColumnMap();
  private readonly context: string;

  constructor(private readonly options: PlannerOptions) {
    const { cwd, template } = options;
    this.manifestPath = options.manifestPath ? resolve(cwd, options.manifestPath) : defaultManifestPath(template, cwd);
    this.manifestDir = dirname(this.manifestPath);
    this.manifestDirSlash = this.manifestDir.endsWith(sep) ? this.manifestDir : this.manifestDir + sep;
    this.context = planningContext(options, this.manifestDir);
    for (const column of options.header) this.columns.add(column);
    if (options.header.length > 0) {
      this.checkPlaceholders();
      this.checkColumns();
    }
  }

  /**
   * Refuses a column that sets no scene field, is not used by the template,
   * and is a typo away from a field's name (`zooom`): its values would be
   * dropped without a word. Returns the other columns the batch does not use,
   * for a warning.
   */
  checkColumns(): string[] {
    const used = new Set(this.options.template.names);
    const unused: string[] = [];
    for (const column of this.columns.columns) {
      if (sceneFieldOf(column) !== undefined || used.has(column)) continue;
      const meant = misspeltColumn(column);
      if (meant !== undefined) {
        const where = this.options.header.length > 0 ? 1 : this.columns.firstLine.get(column);
        const what = this.options.header.length > 0 ? 'column' : 'key';
        throw inputError(
          this.options.path ?? 'batch file',
          where,
          `${what} '${column}' sets no scene field; did you mean '${meant}'? rename it (a column the output template uses is kept as it is)`,
        );
      }
      unused.push(column);
    }
    return unused;
  }

  /** Refuses template placeholders that name neither a built-in value nor a column. */
  checkPlaceholders(): void {
    checkPlaceholders(this.options.template, (name) => BUILTINS.has(name) || this.columns.has(name), [...BUILTIN_NAMES, ...this.columns.columns]);
  }

  /** Learns the row's columns (JSON Lines rows may bring new ones). */
  private learnColumns(row: BatchRow): void {
    for (const column in row.cells) if (!this.columns.has(column)) this.columns.add(column, row.line);
  }

  /**
   * A digest of everything the row's plan is made from: equal digests make
   * equal plans, so a row whose digest a manifest's done record carries has
   * that record's key and file (and was valid), without planning it again.
   */
  inputDigest(row: BatchRow): string {
    this.learnColumns(row);
    return hash('sha256', `${this.context}\n${row.row}\n${JSON.stringify(row.cells)}`).slice(0, 32);
  }

  /** A file as the manifest records it, back to its absolute path (manifestFile's inverse). */
  targetOf(file: string): string {
    // What manifestFile gives most targets, a plain path under the directory, is put back without resolve()'s work.
    if (sep === '/' && file !== '' && !file.startsWith('/') && !UNNORMAL.test(file)) return this.manifestDirSlash + file;
    return resolve(this.manifestDir, file);
  }

  /** The row's request and output name (final unless the name clashes with another row's), or why it is invalid. */
  draft(batchRow: BatchRow, input?: string): DraftRow {
    const { row, cells } = batchRow;
    this.learnColumns(batchRow);
    const entry: DraftRow = { row, cells };
    if (input !== undefined) entry.input = input;
    try {
      const { input, columnOf } = rowSceneInput({ cells }, this.columns.byField, this.options.flags);
      const label = (field: string) => {
        const column = columnOf.get(field as keyof SceneInput) ?? this.columns.byField.get(field as keyof SceneInput);
        if (column !== undefined) return `column '${column}'`;
        // The location has no flag in a batch: it can only come from a column.
        return (LOCATION_FIELDS as string[]).includes(field) ? `column '${field}'` : `--${flagName(field)}`;
      };
      const request = buildGenerationRequest(input, this.options.sceneDefaults, label);
      // A name that is not built in is a column (checked against the columns before or after the pass); a row without it has ''.
      const name = expandTemplate(this.options.template, (placeholder) => builtinValue(placeholder, row, request) ?? cellText(cells[placeholder]));
      // Known before anything is paid for: a path the system calls would refuse with ENAMETOOLONG.
      const target = resolve(this.options.cwd, fitPath(name.path));
      if (utf8Length(target) > MAX_PATH_BYTES) throw new UsageError(`its output path is longer than the system allows (${MAX_PATH_BYTES} bytes)`);
      entry.request = request;
      entry.target = target;
      entry.credits = SANDBOX_PRICE[request.resolution];
      entry.name = name;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      entry.error = `${rowName(batchRow)}: ${error.message}`;
    }
    return entry;
  }

  /** The row with its final name (`target`), its file relative to the manifest and (unless `withKey` is false) its key. */
  finish(entry: DraftRow, target = entry.target, withKey = true): PlannedRow {
    const planned: PlannedRow = { row: entry.row, cells: entry.cells };
    if (entry.error || !target) return entry.error ? { ...planned, error: entry.error } : planned;
    planned.request = entry.request;
    planned.target = target;
    planned.credits = entry.credits;
    planned.file = this.manifestFile(target);
    if (withKey) planned.key = rowKey(planned.request, planned.file);
    // Only a row under the name its values make can be recalled by them; the file must also lead back to the target.
    if (withKey && this.options.inputDigests && target === entry.target && this.targetOf(planned.file) === target) {
      planned.input = entry.input ?? this.inputDigest(entry);
    }
    return planned;
  }

  /** An output path as the manifest records it: relative to its directory, with '/' between names. */
  manifestFile(target: string): string {
    // Most targets lie under the manifest's directory: the rest of the path, as relative() would give it, without its work.
    const under = target.startsWith(this.manifestDirSlash) ? target.slice(this.manifestDirSlash.length) : undefined;
    if (under !== undefined && sep === '/' && under !== '' && !UNNORMAL.test(under)) return under;
    return relative(this.manifestDir, target).split(sep).join('/');
  }

  /** Where the template's expansion for a row lands, as the collision check shows it. */
  shown(target: string): string {
    const fromCwd = relative(this.options.cwd, target);
    return fromCwd.startsWith('..') || isAbsolute(fromCwd) ? target : fromCwd;
  }
}

/**
 * Two rows writing one file would silently lose an image (and its credits).
 * Rows alike in every value the template uses are refused: the template does
 * not tell them apart. Rows whose values differ but make one name (`a/b` and
 * `a_b`, a cut long value, names that differ only in case, which are one file
 * on macOS and Windows) are told apart by a hash of their values: the one row
 * whose name is its values unchanged keeps it. Checked across all shards,
 * since shards usually end up in one directory.
 *
 * The first pass keeps a 64-bit hash of each folded name with the first row
 * that had it; only names met more than once are looked at again, in a pass
 * that keeps those rows whole.
 */
export class NameRegistry {
  /** Hashes of folded names, with how often each was met. */
  private readonly seen: WordTable;
  /** Names met more than once. */
  private repeated = 0;
  /** Rows whose name changed to tell them from others. */
  readonly renamed = new Map<number, string>();

  constructor(expectedRows?: number) {
    this.seen = new WordTable(2, 0, expectedRows);
  }
  /** Rows alike in every templated value to an earlier row: the earlier row. */
  private readonly sameAs = new RowArray((n) => new Uint32Array(n));
  private duplicates = 0;
  /** The first few rows alike to an earlier one, for messages. */
  readonly firstDuplicates: number[] = [];

  add(target: string): void {
    const { slot, added } = this.seen.slotFor(textKey(foldName(target)));
    if (!added && this.seen.hits(slot) === 2) this.repeated++;
  }

  /** Whether some names were met more than once (or share a hash): the clash pass is needed. */
  get clashing(): boolean {
    return this.repeated > 0;
  }

  get duplicateCount(): number {
    return this.duplicates;
  }

  /** Whether a row's draft name is one met more than once. */
  isClash(target: string): boolean {
    const slot = this.seen.find(textKey(foldName(target)));
    return slot !== -1 && this.seen.hits(slot) > 1;
  }

  /** The earlier row alike to `row` in every templated value, if any. */
  duplicateOf(row: number): number | undefined {
    return this.duplicates > 0 ? this.sameAs.get(row) || undefined : undefined;
  }

  /** Settles the rows of clashing names (met in file order): duplicates found, the others renamed. */
  settle(rows: DraftRow[]): void {
    const firstByRaw = new Map<string, DraftRow>();
    const named: DraftRow[] = [];
    for (const entry of rows) {
      const first = firstByRaw.get(entry.name!.raw);
      if (!first) {
        firstByRaw.set(entry.name!.raw, entry);
        named.push(entry);
        continue;
      }
      this.sameAs.set(entry.row, first.row);
      this.duplicates++;
      if (this.firstDuplicates.length < 3) this.firstDuplicates.push(entry.row);
    }
    // Names taken by rows outside the clashes that a new name must not take: added as they are met.
    const outside: Array<{ outside: string }> = [];
    type Item = DraftRow | { outside: string };
    const nameOf = (item: Item) => ('outside' in item ? item.outside : item.target!);
    for (;;) {
      const separated = separateNames<Item>(
        [...outside, ...named],
        nameOf,
        (item, attempt) => {
          const { path, raw } = (item as DraftRow).name!;
          const [stem, ending] = splitExtension(basename(path));
          return join(dirname((item as DraftRow).target!), fitName(stem, ending, nameTag(raw, attempt)));
        },
        (item) => {
          if ('outside' in item) return true;
          const { path, raw } = item.name!;
          return raw === path && fitPath(path) === path;
        },
      );
      const taken = [...separated].find(([item, name]) => !('outside' in item) && name !== item.target && this.takenOutside(name, outside));
      if (taken) {
        outside.push({ outside: taken[1] });
        continue;
      }
      for (const [item, name] of separated) if (!('outside' in item) && name !== item.target) this.renamed.set(item.row, name);
      return;
    }
  }

  /** A new name some row outside the clashes already has (by its hash; a shared hash only costs another tag). */
  private takenOutside(name: string, outside: Array<{ outside: string }>): boolean {
    if (outside.some((item) => foldName(item.outside) === foldName(name))) return false;
    const slot = this.seen.find(textKey(foldName(name)));
    return slot !== -1 && this.seen.hits(slot) === 1;
  }

  /** The error of a row alike to an earlier one. */
  duplicateError(row: number, first: number, shown: string): string {
    return `row ${row}: writes the same file as row ${first} (${shown}); make --output-template unique per row, e.g. with {row}`;
  }
}

/** What the first pass learnt about the whole file and this shard's rows. */
export interface Survey {
  /** Rows in the file. */
  rows: number;
  /** Invalid rows anywhere in the file (clashing names included). */
  invalid: number;
  /** The first few reasons, in row order. */
  firstErrors: string[];
  /** Some rows are alike to earlier ones in every templated value: never sent, even with --skip-invalid. */
  collisions: boolean;
  /** This shard's rows: all, valid, and the credits of those planned at the sandbox's prices (recalled rows are not priced; a dry run recalls none). */
  shard: { rows: number; valid: number; credits: number };
  names: NameRegistry;
  /** Columns that set no scene field and that the output template does not use. */
  unusedColumns: string[];
}

export interface SurveyOptions {
  shard?: Shard;
  /**
   * Told of each valid row of the shard, with its key and file, during the
   * first pass; rows whose names changed after it are told again, in their
   * final form.
   */
  onRow?: (row: ValidRow) => void;
  /** Told of a row of the shard it was told of, found after the first pass to be alike to an earlier row: it is invalid after all. */
  onDropped?: (row: number) => void;
  /**
   * Asked first of every row, with its input digest (RowPlanner.inputDigest)
   * and whether it is the shard's: the output path of a row that needs no
   * plan (an earlier run did it, from these very inputs), which is then
   * valid and not told to onRow; undefined to plan the row.
   */
  recall?: (row: BatchRow, input: string, mine: boolean) => string | undefined;
  /** Awaited once every row has been met, before rows whose names clash are looked at again. */
  firstPassDone?: () => Promise<void>;
}

/**
 * The first pass: checks every row of the file (all shards: a typo in another
 * runner's row is still a typo in this batch), and the names of all of them.
 */
export async function surveyBatch(source: RowSource, planner: RowPlanner, options: SurveyOptions = {}): Promise<Survey> {
  const names = new NameRegistry(source.rowsAtMost);
  const survey: Survey = { rows: 0, invalid: 0, firstErrors: [], collisions: false, shard: { rows: 0, valid: 0, credits: 0 }, names, unusedColumns: [] };
  for await (const batch of source.rows()) {
    for (const batchRow of batch) {
      survey.rows++;
      const mine = inShard(batchRow.row, options.shard);
      if (mine) survey.shard.rows++;
      const input = options.recall ? planner.inputDigest(batchRow) : undefined;
      const recalled = input === undefined ? undefined : options.recall!(batchRow, input, mine);
      if (recalled !== undefined) {
        // Not priced: credits are what a dry run reports, and a dry run recalls nothing.
        names.add(recalled);
        if (mine) survey.shard.valid++;
        continue;
      }
      const draft = planner.draft(batchRow, input);
      if (draft.error) {
        survey.invalid++;
        if (survey.firstErrors.length < 3) survey.firstErrors.push(draft.error);
        continue;
      }
      names.add(draft.target!);
      if (mine) {
        survey.shard.valid++;
        survey.shard.credits += draft.credits!;
        if (options.onRow) options.onRow(planner.finish(draft, draft.target, true) as ValidRow);
      }
    }
  }
  // JSON rows name their columns as they come: checked once all are known (a CSV header's were checked at once).
  if (source.format !== 'csv') planner.checkPlaceholders();
  survey.unusedColumns = planner.checkColumns();
  await options.firstPassDone?.();
  if (!names.clashing) return survey;

  // The clash pass: the rows whose names were met more than once, whole.
  const clashing: DraftRow[] = [];
  for await (const batch of source.rows()) {
    for (const batchRow of batch) {
      const draft = planner.draft(batchRow);
      if (!draft.error && names.isClash(draft.target!)) clashing.push(draft);
    }
  }
  names.settle(clashing);
  const errors = survey.firstErrors.map((error) => ({ row: Number(/^row (\d+)/.exec(error)![1]), error }));
  for (const draft of clashing) {
    const first = names.duplicateOf(draft.row);
    const mine = inShard(draft.row, options.shard);
    if (first !== undefined) {
      survey.invalid++;
      errors.push({ row: draft.row, error: names.duplicateError(draft.row, first, planner.shown(draft.target!)) });
      if (mine) {
        survey.shard.valid--;
        survey.shard.credits -= draft.credits!;
        options.onDropped?.(draft.row);
      }
    } else if (mine && names.renamed.has(draft.row)) {
      options.onRow?.(planner.finish(draft, names.renamed.get(draft.row), true) as ValidRow);
    }
  }
  survey.collisions = names.duplicateCount > 0;
  survey.firstErrors = errors
    .sort((a, b) => a.row - b.row)
    .slice(0, 3)
    .map((entry) => entry.error);
  return survey;
}

/**
 * A later pass: the rows of the shard in file order, each planned again with
 * its final name, one at a time. Rows of other shards, and rows `settled`
 * says need nothing more, are skipped (unread where the format allows).
 */
export async function* plannedRows(
  source: RowSource,
  planner: RowPlanner,
  survey: Survey,
  options: { shard?: Shard; keys?: boolean; settled?: (row: number) => boolean } = {},
): AsyncGenerator<PlannedRow> {
  const { names } = survey;
  const { shard, keys = true, settled } = options;
  const skip = (row: number) => !inShard(row, shard) || (settled !== undefined && settled(row));
  for await (const batch of source.rows({ skip })) {
    for (const batchRow of batch) {
      if (skip(batchRow.row)) continue;
      const draft = planner.draft(batchRow);
      if (draft.error) {
        yield planner.finish(draft);
        continue;
      }
      const first = names.duplicateOf(draft.row);
      if (first !== undefined) {
        yield { row: draft.row, cells: draft.cells, collision: true, error: names.duplicateError(draft.row, first, planner.shown(draft.target!)) };
        continue;
      }
      yield planner.finish(draft, names.renamed.get(draft.row), keys);
    }
  }
}

/** The whole plan in memory, for small inputs: every row of the file, and this shard's. */
export async function planBatch(
  options: Omit<PlannerOptions, 'header'> & { file: RowSource; shard?: Shard },
): Promise<{ rows: PlannedRow[]; allRows: PlannedRow[]; manifestPath: string }> {
  const planner = new RowPlanner({ ...options, header: options.file.header });
  const survey = await surveyBatch(options.file, planner);
  const allRows: PlannedRow[] = [];
  for await (const row of plannedRows(options.file, planner, survey)) allRows.push(row);
  return { rows: allRows.filter((row) => inShard(row.row, options.shard)), allRows, manifestPath: planner.manifestPath };
}
