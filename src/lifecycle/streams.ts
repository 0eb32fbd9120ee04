// Output streams and the end of a run: what every layer that writes to
// standard output or a pipe must wait for before the process may end.
import type { Writable } from 'node:stream';

/**
 * Resolves once `stream` has handed everything written to it to the operating
 * system (or has failed). A pipe to a slow reader holds data in the process
 * until the reader takes it: exiting before then loses it.
 */
export function drained(stream: Writable): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  // Writes complete in order: this one's callback runs once every earlier one is done.
  return new Promise((resolve) => stream.write('', () => resolve()));
}
