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
  /** A message that must not tear the bar (a failed row, a pause for 429). */
  log(message: string): void;
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
  if (io.quiet) {
    return { update() {}, log: (message) => io.warn(message), stop() {} };
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
    log: (message) => io.warn(message),
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

async function createBar(io: Terminal, noun: string, now: () => number, started: number): Promise<Progress> {
  const [{ default: cliProgress }, { default: stringWidth }] = await Promise.all([import('cli-progress'), import('string-width')]);
  const multibar = new cliProgress.MultiBar(
    {
      // Plain text: cli-progress cuts the line at the terminal width counting colour codes as characters.
      format: `{bar} {value}/{total} ${noun} | {done} done, {failed} failed, {retrying} retrying | {perSecond}/s | ETA {remaining}`,
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
