/**
 * Splits a partition's batch into per-key lanes. Messages of one key keep their offset
 * order inside a lane; lanes are independent, so they can run concurrently (PostHog's
 * ingestion consumer does the same with its per-distinct-id queues).
 *
 * A message without a key has no ordering promise beyond its partition, and Meld keys
 * every topic, so a keyless message gets a lane of its own rather than serialising all
 * keyless messages behind each other.
 *
 * Pure: takes the keys in offset order, returns lanes of indices into that list, lanes in
 * order of their first message.
 */
export function groupByKey(keys: ReadonlyArray<string | null>): number[][] {
  const lanes: number[][] = [];
  const byKey = new Map<string, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === null) {
      lanes.push([i]);
      continue;
    }
    const lane = byKey.get(key);
    if (lane) lane.push(i);
    else {
      const created = [i];
      byKey.set(key, created);
      lanes.push(created);
    }
  }
  return lanes;
}
