import { CHANNELS } from './addresses';
import { RESERVED_ATTRIBUTES } from './catalogue/reserved-attributes';
import { isSuppressed, isSuppressionAttribute, suppressionAttribute, suppressionWriteRefused } from './suppression';

describe('suppression attributes', () => {
  it('names one attribute per channel', () => {
    expect(CHANNELS.map(suppressionAttribute)).toEqual(['_suppressed_sms', '_suppressed_email', '_suppressed_rcs', '_suppressed_whatsapp']);
    expect(isSuppressionAttribute('_suppressed_sms')).toBe(true);
    expect(isSuppressionAttribute('_suppressed_fax')).toBe(true);
    expect(isSuppressionAttribute('_consent_sms')).toBe(false);
    expect(isSuppressionAttribute('suppressed_sms')).toBe(false);
  });

  it('reads only an own true as suppressed', () => {
    expect(isSuppressed({ _suppressed_sms: true }, 'sms')).toBe(true);
    expect(isSuppressed({ _suppressed_sms: true }, 'email')).toBe(false);
    for (const value of [null, undefined, false, 'true', 1, [true], { value: true }]) expect(isSuppressed({ _suppressed_sms: value }, 'sms')).toBe(false);
    expect(isSuppressed({}, 'sms')).toBe(false);
    expect(isSuppressed(JSON.parse('{"__proto__": {"_suppressed_sms": true}}'), 'sms')).toBe(false);
    expect(isSuppressed(Object.create({ _suppressed_sms: true }), 'sms')).toBe(false);
  });

  it('says why ingest refuses a write', () => {
    expect(suppressionWriteRefused('_suppressed_sms')).toBe('`_suppressed_sms` is kept by Meld messaging: use the suppressions admin API');
  });
});

describe('suppression attributes in the reserved catalogue', () => {
  it('reserves one boolean per channel, internal (only messaging writes it), single-valued, merging nobody', () => {
    for (const channel of CHANNELS) {
      expect(RESERVED_ATTRIBUTES.find((a) => a.uid === suppressionAttribute(channel))).toMatchObject({ type: 'boolean', multivalue: false, enabled: true, visible: true, internal: true, unique: false });
    }
  });
});
