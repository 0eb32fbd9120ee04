// Batch progress on stderr: a live bar when a person is watching a terminal,
// otherwise one plain line every few seconds (CI logs keep every line, so a
// redrawn bar would fill them with control codes).
import { formatDuration } from '../input/duration.js';
import type { Terminal } from '../terminal/terminal.js';
import { MESSAGE_MAX, printable } from '../text/printable.js';

export interface ProgressCounts {
  /** Rows this run has to do (rows already done by an earlier run are not counted). */
  total: number;
  done: number;
  failed: number;
  /** Rows waiting to be tried again after a failed attempt. */
  retrying: number;
}

export interface Progress {
  /** Redraws (bar) or records (plain) the counts. */
  update(counts: ProgressCounts): void;
  /**
   * A message that must not tear the bar (a failed row, a pause for 429).
   * One the summary repeats (`inSummary`: a row's failure) is left out with
   * --json, whose summary lists every row: it is not said twice.
   */
  log(message: string, options?: { inSummary?: boolean }): void;
  stop(): void;
}

/** An estimate in whole seconds: finer would only flicker. */
const eta = (seconds: number) => formatDuration(seconds * 1000, 1000);

/** Rows per second so far and the time the rest will take at that rate. */
export function rateAndEta(counts: ProgressCounts, elapsedMs: number): { rate: number; etaSeconds: number } {
  const finished = counts.done + counts.failed;
  const rate = elapsedMs > 0 ? (finished * 1000) / elapsedMs : 0;
  const etaSeconds = rate > 0 ? (counts.total - finished) / rate : Infinity;
  return { rate, etaSeconds };
}

export function progressLine(counts: ProgressCounts, elapsedMs: number, noun = 'rows'): string {
  const finished = counts.done + counts.failed;
  const { rate, etaSeconds } = rateAndEta(counts, elapsedMs);
  const percent = counts.total > 0 ? Math.floor((finished * 100) / counts.total) : 100;
  return `${finished}/${counts.total} ${noun} (${percent}%): ${counts.done} done, ${counts.failed} failed, ${counts.retrying} retrying — ${rate.toFixed(1)}/s, ETA ${eta(etaSeconds)}`;
}

export interface ProgressOptions {
  /** Seconds between plain lines. */
  intervalMs?: number;
  noun?: string;
  now?: () => number;
}

