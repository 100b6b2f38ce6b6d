import { isValidPhoneNumber, parsePhoneNumberWithError } from 'libphonenumber-js/max';

const { contact, event, sourcesOf, EVENT_TYPES, ATTRIBUTES } = require('./generator');

describe('meld seed: the generated data', () => {
  const N = 5000;
  const contacts = Array.from({ length: N }, (_, i) => contact(i, 0, true));

  it('is the same on every call (a resumed seed sends what an uninterrupted one would)', () => {
    expect(contact(42, 1, false)).toEqual(contact(42, 1, false));
    expect(event(7, 1000, 2, 1_700_000_000_000)).toEqual(event(7, 1000, 2, 1_700_000_000_000));
  });

  it('mobiles are valid mobile numbers of their country, several countries, UK first', () => {
    const phones = contacts.filter((c) => c._phone_mobile);
    expect(phones.length / N).toBeGreaterThan(0.88);
    expect(phones.length / N).toBeLessThan(0.96);
    for (const c of phones) {
      expect([c._phone_mobile, isValidPhoneNumber(c._phone_mobile)]).toEqual([c._phone_mobile, true]);
      const parsed = parsePhoneNumberWithError(c._phone_mobile);
      expect([c._phone_mobile, parsed.country]).toEqual([c._phone_mobile, c._country]);
      expect(['MOBILE', 'FIXED_LINE_OR_MOBILE']).toContain(parsed.getType());
    }
    const byCountry = new Map<string, number>();
    for (const c of contacts) byCountry.set(c._country, (byCountry.get(c._country) ?? 0) + 1);
    expect([...byCountry.keys()].sort()).toEqual(['DE', 'ES', 'FR', 'GB', 'US']);
    expect(Math.max(...byCountry.values())).toBe(byCountry.get('GB'));
  });

  it('emails are unique and plain ASCII; consent and plans are skewed as documented', () => {
    expect(new Set(contacts.map((c) => c._email)).size).toBe(N);
    for (const c of contacts) expect(c._email).toMatch(/^[a-z0-9.]+@example\.com$/);
    const share = (f: (c: Record<string, unknown>) => boolean) => contacts.filter(f).length / N;
    expect(share((c) => c._consent_sms === 'opt-in')).toBeCloseTo(0.7, 1);
    expect(share((c) => c._consent_sms === 'opt-out')).toBeCloseTo(0.1, 1);
    expect(share((c) => c.plan === 'free')).toBeGreaterThan(share((c) => c.plan === 'enterprise') * 2);
  });

  it('about 30% of contacts are in a second source, sharing the email so they merge', () => {
    const two = Array.from({ length: N }, (_, i) => sourcesOf(i, 2)).filter((s) => s.length === 2).length / N;
    expect(two).toBeGreaterThan(0.27);
    expect(two).toBeLessThan(0.33);
    expect(sourcesOf(3, 1)).toEqual([0]);
    const second = contact(9, 1, false);
    expect(second._email).toBe(contact(9, 0, true)._email);
    expect(second._user_id).not.toBe(contact(9, 0, true)._user_id);
  });

  it('events: declared types and parameters, unique ids, within 90 days, a few very active contacts', () => {
    const now = Date.UTC(2026, 10, 24);
    const events = Array.from({ length: 20000 }, (_, j) => event(j, 1000, 2, now).item);
    expect(new Set(events.map((e) => e._event_id)).size).toBe(events.length);
    const declared = new Map<string, Set<string>>(EVENT_TYPES.map((t: { uid: string; parameters: Array<{ parameter: string }> }) => [t.uid, new Set(t.parameters.map((p) => p.parameter))]));
    for (const e of events) {
      expect(declared.has(e._event_type)).toBe(true);
      for (const k of Object.keys(e._event_parameters)) expect([e._event_type, k, declared.get(e._event_type)!.has(k)]).toEqual([e._event_type, k, true]);
      const at = Date.parse(e._event_date);
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThan(now - 90 * 86400000);
    }
    const perContact = new Map<string, number>();
    for (const e of events) perContact.set(e._user_id, (perContact.get(e._user_id) ?? 0) + 1);
    const counts = [...perContact.values()].sort((a, b) => b - a);
    expect(counts[0]).toBeGreaterThan((20000 / 1000) * 5);
    expect(ATTRIBUTES.map((a: { uid: string }) => a.uid)).toContain('interests');
  });
});
