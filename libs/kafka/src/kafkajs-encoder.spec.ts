import fc from 'fast-check';

// kafkajs's internal encoder, patched by patches/kafkajs+2.2.4.patch (applied at install by
// patch-package): buffers from Node's pool, varints written in place. These tests fail when
// the patch is not applied, and when the patched varints differ from Kafka's encoding.
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkajsEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkajsDecoder;
const Long = require('kafkajs/src/utils/long') as { fromString(s: string): unknown };
const ProduceRequest = require('kafkajs/src/protocol/requests/produce/v3/request') as (o: object) => { encode(): Promise<KafkajsEncoder> };
const RecordBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: KafkajsDecoder) => Promise<{ records: DecodedRecord[] }>;

interface KafkajsEncoder {
  buf: Buffer;
  buffer: Buffer;
  writeVarInt(value: number): KafkajsEncoder;
  writeUVarInt(value: number): KafkajsEncoder;
  writeVarLong(value: unknown): KafkajsEncoder;
  writeVarIntBytes(value: Buffer | string | null): KafkajsEncoder;
}
interface KafkajsDecoder {
  readString(): string;
  readInt16(): number;
  readInt32(): number;
  readVarInt(): number;
  readUVarInt(): number;
  readVarLong(): { toString(): string };
  readVarIntBytes(): Buffer | null;
}

interface DecodedRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
  offset: string;
  timestamp: string;
}

/** Kafka's varint (zigzag, then LEB128 in 7-bit groups), written out for reference. */
function zigzagLeb128(value: bigint): number[] {
  let n = value >= 0n ? value << 1n : (-value << 1n) - 1n;
  const bytes: number[] = [];
  while (n >= 0x80n) {
    bytes.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  bytes.push(Number(n));
  return bytes;
}

describe('kafkajs encoder (patched)', () => {
  it('is the patched one: a new encoder takes its buffer from the pool, not a backing store of its own', () => {
    expect(new Encoder().buf.buffer.byteLength).toBe(Buffer.poolSize);
  });

  it('writes int32 varints as Kafka does, and its decoder reads them back', () => {
    fc.assert(
      fc.property(fc.integer({ min: -2147483648, max: 2147483647 }), (n) => {
        const bytes = new Encoder().writeVarInt(n).buffer;
        expect([...bytes]).toEqual(zigzagLeb128(BigInt(n)));
        expect(new Decoder(bytes).readVarInt()).toBe(n);
      }),
    );
  });

  it('writes varlongs of numbers (the in-place path) and of Longs (the original one) alike', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
        const asLong = new Encoder().writeVarLong(Long.fromString(n.toString())).buffer;
        expect([...asLong]).toEqual(zigzagLeb128(n));
        expect(new Decoder(asLong).readVarLong().toString()).toBe(n.toString());
        if (n >= -(2n ** 31n) && n < 2n ** 31n) expect([...new Encoder().writeVarLong(Number(n)).buffer]).toEqual(zigzagLeb128(n));
      }),
    );
    for (const n of [0, 1, -1, 63, -64, 64, 2147483647, -2147483648, 2147483648, -2147483649, 1.5e12]) {
      expect([...new Encoder().writeVarLong(n).buffer]).toEqual(zigzagLeb128(BigInt(n)));
    }
  });

  it('keeps whole records intact across a growing buffer (sequences of varints and bytes)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer(), fc.uint8Array({ maxLength: 700 })), { maxLength: 30 }), (items) => {
        const encoder = new Encoder();
        for (const [n, bytes] of items) encoder.writeVarInt(n).writeVarIntBytes(Buffer.from(bytes));
        const decoder = new Decoder(encoder.buffer);
        for (const [n, bytes] of items) {
          expect(decoder.readVarInt()).toBe(n);
          expect([...(decoder.readVarIntBytes() ?? [])]).toEqual([...bytes]);
        }
      }),
    );
  });
});

describe('kafkajs produce request (on the patched encoder)', () => {
  const encodeProduce = async (messages: object[]) => {
    const request = ProduceRequest({ acks: -1, timeout: 30_000, compression: 0, topicData: [{ topic: 't', partitions: [{ partition: 3, messages }] }] });
    return (await request.encode()).buffer;
  };

  it('encodes what Kafka decodes: keys, values, headers, offsets and timestamps of every record', async () => {
    const messages = [
      { key: Buffer.from('p:ds:user-1'), value: Buffer.from('{"a":1}'), headers: { 'schema-version': '1' }, timestamp: 1_800_000_000_000 },
      { key: 'p:ds:user-2', value: null, headers: { h: ['x', 'y'] }, timestamp: 1_800_000_000_250 },
      { key: null, value: 'plain' },
    ];
    const decoder = new Decoder(await encodeProduce(messages));
    expect([decoder.readString(), decoder.readInt16(), decoder.readInt32()]).toEqual([null, -1, 30_000]);
    expect([decoder.readInt32(), decoder.readString(), decoder.readInt32(), decoder.readInt32()]).toEqual([1, 't', 1, 3]);
    decoder.readInt32(); // the record set's size
    const { records } = await RecordBatchDecoder(decoder);
    expect(records.map((r) => [r.key?.toString() ?? null, r.value?.toString() ?? null, r.offset])).toEqual([
      ['p:ds:user-1', '{"a":1}', '0'],
      ['p:ds:user-2', null, '1'],
      [null, 'plain', '2'],
    ]);
    expect(records[0].headers['schema-version'].toString()).toBe('1');
    expect((records[1].headers.h as unknown as Buffer[]).map(String)).toEqual(['x', 'y']);
    expect(records.slice(0, 2).map((r) => r.timestamp)).toEqual(['1800000000000', '1800000000250']);
  });
});
