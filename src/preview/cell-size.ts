// The pixel size of a terminal cell, asked of the terminal itself: sixel is
// drawn pixel for pixel, so an image `columns` wide needs the cell's width.
// XTWINOPS 16 (CSI 16 t) asks for it; Primary Device Attributes (CSI c), which
// every terminal answers, follows, so an answer to both, or to DA alone, ends
// the wait at once (terminals answer in order), and nothing answered later can
// end up typed into the shell. A terminal that answers nothing (a bare pty)
// costs the timeout, and the usual 10 × 20 is assumed.
import type { Readable, Writable } from 'node:stream';

export interface CellPixels {
  width: number;
  height: number;
}

type TerminalInput = Readable & { isTTY?: boolean; isRaw?: boolean; setRawMode?: (raw: boolean) => unknown };

/** Longest wait for the terminal's answer. */
export const CELL_QUERY_TIMEOUT_MS = 200;

export function queryCellPixels(stdin: TerminalInput, stdout: Writable & { isTTY?: boolean }, timeoutMs = CELL_QUERY_TIMEOUT_MS): Promise<CellPixels | undefined> {
  if (!stdin.isTTY || !stdout.isTTY || typeof stdin.setRawMode !== 'function') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let answer = '';
    const wasRaw = Boolean(stdin.isRaw);
    const finish = (cell: CellPixels | undefined) => {
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.setRawMode!(wasRaw);
      stdin.pause();
      resolve(cell);
    };
    /** The cell size in what has come so far, if the terminal sent one that makes sense. */
    const size = (): CellPixels | undefined => {
      const match = /\x1b\[6;(\d+);(\d+)t/.exec(answer);
      if (!match) return undefined;
      const [height, width] = [Number(match[1]), Number(match[2])];
      return width > 0 && width <= 1000 && height > 0 && height <= 1000 ? { width, height } : undefined;
    };
    // Only the answer to DA, which comes last, ends the wait: nothing of ours is left unread.
    const onData = (chunk: Buffer | string) => {
      answer += typeof chunk === 'string' ? chunk : chunk.toString('latin1');
      if (/\x1b\[\?[\d;]*c/.test(answer)) finish(size());
    };
    const timer = setTimeout(() => finish(size()), timeoutMs);
    stdin.setRawMode!(true);
    stdin.on('data', onData);
    stdin.resume();
    stdout.write('\x1b[16t\x1b[c');
  });
}
