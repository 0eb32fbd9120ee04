// Tests that only a system tool can drive (Chromium, tmux, exiftool, …) ask
// for it here. Where the tool is missing the test is skipped, and the run's
// last lines name each missing tool with its install command (see
// test/global-setup.ts). CI sets AERIAL_TEST_REQUIRE_TOOLS=1: there a missing
// tool fails the file that needs it, so nothing goes untested unnoticed.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';

export interface SystemTool {
  /** What the tool is called, for the summary: `chromium`. */
  name: string;
  /** How to install it: `apt-get install chromium`. */
  install: string;
  /** True when it can be run here. */
  present: () => boolean;
}

/** A command that runs when asked for its version (or some other harmless argument). */
export function command(name: string, args: string[], install: string): SystemTool {
  return { name, install, present: () => spawnSync(name, args, { stdio: 'ignore' }).status === 0 };
}

/** A program at a fixed path. */
export function program(name: string, path: string, install: string): SystemTool {
  return { name, install, present: () => existsSync(path) };
}

const known = new Map<string, boolean>();

/**
 * Whether the tool is here. A missing one is noted for the run's summary, or,
 * where AERIAL_TEST_REQUIRE_TOOLS=1, is an error.
 */
export function available(tool: SystemTool): boolean {
  let present = known.get(tool.name);
  if (present === undefined) {
    present = tool.present();
    known.set(tool.name, present);
    if (!present) {
      if (process.env.AERIAL_TEST_REQUIRE_TOOLS === '1') {
        throw new Error(`${tool.name} is required for these tests (AERIAL_TEST_REQUIRE_TOOLS=1) but is not installed: ${tool.install}`);
      }
      const notes = process.env.AERIAL_TEST_MISSING_TOOLS;
      if (notes) appendFileSync(notes, `${JSON.stringify({ name: tool.name, install: tool.install })}\n`);
    }
  }
  return present;
}
