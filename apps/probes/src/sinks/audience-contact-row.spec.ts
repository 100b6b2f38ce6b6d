import { audienceRowVersion, channelsOf, encodeScalar, snapshotRow, tombstoneRow, type AudienceSnapshot } from './audience-contact-row';

describe('audience_contacts rows', () => {
  const at = '2026-11-20T10:00:00.000Z';
  const later = '2026-11-20T10:00:00.001Z';

  it('orders versions by step time, then by the contact version', () => {
    const v = (a: string, n: number) => BigInt(audienceRowVersion(a, n));
    expect(v(at, 2)).toBeGreaterThan(v(at, 1));
    // A re-created id (version 1) beats the tombstone (version 9) of an earlier step.
    expect(v(later, 1)).toBeGreaterThan(v(at, 9));
    // Saturates instead of spilling into the time bits.
    expect(v(at, 2 ** 30)).toBeLessThan(v(later, 0));
    expect(v(at, 2 ** 30)).toBe(v(at, 2 ** 20 - 1));
  });

  it('encodes scalars by catalogue type, and by JSON type when the type is unknown or does not fit', () => {
    expect(encodeScalar('string', 12)).toEqual({ str: '12' });
    expect(encodeScalar('phone', '+33612345678')).toEqual({ str: '+33612345678' });
    expect(encodeScalar('date', '2026-02-03')).toEqual({ num: Date.UTC(2026, 1, 3) / 1000 });
    expect(encodeScalar('date', 'soon')).toBeNull();
    expect(encodeScalar('datetime', '2026-02-03T10:00:00.900+02:00')).toEqual({ num: Date.UTC(2026, 1, 3, 8) / 1000 });
    expect(encodeScalar('boolean', false)).toEqual({ num: 0 });
    expect(encodeScalar('number', 'twelve')).toEqual({ str: 'twelve' });
    expect(encodeScalar(undefined, true)).toEqual({ num: 1 });
    expect(encodeScalar(undefined, 'x')).toEqual({ str: 'x' });
  });

  it('derives channels from a valid mobile (locale country as default) and a valid email', () => {
    expect(channelsOf({ _phone_mobile: '06 12 34 56 78' }, 'fr_FR')).toEqual(['rcs', 'sms', 'whatsapp']);
    expect(channelsOf({ _phone_mobile: '06 12 34 56 78' }, 'en_US')).toEqual([]);
    expect(channelsOf({ _phone_mobile: '+33 1 23 45 67 89' }, null)).toEqual([]);
    expect(channelsOf({ _phone_mobile: '+1 415 555 2671' }, null)).toEqual(['rcs', 'sms', 'whatsapp']);
    expect(channelsOf({ _email: ' a@b.co ' }, null)).toEqual(['email']);
    expect(channelsOf({ _email: 'a@b' }, null)).toEqual([]);
  });

  it('states a snapshot as a live row and a tombstone as a deleted one', () => {
    const s: AudienceSnapshot = {
      schemaVersion: 1,
      kind: 'snapshot',
      projectId: 'p',
      audienceId: 'a',
      version: 3,
      at,
      attributes: { tags: ['x', 'y'], n: 1, gone: [] },
      dataSources: ['d1'],
      dsContactIds: ['d1/u'],
      createdAt: '2026-11-19T08:30:00.000Z',
    };
    const row = snapshotRow(s, { types: new Map([['tags', 'string']]), slotted: [], locale: null });
    // The maintained datetimes are dates even where the catalogue does not list them.
    const [created, updated] = [Date.UTC(2026, 10, 19, 8, 30) / 1000, Date.parse(at) / 1000];
    expect(row).toMatchObject({ deleted: 0, str_keys: ['_datasources', 'tags', 'tags'], str_values: ['d1', 'x', 'y'], num_keys: ['_created_at', '_updated_at', 'n'], num_values: [created, updated, 1], channels: [] });
    const { createdAt: _, ...withoutCreatedAt } = s;
    expect(snapshotRow(withoutCreatedAt, { types: new Map(), slotted: [], locale: null }).num_keys).toEqual(['_updated_at', 'n']);
    expect(row.updated_at).toBe(Date.parse(at) / 1000);
    expect(tombstoneRow({ schemaVersion: 1, kind: 'tombstone', projectId: 'p', audienceId: 'a', version: 4, at })).toMatchObject({ deleted: 1, str_keys: [], version: audienceRowVersion(at, 4) });
  });

  it('fills the slot columns of slotted single-valued attributes with their first value of the kind', () => {
    const s: AudienceSnapshot = {
      schemaVersion: 1,
      kind: 'snapshot',
      projectId: 'p',
      audienceId: 'a',
      version: 1,
      at: '2026-11-20T10:00:00.000Z',
      attributes: { city: 'Paris', score: 7, vip: false, born: '2000-01-02', tags: ['x', 'y'], wrong: 'text in a number' },
      dataSources: [],
      dsContactIds: [],
    };
    const slotted = [
      { uid: 'city', type: 'string', multivalue: false, slot: 2 },
      { uid: 'score', type: 'number', multivalue: false, slot: 0 },
      { uid: 'vip', type: 'boolean', multivalue: false, slot: 1 },
      { uid: 'born', type: 'date', multivalue: false, slot: 3 },
      { uid: 'tags', type: 'string', multivalue: true, slot: 4 },
      { uid: 'wrong', type: 'number', multivalue: false, slot: 5 },
      { uid: 'absent', type: 'string', multivalue: false, slot: 6 },
    ] as const;
    const types = new Map(slotted.map((a) => [a.uid, a.type]));
    const row = snapshotRow(s, { types, slotted, locale: null }) as unknown as Record<string, unknown>;
    expect(row).toMatchObject({ s2: 'Paris', n0: 7, n1: 0, n3: Date.UTC(2000, 0, 2) / 1000, str_slots: 0b100, num_slots: 0b1011 });
    // Multivalue, a value stored under the other kind, and an absent attribute: the column's default (no key).
    for (const column of ['s4', 'n4', 'n5', 's5', 's6']) expect(row).not.toHaveProperty(column);
    // Slot 31 keeps the mask unsigned.
    const last = snapshotRow(s, { types, slotted: [{ uid: 'city', type: 'string', multivalue: false, slot: 31 }], locale: null }) as unknown as Record<string, unknown>;
    expect(last).toMatchObject({ s31: 'Paris', str_slots: 2 ** 31 });
  });
});
