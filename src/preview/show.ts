// Putting images on the terminal: the flags of `aerial view` checked, the
// protocol chosen (forced, or detected from the environment), the size worked
// out from the terminal, and each image written to stdout. `generate --preview`
// and `generate-async --listen --preview` show the image they saved the same way.
import { UsageError } from '../lifecycle/errors.js';
import type { Terminal } from '../terminal/terminal.js';
import { parseWholeNumber } from '../input/flags.js';
import { printable } from '../text/printable.js';
import { nearest } from '../text/suggest.js';
import { queryCellPixels, type CellPixels } from './cell-size.js';
import { colorDepth, detectGraphics, PROTOCOLS, type Protocol, type TerminalGraphics } from './terminal.js';

/** Widest image in columns --width takes. */
export const MAX_PREVIEW_COLUMNS = 1000;
/** Columns when neither --width nor the terminal says. */
const DEFAULT_COLUMNS = 80;

export interface PreviewFlags {
  protocol?: string;
  width?: string;
}

export interface PreviewPlan {
  graphics: TerminalGraphics;
  /** A cell's size in pixels, when the terminal said (asked only for sixel). */
  cell?: CellPixels;
  columns: number;
  /** Rows the image may take: set when the terminal's height is what limits it. */
  maxRows?: number;
}

export function parseProtocol(raw: string | undefined): Protocol | 'auto' {
  if (raw === undefined) return 'auto';
  const value = raw.trim().toLowerCase();
  const allowed = ['auto', ...PROTOCOLS] as const;
  if ((allowed as readonly string[]).includes(value)) return value as Protocol | 'auto';
  const suggestion = nearest(value, allowed);
  throw new UsageError(`--protocol must be one of ${allowed.join(', ')}; got '${raw}'${suggestion ? ` (did you mean ${suggestion}?)` : ''}`);
}

/**
 * Checks the flags and decides how images will be shown. Without a terminal
 * there is nobody to show them to: only a protocol given by name writes the
 * escape sequences anyway (into a file, through ssh, for a test).
 */
export async function planPreview(io: Terminal, flags: PreviewFlags): Promise<PreviewPlan> {
  const protocol = parseProtocol(flags.protocol);
  const width = parseWholeNumber(flags.width, '--width', 1, MAX_PREVIEW_COLUMNS);
  if (!io.stdoutIsTTY && (flags.protocol === undefined || protocol === 'auto')) {
    throw new UsageError(`stdout is not a terminal, so there is nothing to show the image on; pass --protocol ${PROTOCOLS.join('|')} to write its escape sequences anyway`);
  }
  const graphics: TerminalGraphics =
    protocol === 'auto'
      ? detectGraphics(io.env)
      : {
          protocol,
          colors: colorDepth(io.env),
          // Inside tmux, a protocol asked for by name still has to get past tmux to the terminal.
          passthrough: protocol !== 'blocks' && io.stdoutIsTTY && io.env.TMUX ? 'tmux' : undefined,
          reason: `--protocol ${protocol}`,
        };
  // Sixel is drawn pixel for pixel: the terminal is asked how big its cells are (through tmux it cannot be).
  const cell = graphics.protocol === 'sixel' && !graphics.passthrough ? await queryCellPixels(io.stdin, io.stdout) : undefined;
  const terminal = io.stdout as { columns?: number; rows?: number };
  if (width !== undefined) return { graphics, cell, columns: width };
  const columns = io.stdoutIsTTY && terminal.columns ? terminal.columns : DEFAULT_COLUMNS;
  // Room for the caption above and the prompt below.
  const maxRows = io.stdoutIsTTY && terminal.rows ? Math.max(1, terminal.rows - 2) : undefined;
  return { graphics, cell, columns, maxRows };
}

/** Writes one image to stdout as planned; `caption` (a file name or id) goes above it when given. */
export async function showImage(io: Terminal, plan: PreviewPlan, source: Buffer | string, name: string, caption: boolean): Promise<void> {
  const { renderPreview } = await import('./picture.js');
  const started = process.hrtime.bigint();
  const preview = await renderPreview(source, {
    protocol: plan.graphics.protocol,
    colors: plan.graphics.colors,
    passthrough: plan.graphics.passthrough,
    columns: plan.columns,
    maxRows: plan.maxRows,
    cell: plan.cell,
    name,
  });
  const cell = plan.cell ? `, cells of ${plan.cell.width}×${plan.cell.height} px as the terminal said` : '';
  io.debug(`preview: ${printable(name, 120)} as ${plan.graphics.protocol} (${plan.graphics.reason}), ${preview.columns} columns${cell}, ${preview.width}×${preview.height} px, ${Math.round(Number(process.hrtime.bigint() - started) / 1e6)}ms`);
  if (caption) io.stdout.write(`${io.style.bold(printable(name, 200))}\n`);
  io.stdout.write(preview.text);
}

/**
 * `generate --preview`: the saved image, shown on a terminal only, never with
 * --json (a script reads stdout). A preview that fails is a warning: the image
 * is saved and paid for, which is what the command was for.
 */
export async function previewSavedImage(io: Terminal, file: string): Promise<void> {
  if (!io.stdoutIsTTY || io.json) return;
  try {
    await showImage(io, await planPreview(io, {}), file, file, false);
  } catch (error) {
    io.warn(`could not show a preview of ${file}: ${(error as Error).message}`);
  }
}
