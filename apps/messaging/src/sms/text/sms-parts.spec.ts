import fc from 'fast-check';
import { SegmentedMessage } from 'sms-segments-calculator';
import { smsParts } from './sms-parts';

const a = (n: number) => 'a'.repeat(n);

describe('smsParts: encoding and parts (system design §4)', () => {
  it.each([
    ['1 GSM-7 character', 'a', 'GSM-7', 1],
    ['160 GSM-7 characters: one part', a(160), 'GSM-7', 1],
    ['161: two parts of at most 153', a(161), 'GSM-7', 2],
    ['306 = 2 × 153', a(306), 'GSM-7', 2],
    ['307', a(307), 'GSM-7', 3],
    ['459 = 3 × 153', a(459), 'GSM-7', 3],
    ['accented letters of the GSM basic table stay GSM-7', 'é'.repeat(160), 'GSM-7', 1],
    ['80 extension characters count 2 each: 160 septets', '€'.repeat(80), 'GSM-7', 1],
    ['81 extension characters: 162 septets', '€'.repeat(81), 'GSM-7', 2],
    ['every extension character counts 2: 8 × 9 of them + 16 = 160 septets', '^{}\\[~]|€'.repeat(8) + a(16), 'GSM-7', 1],
    ['… and one more septet makes 2 parts', '^{}\\[~]|€'.repeat(8) + a(17), 'GSM-7', 2],
    ['159 + an extension character = 161 septets', a(159) + '€', 'GSM-7', 2],
    ['151 + € + 153 = 306 septets fills 2 parts exactly', a(151) + '€' + a(153), 'GSM-7', 2],
    ['152 + € + 152 = 306 septets needs 3: the pair cannot straddle, a septet of part 1 stays empty', a(152) + '€' + a(152), 'GSM-7', 3],
    ['an escape pair is not split: 153 + € moves € to part 2', a(153) + '€' + a(152), 'GSM-7', 3],
    ['70 UCS-2 characters: one part', 'ж'.repeat(70), 'UCS-2', 1],
    ['71: two parts of at most 67', 'ж'.repeat(71), 'UCS-2', 2],
    ['134 = 2 × 67', 'ж'.repeat(134), 'UCS-2', 2],
    ['135', 'ж'.repeat(135), 'UCS-2', 3],
    ['one non-GSM character makes the whole text UCS-2', a(69) + 'ж', 'UCS-2', 1],
    ['an emoji is 2 code units: 35 fit one part', '😀'.repeat(35), 'UCS-2', 1],
    ['36 emoji = 72 code units', '😀'.repeat(36), 'UCS-2', 2],
    ['a surrogate pair is not split: 66 + emoji + 67 needs 3 parts', 'ж'.repeat(66) + '😀' + 'ж'.repeat(67), 'UCS-2', 3],
    ['65 + emoji + 67 fills 2 parts exactly', 'ж'.repeat(65) + '😀' + 'ж'.repeat(67), 'UCS-2', 2],
  ])('%s', (_name, text, encoding, parts) => {
    expect(smsParts(text)).toEqual({ encoding, messagesCount: parts });
  });

  it('GSM-7 parts follow ceil(septets / 153) above 160, for any length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 0, max: 50 }), (plain, ext) => {
        const septets = plain + 2 * ext;
        // Extension characters last, each pair whole: the worst case moves at most one pair per part boundary.
        const { encoding, messagesCount } = smsParts(a(plain) + '€'.repeat(ext));
        expect(encoding).toBe('GSM-7');
        if (septets <= 160) expect(messagesCount).toBe(1);
        else expect(messagesCount).toBeGreaterThanOrEqual(Math.ceil(septets / 153));
        if (ext === 0 && septets > 160) expect(messagesCount).toBe(Math.ceil(septets / 153));
      }),
    );
  });

  it('the plain-ASCII shortcut agrees with the segment calculator on any text (ADR 0278)', () => {
    // Lengths around the boundaries, ASCII in and out of the one-septet set, extension, non-GSM and astral characters.
    const char = fc.constantFrom('a', 'Z', '0', ' ', '\n', '\r', '@', '$', '_', '?', '/', ':', '`', '~', '^', '{', '\\', '€', 'é', 'ж', '😀', '\t');
    const text = fc.oneof(fc.string({ unit: char, maxLength: 400 }), fc.tuple(fc.integer({ min: 150, max: 320 }), char).map(([n, c]) => 'a'.repeat(n) + c));
    fc.assert(
      fc.property(text, (t) => {
        const reference = new SegmentedMessage(t, 'auto');
        expect(smsParts(t)).toEqual({ encoding: reference.encodingName === 'GSM-7' ? 'GSM-7' : 'UCS-2', messagesCount: reference.segmentsCount });
      }),
      { numRuns: 500 },
    );
  });
});
