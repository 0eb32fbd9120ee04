// Parsing of the numeric and duration flags batch and export share.
import { UsageError } from '../api/errors.js';

export function parseCount(raw: string | undefined, flag: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const text = String(raw).trim();
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}; got '${raw}'`);
  }
  return value;
}
