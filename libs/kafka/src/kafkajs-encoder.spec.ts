import fc from 'fast-check';

// kafkajs's internal encoder, patched by patches/kafkajs+2.2.4.patch (applied at install by
// patch-package): buffers from Node's pool, varints written in place. These tests fail when
// the patch is not applied, and when the patched varints differ from Kafka's encoding.
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkajsEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkajsDecoder;
const Long = require('kafkajs/src/utils/long') as { fromString(s: string): unknown };

interface KafkajsEncoder {
  buf: Buffer;
  buffer: Buffer;
  writeVarInt(value: number): KafkajsEncoder;
  writeUVarInt(value: number): KafkajsEncoder;
  writeVarLong(value: unknown): KafkajsEncoder;
  writeVarIntBytes(value: Buffer | string | null): KafkajsEncoder;
}
interface KafkajsDecoder {
  readVarInt(): number;
  readUVarInt(): number;
  readVarLong(): { toString(): string };
  readVarIntBytes(): Buffer | null;
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
