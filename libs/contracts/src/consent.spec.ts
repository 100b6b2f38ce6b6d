import { defaultGeneralConfig } from './catalogue/project-defaults';
import { CONSENT_CHANNELS, PER_CHANNEL, consentOf, consentScopesOf, consentSources, effectiveConsent } from './consent';

describe('consent scopes (ADR 0347)', () => {
  const config = (blocks: Record<string, Record<string, unknown>>) => {
    const general: Record<string, unknown> = defaultGeneralConfig();
    for (const [block, fields] of Object.entries(blocks)) general[block] = { ...(general[block] as object), ...fields };
    return general;
  };

  describe('consentScopesOf', () => {
    it('reads per_channel from the defaults, a missing or partial config, and any value but all_channels', () => {
      expect(consentScopesOf(defaultGeneralConfig())).toEqual(PER_CHANNEL);
      for (const stored of [undefined, null, {}, [], 'x', { channelSms: null }, { channelSms: { autoCreateContactsOnOutbounds: true } }, { channelSms: { marketingOptOutScope: 'ALL_CHANNELS' } }]) {
        expect(consentScopesOf(stored)).toEqual(PER_CHANNEL);
      }
    });

    it('lists the channels whose block says all_channels, per field, in channel order; channelDefaults is no channel', () => {
      const scopes = consentScopesOf(
        config({
          channelWhatsapp: { marketingOptOutScope: 'all_channels' },
          channelSms: { marketingOptOutScope: 'all_channels', marketingOptInScope: 'per_channel' },
          channelEmail: { marketingOptInScope: 'all_channels' },
          channelDefaults: { marketingOptOutScope: 'all_channels', marketingOptInScope: 'all_channels' },
        }),
      );
      expect(scopes).toEqual({ optOutEverywhere: ['sms', 'whatsapp'], optInEverywhere: ['email'] });
    });

    it('never reads a scope from the prototype chain', () => {
      const stored = JSON.parse('{"__proto__": {"marketingOptOutScope": "all_channels"}, "channelSms": {"__proto__": {"marketingOptOutScope": "all_channels"}}}');
      expect(consentScopesOf(stored)).toEqual(PER_CHANNEL);
    });
  });

  describe('effectiveConsent', () => {
    const outEverywhere = { optOutEverywhere: ['sms'] as const, optInEverywhere: [] };
    const inEverywhere = { optOutEverywhere: [], optInEverywhere: ['email'] as const };

    it('per channel is consentOf exactly, for every channel and every stored value', () => {
      const values = ['opt-in', 'opt-out', 'yes', '', null, undefined];
      for (const sms of values) {
        for (const email of values) {
          const attributes = { _consent_sms: sms, _consent_email: email };
          for (const channel of CONSENT_CHANNELS) {
            expect(effectiveConsent(attributes, channel)).toBe(consentOf(attributes, channel));
            expect(effectiveConsent(attributes, channel, PER_CHANNEL)).toBe(consentOf(attributes, channel));
          }
        }
      }
    });

    it('an opt-out on a channel whose opt-out scope is all_channels opts out of every channel', () => {
      const attributes = { _consent_sms: 'opt-out', _consent_email: 'opt-in' };
      expect(CONSENT_CHANNELS.map((c) => effectiveConsent(attributes, c, outEverywhere))).toEqual(['opt-out', 'opt-out', 'opt-out', 'opt-out']);
      expect(CONSENT_CHANNELS.map((c) => effectiveConsent(attributes, c))).toEqual(['opt-out', 'opt-in', null, null]);
      // The scope is the recording channel's: an email opt-out does not reach sms through sms's scope.
      expect(effectiveConsent({ _consent_email: 'opt-out' }, 'sms', outEverywhere)).toBeNull();
      expect(effectiveConsent({ _consent_sms: 'opt-in' }, 'email', outEverywhere)).toBeNull();
    });

    it('an opt-in on a channel whose opt-in scope is all_channels counts everywhere, except where an opt-out reaches', () => {
      expect(CONSENT_CHANNELS.map((c) => effectiveConsent({ _consent_email: 'opt-in' }, c, inEverywhere))).toEqual(['opt-in', 'opt-in', 'opt-in', 'opt-in']);
      expect(effectiveConsent({ _consent_email: 'opt-in', _consent_sms: 'opt-out' }, 'sms', inEverywhere)).toBe('opt-out');
      expect(effectiveConsent({ _consent_email: 'opt-in', _consent_sms: 'opt-out' }, 'rcs', inEverywhere)).toBe('opt-in');
      // Both widened: the opt-out wins everywhere, on the opted-in channel too.
      const both = { optOutEverywhere: ['sms'] as const, optInEverywhere: ['email'] as const };
      expect(CONSENT_CHANNELS.map((c) => effectiveConsent({ _consent_email: 'opt-in', _consent_sms: 'opt-out' }, c, both))).toEqual(['opt-out', 'opt-out', 'opt-out', 'opt-out']);
    });

    it('reads no statement from a legacy value or the prototype chain', () => {
      expect(effectiveConsent({ _consent_sms: 'yes' }, 'email', outEverywhere)).toBeNull();
      expect(effectiveConsent(JSON.parse('{"__proto__": {"_consent_sms": "opt-out"}}'), 'email', outEverywhere)).toBeNull();
    });
  });

  it('consentSources names the channel first, then the channels reaching it', () => {
    expect(consentSources('email')).toEqual({ optOut: ['email'], optIn: ['email'] });
    expect(consentSources('email', { optOutEverywhere: ['sms', 'email'], optInEverywhere: ['whatsapp'] })).toEqual({ optOut: ['email', 'sms'], optIn: ['email', 'whatsapp'] });
  });
});
