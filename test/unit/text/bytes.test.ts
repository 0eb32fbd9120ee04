// Every size the CLI prints is labelled in the unit it was divided by.
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../../src/text/bytes.js';

describe('formatBytes', () => {
  it('says KiB and MiB for powers of 1024, never KB or MB', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1024)).toBe('1 KiB');
    expect(formatBytes(333_000)).toBe('325 KiB');
    expect(formatBytes(1024 * 1024)).toBe('1 MiB');
    expect(formatBytes(1.5 * 1024 * 1024)).toBe('1.5 MiB');
    expect(formatBytes(256 * 1024 * 1024)).toBe('256 MiB');
  });
});
