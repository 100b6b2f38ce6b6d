/**
 * A small LRU with a time-to-live per entry, on Map insertion order. The gateway caches
 * tokens and projects in process so the hot path touches no database; the TTL bounds how
 * stale an entry can be when an invalidation message is lost.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry); // most recently used last
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }

  /** Removes every entry whose value matches (e.g. a token by id when the key is its hash). */
  deleteWhere(match: (value: V, key: K) => boolean): number {
    let removed = 0;
    for (const [key, entry] of this.entries) {
      if (match(entry.value, key)) {
        this.entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
