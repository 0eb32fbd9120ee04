// Batch files for unit tests: the text written to a private temp file and
// opened as `aerial batch` opens its input, so the tests read rows through
// the same streaming reader the command uses.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { BatchInput } from '../../src/batch/input.js';
import type { BatchRow } from '../../src/batch/row-columns.js';

let dir: string | undefined;
let files = 0;
// Test files run in worker threads, which end without an 'exit' event: each file removes its own.
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** `text` as a batch file named `name` (its extension tells the format, as for the command). */
export async function batchFile(text: string, name = 'rows.jsonl'): Promise<BatchInput> {
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'aerial-batch-rows-'));
  }
  const sub = join(dir, String(files++));
  mkdirSync(sub);
  const path = join(sub, name);
  writeFileSync(path, text);
  return BatchInput.open(path);
}

/** Every row of a file, read as the batch reads them. */
export async function readRows(input: BatchInput): Promise<BatchRow[]> {
  const rows: BatchRow[] = [];
  for await (const batch of input.rows()) for (const row of batch) rows.push(row);
  return rows;
}
