import fc from 'fast-check';
import { CONTACT_STATE_MAX_BYTES, stateBytes, type SourceAttributeValue } from './source-contacts';

describe('stateBytes (ADR 0346)', () => {
  const scalar = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
  const value: fc.Arbitrary<SourceAttributeValue> = fc.oneof(scalar, fc.array(scalar, { maxLength: 5 }));

  it('is the UTF-8 size of the attributes as JSON, what the contact message carries', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 20 }), value, { maxKeys: 20 }), (attributes) => {
        expect(stateBytes(attributes)).toBe(Buffer.byteLength(JSON.stringify(attributes)));
      }),
    );
  });

  it('leaves a full contact message well under what Kafka takes in a record batch (1,048,588 bytes)', () => {
    // The state, as many cleared names again (sent as null), and the envelope.
    expect(2 * CONTACT_STATE_MAX_BYTES + 4096).toBeLessThan(1048588);
  });
});
