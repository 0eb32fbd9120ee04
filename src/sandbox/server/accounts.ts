// Sandbox accounts: an API key, a key id that is safe to log, and a credit
// balance. Keys are sandbox-only secrets; the request log shows key ids.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Credits a new account starts with unless told otherwise. */
export const DEFAULT_CREDITS = 1000;
export const MAX_CREDITS = 1_000_000_000;

export interface StoredAccount {
  id: string;
  /** Derived from the key; what logs and listings show instead of the key. */
  keyId: string;
  key: string;
  credits: number;
  createdAt: string;
}

export function newApiKey(): string {
  return `sbx_${randomBytes(16).toString('hex')}`;
}

export function keyIdOf(key: string): string {
  return `key_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/** Why a key cannot be used, or undefined when it can: 8 to 256 visible ASCII characters. */
export function keyProblem(key: string): string | undefined {
  if (key.length < 8 || key.length > 256) return 'must be 8 to 256 characters long';
  if (!/^[\x21-\x7e]+$/.test(key)) return 'must be visible ASCII characters without spaces';
  return undefined;
}

/** Why a credit amount cannot be used, or undefined. */
export function creditsProblem(credits: unknown): string | undefined {
  if (typeof credits !== 'number' || !Number.isSafeInteger(credits) || credits < 0 || credits > MAX_CREDITS) {
    return `must be a whole number from 0 to ${MAX_CREDITS}`;
  }
  return undefined;
}

/** Finds the account a key belongs to, comparing digests so timing says nothing about the key. */
export function findAccountByKey(accounts: readonly StoredAccount[], key: string): StoredAccount | undefined {
  const wanted = createHash('sha256').update(key).digest();
  return accounts.find((account) => timingSafeEqual(createHash('sha256').update(account.key).digest(), wanted));
}

export function newAccount(key: string, credits: number, now: number): StoredAccount {
  return {
    id: `acct_${randomBytes(6).toString('hex')}`,
    keyId: keyIdOf(key),
    key,
    credits,
    createdAt: new Date(now).toISOString(),
  };
}
