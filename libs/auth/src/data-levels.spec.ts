import { PROTOTYPE_NAMES } from '@meld/testing';
import fc from 'fast-check';
import type { DataMode, Scope } from '@meld/contracts';
import { type Contact, dataLevelOf, dataPolicy, mayReadByUserId, maySearchByPii, serializeContact } from './data-levels';
import { maskEmail, maskPhone } from './pii-masks';
import type { Principal } from './principal';

const contact: Contact = {
  id: 'a1',
  _user_id: 'u1',
  _first_name: 'Jean',
  _last_name: 'Dupont',
  _email: 'jean.dupont@example.com',
  _phone_mobile: '+33612345678',
  _country: 'FR',
  _city: 'Lyon',
  _datasources: ['d1'],
  newsletter: true,
  vip: [false, true],
  loyalty_points: 12,
};

const caller = (scopes: Scope[], dataMode: DataMode = 'normal'): Pick<Principal, 'kind' | 'scopes' | 'project'> => ({
  kind: 'product',
  scopes,
  project: { id: 'p', uid: 'p', dataMode },
});
const READ: Scope = 'PROJECT_AUDIENCE_READ';

describe('data levels', () => {
  it('Default: full name and user id (and the audience id) only', () => {
    expect(serializeContact(contact, caller([READ]))).toEqual({ id: 'a1', _user_id: 'u1', _first_name: 'Jean', _last_name: 'Dupont' });
  });

  it('Basic: adds phone, email, country and every boolean field', () => {
    expect(serializeContact(contact, caller([READ, 'PROJECT_AUDIENCE_DATA_BASIC']))).toEqual({
      id: 'a1',
      _user_id: 'u1',
      _first_name: 'Jean',
      _last_name: 'Dupont',
      _email: 'jean.dupont@example.com',
      _phone_mobile: '+33612345678',
      _country: 'FR',
      newsletter: true,
      vip: [false, true],
    });
  });

  it('Full: everything', () => {
    expect(serializeContact(contact, caller([READ, 'PROJECT_AUDIENCE_DATA_FULL']))).toEqual(contact);
  });

  it('anonymized masks phone and email at every level; blocked leaves only the id', () => {
    const full = serializeContact(contact, caller([READ, 'PROJECT_AUDIENCE_DATA_FULL'], 'anonymized'));
    expect(full).toMatchObject({ _email: 'j***@e***.com', _phone_mobile: '+33******78', _city: 'Lyon' });
    expect(serializeContact(contact, caller([READ, 'PROJECT_AUDIENCE_DATA_FULL'], 'blocked'))).toEqual({ id: 'a1' });
    expect(serializeContact(contact, caller(['PROJECT_AUDIENCE_DATA_FULL']))).toEqual({ id: 'a1' });
    expect(serializeContact(contact, { kind: 'product', scopes: [READ], project: null })).toEqual({ id: 'a1' });
  });

  it('anonymized masks the emails and phone numbers in every other value too: a user id, source ids, custom fields', () => {
    const c: Contact = { ...contact, _user_id: '+33698765432', _ds_contact_ids: ['d1/jean@example.org'], work_email: 'jd@corp.example', note: 'call 06 98 76 54 32' };
    for (const scopes of [[READ], [READ, 'PROJECT_AUDIENCE_DATA_FULL']] as Scope[][]) {
      const out = serializeContact(c, caller(scopes, 'anonymized'));
      expect(JSON.stringify(out)).not.toMatch(/98765432|98 76 54|jean@|jd@/);
      expect(out).toMatchObject({ id: 'a1', _user_id: '+33******32', _first_name: 'Jean' });
    }
    // Normal mode shows the user id at the Default level, as the spec says.
    expect(serializeContact(c, caller([READ]))._user_id).toBe('+33698765432');
  });

  it('keeps fields named like Object.prototype members as plain data at every level (ADR 0124)', () => {
    const contact = JSON.parse(`{"id":"a1",${PROTOTYPE_NAMES.map((n) => `"${n}":true`).join(',')}}`) as Contact;
    for (const scopes of [[READ, 'PROJECT_AUDIENCE_DATA_BASIC'], [READ, 'PROJECT_AUDIENCE_DATA_FULL']] as Scope[][]) {
      const out = serializeContact(contact, caller(scopes));
      expect(Object.keys(out).sort()).toEqual(['id', ...PROTOTYPE_NAMES].sort());
    }
  });

  it('never lets a clear phone or email out outside normal mode, nor above the level (property)', () => {
    const scopeSets = fc.subarray(['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC', 'PROJECT_AUDIENCE_DATA_FULL'] as Scope[]);
    const modes = fc.constantFrom<DataMode>('normal', 'anonymized', 'blocked');
    const email = fc.emailAddress();
    const phone = fc.stringMatching(/^\+[1-9][0-9]{7,14}$/);
    const extra = fc.dictionary(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...PROTOTYPE_NAMES)).filter((k) => !['id', '__proto__'].includes(k)), fc.oneof(fc.string(), fc.boolean(), fc.integer()));
    fc.assert(
      fc.property(scopeSets, modes, email, phone, extra, (scopes, mode, e, p, more) => {
        const c: Contact = { ...more, id: 'x', _email: e, _phone_mobile: p };
        const out = serializeContact(c, caller(scopes, mode));
        const text = JSON.stringify(out);
        const policy = dataPolicy(mode, { kind: 'product', scopes });
        if (!policy.mayReadPii) {
          expect(text).not.toContain(JSON.stringify(e));
          expect(text).not.toContain(JSON.stringify(p));
        }
        if (!policy.mayReadContactData) expect(out).toEqual({ id: 'x' });
        if (mode === 'anonymized') {
          // Wherever else they are stored: a user id, a custom field.
          const elsewhere = JSON.stringify(serializeContact({ ...c, _user_id: p, work_email: e }, caller(scopes, mode)));
          expect(elsewhere).not.toContain(e);
          expect(elsewhere).not.toContain(p);
        }
        if (dataLevelOf({ kind: 'product', scopes }) !== 'full') {
          for (const [k, v] of Object.entries(more)) if (typeof v !== 'boolean' && !['_email', '_phone_mobile', '_user_id', '_first_name', '_last_name', '_country'].includes(k)) expect(Object.hasOwn(out, k)).toBe(false);
        }
      }),
    );
  });

  it('allows searching by phone or email only where they are readable in clear', () => {
    expect(maySearchByPii(caller([READ, 'PROJECT_AUDIENCE_DATA_BASIC']))).toBe(true);
    expect(maySearchByPii(caller([READ]))).toBe(false);
    expect(maySearchByPii(caller([READ, 'PROJECT_AUDIENCE_DATA_FULL'], 'anonymized'))).toBe(false);
    expect(maySearchByPii(caller([READ, 'PROJECT_AUDIENCE_DATA_FULL'], 'blocked'))).toBe(false);
  });

  it('reads by a user id holding a phone or an email only where the read shows that user id in clear (ADR 0045)', () => {
    const BASIC: Scope[] = [READ, 'PROJECT_AUDIENCE_DATA_BASIC'];
    for (const id of ['+33612345678', 'ada@example.com', 'crm-0612345678']) {
      expect([id, mayReadByUserId(caller([READ]), id)]).toEqual([id, true]);
      for (const mode of ['anonymized', 'blocked'] as const) expect([id, mode, mayReadByUserId(caller(BASIC, mode), id)]).toEqual([id, mode, false]);
    }
    // Ids that are neither stay readable in every mode: blocked keeps { id } to address the contact (ADR 0121).
    for (const id of ['u42', 'crm-7', '2026-11-29']) for (const mode of ['normal', 'anonymized', 'blocked'] as const) expect(mayReadByUserId(caller([READ], mode), id)).toBe(true);
    const levels: Scope[][] = [[], [READ], BASIC, [READ, 'PROJECT_AUDIENCE_DATA_FULL']];
    fc.assert(
      fc.property(fc.constantFrom(...levels), fc.constantFrom<DataMode>('normal', 'anonymized', 'blocked'), fc.oneof(fc.emailAddress(), fc.stringMatching(/^\+?[1-9]\d{6,14}$/), fc.string()), (scopes, mode, id) => {
        const shown = serializeContact({ id: 'a1', _user_id: id }, caller(scopes, mode))._user_id;
        // Refused exactly where the read would not give the id back as it was looked up.
        if (!mayReadByUserId(caller(scopes, mode), id)) expect(shown).not.toBe(id);
        else if (mode === 'normal' && scopes.length) expect(shown).toBe(id);
      }),
    );
  });

  it('masks with a fixed width so the length leaks nothing', () => {
    expect(maskPhone('+33612345678')).toBe('+33******78');
    expect(maskPhone('+1 415 555 0100')).toBe('+14******00');
    expect(maskPhone('0612345678')).toBe('06******78');
    expect(maskPhone('123')).toBe('******');
    expect(maskEmail('j@e.com')).toBe('j***@e***.com');
    expect(maskEmail('john.smith@mail.example.co')).toBe('j***@m***.co');
    expect(maskEmail('nobody')).toBe('***');
    fc.assert(
      fc.property(fc.emailAddress(), (e) => {
        const masked = maskEmail(e);
        expect(masked.startsWith(`${e[0]}***@`)).toBe(true);
        expect(masked.length).toBeLessThanOrEqual(e.length + 8);
        expect(/^[^@]\*\*\*@[^@]\*\*\*(\.[^.@]*)?$/.test(masked)).toBe(true);
      }),
    );
  });
});
