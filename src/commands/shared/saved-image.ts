// What generate and generate-async (with --listen) share about the image they
// save: its default name, and whether to show it once saved.
import type { Context } from '../../cli/context.js';

export function defaultOutputName(lat: number, lng: number, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `aerial-${lat}_${lng}-${stamp}.jpg`;
}

/** Whether to show the saved image: the flag, else the config's defaults.preview. */
export function wantsPreview(ctx: Context, flag: boolean | undefined): boolean {
  return flag ?? ctx.settings().preview.value;
}
