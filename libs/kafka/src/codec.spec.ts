import { z } from 'zod';
import { decodeValue, encodeValue, schemaVersionOf } from './codec';

describe('codec', () => {
  const schema = z.object({ id: z.string(), n: z.number().int() });

  it('round-trips JSON through the schema', () => {
    const decoded = decodeValue(Buffer.from(encodeValue({ id: 'a', n: 1 })), schema);
    expect(decoded).toEqual({ ok: true, value: { id: 'a', n: 1 } });
  });

  it('names a JSON syntax error', () => {
    const decoded = decodeValue(Buffer.from('{nope'), schema);
    expect(decoded.ok).toBe(false);
    expect(!decoded.ok && decoded.error).toMatch(/^value is not JSON/);
  });

  it('names the failing fields of a schema mismatch', () => {
    const decoded = decodeValue(Buffer.from('{"id":1,"n":1.5}'), schema);
    expect(!decoded.ok && decoded.error).toMatch(/id: .*; n: /);
  });

  it('hands a null value (tombstone) to the schema as null', () => {
    expect(decodeValue(null, z.null()).ok).toBe(true);
    expect(decodeValue(null, schema).ok).toBe(false);
  });

  it('refuses to encode undefined', () => {
    expect(() => encodeValue(undefined)).toThrow(TypeError);
  });

  it('reads the schema-version header', () => {
    expect(schemaVersionOf({ 'schema-version': Buffer.from('3') })).toBe(3);
    expect(schemaVersionOf({ 'schema-version': 'x' })).toBeUndefined();
    expect(schemaVersionOf(undefined)).toBeUndefined();
  });
});
