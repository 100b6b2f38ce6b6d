import { RESERVED_ATTRIBUTES } from '@meld/contracts';
import { type AttributeRule, valueError } from './attribute-rules';

describe('consent attributes', () => {
  const consent = RESERVED_ATTRIBUTES.filter((a) => a.uid.startsWith('_consent_')).map((a): AttributeRule => ({ ...a, reserved: true }));

  it('covers the four channels', () => {
    expect(consent.map((r) => r.uid).sort()).toEqual(['_consent_email', '_consent_rcs', '_consent_sms', '_consent_whatsapp']);
  });

  it.each(consent)('$uid accepts opt-in and opt-out only', (rule) => {
    expect(valueError(rule, 'opt-in')).toBeNull();
    expect(valueError(rule, 'opt-out')).toBeNull();
    for (const bad of ['yes', 'OPT-IN', 'opt_in', ' opt-out', '', true, 1, ['opt-in']]) expect(valueError(rule, bad)).toBe("must be 'opt-in', 'opt-out' or null");
  });

  it('leaves other string attributes alone', () => {
    const first = RESERVED_ATTRIBUTES.find((a) => a.uid === '_first_name')!;
    expect(valueError({ ...first, reserved: true }, 'yes')).toBeNull();
  });
});
