import { expect } from 'vitest';
import { UsageError } from '../../src/lifecycle/errors.js';

/** The message of the UsageError `fn` throws; fails the test when it throws nothing or something else. */
export function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error('expected a UsageError');
}
