/** A value and how many (contacts, events) hold it. */
export interface ValueBucket<V> {
  value: V;
  count: number;
}

/**
 * Terms buckets through the caller's mask (`contactDataMask`, ADR 0121): every read of
 * contact-derived values applies it, aggregates included. Masking can make two values one (two
 * emails of a domain, two numbers sharing their ends), whose counts then add up, most frequent
 * first again; equal counts keep the order the buckets came in (the query's, by value), a merged
 * bucket where its first value was.
 */
export function maskedBuckets<V>(buckets: ReadonlyArray<ValueBucket<V>>, mask: <T>(value: T) => T): Array<ValueBucket<V>> {
  const merged = new Map<string, ValueBucket<V>>();
  for (const bucket of buckets) {
    const value = mask(bucket.value);
    const key = JSON.stringify(value) ?? 'null';
    const into = merged.get(key);
    if (into) into.count += bucket.count;
    else merged.set(key, { value, count: bucket.count });
  }
  return [...merged.values()].sort((a, b) => b.count - a.count);
}
