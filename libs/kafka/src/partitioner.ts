import { randomInt } from 'node:crypto';
import type { ICustomPartitioner } from 'kafkajs';

const M = 0x5bd1e995;
const SEED = 0x9747b28c;

/**
 * The Java client's murmur2 (what kafkajs's DefaultPartitioner hashes keys with), on 32-bit
 * integers. kafkajs computes it with 64-bit Long objects: ~10% of ingest's CPU per event
 * went there. Every step only needs the low 32 bits, which Math.imul and the bit operators
 * keep, so the result is the same signed 32-bit hash (partitioner.spec.ts compares them).
 */
export function murmur2(data: Uint8Array, length = data.length): number {
  let h = SEED ^ length;
  const end = length & ~3;
  for (let i = 0; i < end; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  switch (length & 3) {
    case 3:
      h ^= data[end + 2] << 16;
    // falls through
    case 2:
      h ^= data[end + 1] << 8;
    // falls through
    case 1:
      h ^= data[end];
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

/** Keys are encoded into this buffer rather than a new one per message (keys are short). */
const scratch = Buffer.allocUnsafe(1024);

function hashKey(key: Buffer | string): number {
  if (Buffer.isBuffer(key)) return murmur2(key);
  const text = String(key);
  if (text.length * 3 > scratch.length) return murmur2(Buffer.from(text));
  return murmur2(scratch, scratch.write(text, 0, 'utf8'));
}

/**
 * kafkajs's DefaultPartitioner with the fast hash: a set partition wins, a key picks
 * `murmur2(key) & 0x7fffffff % partitions` (the Java client's choice, so a key lands where
 * it always did), a message without either goes round-robin over partitions with a leader.
 */
export const keyPartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) return (hashKey(message.key) & 0x7fffffff) % partitionMetadata.length;
    const next = (counters.get(topic) ?? randomInt(2 ** 31)) + 1;
    counters.set(topic, next);
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    if (available.length > 0) return available[(next & 0x7fffffff) % available.length].partitionId;
    return (next & 0x7fffffff) % partitionMetadata.length;
  };
};
