// What generate, generate-async (with --listen) and get share about the image
// they save: where --output sends it, its default name, and whether to show it
// once saved.
import type { Context } from '../../cli/context.js';
import type { PreparedTarget, TargetRules } from '../../operations/save-image.js';

/**
 * --output made ready before anything is sent: `-` is standard output; a path
 * is checked under `rules` and, for a device or FIFO, opened (a FIFO waits
 * here for its reader, saying so, until Ctrl-C), then let go of however the
 * run ends.
 */
export async function prepareOutput(ctx: Context, output: string, rules: TargetRules): Promise<PreparedTarget> {
  const { prepareImageTarget, streamTarget } = await import('../../operations/save-image.js');
  if (output === '-') return streamTarget(ctx.io.stdout, 'standard output');
  const target = await prepareImageTarget(output, rules, { signal: ctx.signal, onWait: (message) => ctx.io.info(message) });
  ctx.onCleanup(() => target.close());
  return target;
}

export function defaultOutputName(lat: number, lng: number, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `aerial-${lat}_${lng}-${stamp}.jpg`;
}

/** Whether to show the saved image: the flag, else the config's defaults.preview. */
export function wantsPreview(ctx: Context, flag: boolean | undefined): boolean {
  return flag ?? ctx.settings().preview.value;
}
