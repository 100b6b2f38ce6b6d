import { KeyNormaliser, localeCountry, normaliseKeyValue, DEFAULT_JUNK_VALUES } from './merge-keys';

const junk = new Set(DEFAULT_JUNK_VALUES);

describe('merge keys', () => {
  it('trims and lower-cases emails', () => {
    expect(normaliseKeyValue('_email', '  Jane.Doe@Example.COM ', 'US', junk)).toBe('jane.doe@example.com');
  });

  it('keys an email in Unicode NFC: a decomposed accent merges with the composed one', () => {
    expect(normaliseKeyValue('_email', 'JOSE\u0301@example.com', 'US', junk)).toBe('jos\u00e9@example.com');
    expect(normaliseKeyValue('_email', 'jos\u00e9@example.com', 'US', junk)).toBe('jos\u00e9@example.com');
  });

  it('normalises phones to E.164 with the locale country as default', () => {
    expect(normaliseKeyValue('_phone_mobile', '06 12 34 56 78', localeCountry('fr_FR'), junk)).toBe('+33612345678');
    expect(normaliseKeyValue('_phone_mobile', '+33 6 12 34 56 78', localeCountry('en_US'), junk)).toBe('+33612345678');
    expect(normaliseKeyValue('_phone_mobile', '(201) 555-0123', localeCountry('en_US'), junk)).toBe('+12015550123');
    expect(normaliseKeyValue('_phone_mobile', 'not a phone', 'FR', junk)).toBeNull();
  });

  it.each(['null', 'undefined', 'anonymous', 'Anonymous', '0', '-1', '', '   ', '[object Object]', 'n/a', 'N/A'])('never merges on junk %p', (value) => {
    expect(normaliseKeyValue('_user_id', value, 'US', junk)).toBeNull();
    expect(normaliseKeyValue('_email', value, 'US', junk)).toBeNull();
  });

  it('treats numbers as their text and ignores non-scalars', () => {
    expect(normaliseKeyValue('loyalty_id', 42, 'US', junk)).toBe('42');
    expect(normaliseKeyValue('loyalty_id', 0, 'US', junk)).toBeNull();
    expect(normaliseKeyValue('loyalty_id', ['a'], 'US', junk)).toBeNull();
    expect(normaliseKeyValue('loyalty_id', true, 'US', junk)).toBeNull();
  });

  it('uses a configured junk list', () => {
    const n = new KeyNormaliser({ mergingAttributes: ['_email'], locale: 'en_US', junkValues: ['guest'] });
    expect(n.keysOf('guest', { _email: 'null' })).toEqual([]);
    expect(n.keysOf('u1', { _email: 'A@B.C' })).toEqual([
      { attribute: '_user_id', value: 'u1' },
      { attribute: '_email', value: 'a@b.c' },
    ]);
  });

  it('reads the country of a locale', () => {
    expect(localeCountry('fr_FR')).toBe('FR');
    expect(localeCountry('en-gb')).toBe('GB');
    expect(localeCountry('en')).toBeUndefined();
  });
});
