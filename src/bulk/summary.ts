// The end of a batch: per-row outcomes, the summary (human or --json) and the
// exit code. The exit code is 0 only when every row of the run succeeded;
// otherwise it says why the batch did not finish:
//   130                 interrupted (Ctrl-C / SIGTERM)
//   3 or 4              the batch stopped early on 401/403 or 402
//   the failed rows'    the code most failed rows share (ties: the lower code),
//   own code            e.g. 6 generation errors, 7 network, 8 rate limited, 2 invalid
import { ExitCode, type CliError } from '../lifecycle/errors.js';

export type OutcomeStatus = 'done' | 'failed' | 'skipped';

export interface RowOutcome {
  row: number;
  status: OutcomeStatus;
  /** Absolute path of the output file. */
  file?: string;
  bytes?: number;
  /** Requests sent for this row in this run (0 when it was already done). */
  attempts: number;
  error?: string;
  /** Exit code class of the failure. */
  exitCode?: number;
  /** Done by an earlier run (manifest), nothing sent now. */
  previously?: boolean;
  /** An earlier run wrote the file but died before recording it; taken as done. */
  adopted?: boolean;
  requestId?: string;
}

export interface BatchSummary {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  rows: RowOutcome[];
}

export function summarize(outcomes: RowOutcome[]): BatchSummary {
  const rows = [...outcomes].sort((a, b) => a.row - b.row);
  return {
    total: rows.length,
    succeeded: rows.filter((r) => r.status === 'done').length,
    failed: rows.filter((r) => r.status === 'failed').length,
    skipped: rows.filter((r) => r.status === 'skipped').length,
    rows,
  };
}

export interface Ending {
  interrupted?: boolean;
  /** Exit code of the failure that stopped the batch early (401 → 3, 402 → 4). */
  stoppedWith?: number;
}

export function batchExitCode(outcomes: RowOutcome[], ending: Ending = {}): number {
  const exitCodes = new Map<number, number>();
  for (const outcome of outcomes) {
    if (outcome.status === 'done') continue;
    const code = outcome.exitCode ?? ExitCode.Unexpected;
    exitCodes.set(code, (exitCodes.get(code) ?? 0) + 1);
  }
  return exitCodeOf(exitCodes, ending);
}

/** The exit code of a run whose rows that did not succeed are tallied by their exit code class in `exitCodes`. */
export function exitCodeOf(exitCodes: Map<number, number>, ending: Ending = {}): number {
  if (ending.interrupted) return ExitCode.Interrupted;
  if (ending.stoppedWith !== undefined) return ending.stoppedWith;
  let best: number = ExitCode.Ok;
  let bestCount = 0;
  for (const [code, count] of [...exitCodes].sort((a, b) => a[0] - b[0])) {
    if (count > bestCount) {
      best = code;
      bestCount = count;
    }
  }
  return best;
}

/** When a row or an image gives up after retries, say so in its reason. */
export function describeFailure(error: CliError, attempts: number): string {
  const what = error.status !== undefined ? `${error.code}: ${error.message}` : error.message;
  return attempts > 1 ? `${what} (after ${attempts} attempts)` : what;
}