export async function createProgress(io: Terminal, options: ProgressOptions = {}): Promise<Progress> {
  const now = options.now ?? Date.now;
  const started = now();
  const noun = options.noun ?? 'rows';
  const warn = (message: string, options?: { inSummary?: boolean }) => {
    if (!(io.json && options?.inSummary)) io.warn(message);
  };
  if (io.quiet) {
    return { update() {}, log: warn, stop() {} };
  }
  if (io.stderrIsTTY && !io.json) return createBar(io, noun, now, started);

  const interval = options.intervalMs ?? 5_000;
  let latest: ProgressCounts | undefined;
  let lastPrinted = '';
  const print = () => {
    if (!latest) return;
    const line = progressLine(latest, now() - started, noun);
    if (line !== lastPrinted) io.info(`batch: ${line}`);
    lastPrinted = line;
  };
  const timer = setInterval(print, interval);
  timer.unref();
  return {
    update(counts) {
      latest = { ...counts };
    },
    log: warn,
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * `text` in lines narrower than `columns` (by display width, colour codes
 * counting for nothing), broken between words, and within a word only when it
 * alone is too wide; lines after the first are indented by two spaces.
 */
export function fitToColumns(text: string, columns: number, width: (text: string) => number): string[] {
  // A line that fills the last column leaves the cursor waiting to wrap, which some terminals then do.
  const room = Math.max(columns - 1, 8);
  const lines: string[] = [];
  let line = '';
  const push = () => {
    lines.push(line);
    line = '  ';
  };
  for (const word of text.split(' ')) {
    const joined = line === '' || line === '  ' ? `${line}${word}` : `${line} ${word}`;
    if (width(joined) <= room) {
      line = joined;
      continue;
    }
    if (line !== '' && line !== '  ') push();
    let rest = word;
    // A word wider than a line is cut between characters.
    while (width(`${line}${rest}`) > room) {
      let cut = 0;
      const characters = [...rest];
      while (cut < characters.length && width(`${line}${characters.slice(0, cut + 1).join('')}`) <= room) cut++;
      line += characters.slice(0, Math.max(cut, 1)).join('');
      rest = characters.slice(Math.max(cut, 1)).join('');
      push();
    }
    line += rest;
  }
  if (line !== '' && line !== '  ') lines.push(line);
  return lines;
}

interface BarPayload {
  done: number;
  failed: number;
  retrying: number;
  perSecond: string;
  remaining: string;
}

/**
 * The bar's line within `maxWidth` columns: the counts, the rate and the ETA
 * beside a bar of 10 to 20 cells. Where that is too wide, "0 retrying" goes
 * first, then the rate, then the done and failed counts; the ETA stays to the end.
 */
export function fitBarLine(line: { progress: number; value: number; total: number; maxWidth: number; noun: string; payload: BarPayload; complete: string; incomplete: string }): string {
  const { payload } = line;
  const room = Math.max(line.maxWidth - 1, 20);
  const counts = `${payload.done} done, ${payload.failed} failed`;
  const retrying = `, ${payload.retrying} retrying`;
  const head = ` ${line.value}/${line.total} ${line.noun}`;
  const tail = ` | ETA ${payload.remaining}`;
  const choices = [
    `${head} | ${counts}${retrying} | ${payload.perSecond}/s${tail}`,
    ...(payload.retrying === 0 ? [`${head} | ${counts} | ${payload.perSecond}/s${tail}`] : []),
    `${head} | ${counts}${payload.retrying === 0 ? '' : retrying}${tail}`,
    `${head}${tail}`,
  ];
  const text = choices.find((choice) => choice.length + 10 <= room) ?? choices.at(-1)!;
  const size = Math.max(1, Math.min(20, room - text.length));
  const filled = Math.round(Math.min(1, Math.max(0, line.progress)) * size);
  return `${line.complete.repeat(filled)}${line.incomplete.repeat(size - filled)}${text}`;
}

async function createBar(io: Terminal, noun: string, now: () => number, started: number): Promise<Progress> {
  const [{ default: cliProgress }, { default: stringWidth }] = await Promise.all([import('cli-progress'), import('string-width')]);
  const multibar = new cliProgress.MultiBar(
    {
      // Plain text, fitted to the terminal: cli-progress cuts a longer line at its width (counting colour codes as characters).
      format: (options: { barCompleteChar?: string; barIncompleteChar?: string }, params: { progress: number; value: number; total: number; maxWidth: number }, payload: BarPayload) =>
        fitBarLine({ ...params, noun, payload, complete: options.barCompleteChar ?? '█', incomplete: options.barIncompleteChar ?? '░' }),
      barsize: 20,
      stream: io.stderr as NodeJS.WritableStream,
      hideCursor: true,
      clearOnComplete: false,
      gracefulExit: false,
      fps: 8,
      // A notice clears the bar's row and writes the bar below it; an unchanged bar would not be drawn there again.
      forceRedraw: true,
    },
    cliProgress.Presets.shades_classic,
  );
  // Payload names must not be cli-progress's own ({eta}, {percentage}, …), which would win.
  const bar = multibar.create(0, 0, { done: 0, failed: 0, retrying: 0, perSecond: '0.0', remaining: '?' });
  let stopped = false;
  return {
    update(counts) {
      const { rate, etaSeconds } = rateAndEta(counts, now() - started);
      bar.setTotal(counts.total);
      bar.update(counts.done + counts.failed, {
        done: counts.done,
        failed: counts.failed,
        retrying: counts.retrying,
        perSecond: rate.toFixed(1),
        remaining: eta(etaSeconds),
      });
    },
    log(message) {
      if (stopped) return io.warn(message);
      // Lines the terminal would wrap itself are torn by the bar's redraw, which counts each as one row.
      const columns = (io.stderr as { columns?: number }).columns;
      const text = `${io.style.yellow('warning:')} ${printable(io.redact(message), MESSAGE_MAX)}`;
      multibar.log(`${columns && columns > 0 ? fitToColumns(text, columns, stringWidth).join('\n') : text}\n`);
    },
    stop() {
      // Once only: cli-progress draws its last frame again at each stop, a line up from where the
      // cursor is, which would overwrite the summary printed after the first.
      if (stopped) return;
      stopped = true;
      // A notice logged since the last frame (the first signal's, when what was in flight finishes
      // within a frame) is drawn now: cli-progress's stop draws the bar alone and drops it.
      multibar.update();
      multibar.stop();
    },
  };
}
