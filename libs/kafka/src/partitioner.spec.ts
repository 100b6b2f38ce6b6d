import fc from 'fast-check';
import type { PartitionerArgs } from 'kafkajs';
import { keyPartitioner, murmur2 } from './partitioner';

// kafkajs's own hash (64-bit Long arithmetic), the reference the fast one must equal.
const kafkajsMurmur2: (key: Buffer | string) => number = require('kafkajs/src/producer/partitioners/default/murmur2');
const kafkajsDefault: () => (args: PartitionerArgs) => number = require('kafkajs/src/producer/partitioners/default');

const metadata = (n: number) => Array.from({ length: n }, (_, i) => ({ partitionId: i, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));

describe('key partitioner', () => {
  it('hashes like kafkajs (the Java client) for any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => murmur2(bytes) === kafkajsMurmur2(Buffer.from(bytes))), { numRuns: 2000 });
  });

  it('puts every key, long and non-ASCII ones included, on the partition kafkajs picks', () => {
    const ours = keyPartitioner();
    const theirs = kafkajsDefault();
    const key = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ minLength: 300, maxLength: 600 }));
    fc.assert(
      fc.property(key, fc.integer({ min: 1, max: 64 }), (k, n) => {
        const args = { topic: 't', partitionMetadata: metadata(n), message: { key: k, value: null } };
        return ours(args) === theirs(args);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps a set partition and spreads keyless messages over partitions with a leader', () => {
    const p = keyPartitioner();
    expect(p({ topic: 't', partitionMetadata: metadata(4), message: { key: 'k', value: null, partition: 3 } })).toBe(3);
    const withLeader = metadata(4).map((m) => (m.partitionId === 1 ? { ...m, leader: -1 } : m));
    const seen = new Set(Array.from({ length: 9 }, () => p({ topic: 't', partitionMetadata: withLeader, message: { value: null } })));
    expect([...seen].sort()).toEqual([0, 2, 3]);
  });
});
