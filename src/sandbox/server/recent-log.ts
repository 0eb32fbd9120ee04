// What the sandbox did, kept for tests to read back (GET /__sandbox/requests,
// /__sandbox/webhooks): the newest entries only, so a long-running sandbox
// stays small, each handed out as a copy.

/** Oldest entries are forgotten beyond this. */
const MAX_ENTRIES = 10_000;

export class RecentLog<T extends object> {
  private readonly list: T[] = [];

  /** Keeps `entry` (as it is when read: a record still being filled in may be logged at once). */
  push(entry: T): void {
    this.list.push(entry);
    if (this.list.length > MAX_ENTRIES) this.list.splice(0, this.list.length - MAX_ENTRIES);
  }

  entries(): T[] {
    return this.list.map((entry) => ({ ...entry }));
  }

  /** Forgets every entry, and says how many there were. */
  clear(): number {
    const count = this.list.length;
    this.list.length = 0;
    return count;
  }
}
