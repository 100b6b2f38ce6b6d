import { membershipVersion, messageRows, parseDsContactId, removalRows } from './membership';

describe('membership rows', () => {
  it('splits <dataSourceId>/<userId> at the first slash', () => {
    expect(parseDsContactId('ds-1/user/with/slashes')).toEqual({ dataSourceId: 'ds-1', userId: 'user/with/slashes' });
    expect(parseDsContactId('no-slash')).toBeNull();
    expect(parseDsContactId('/u')).toBeNull();
    expect(parseDsContactId('ds/')).toBeNull();
  });

  it('orders versions by step time, a live row above a removal of the same step', () => {
    const t = '2026-11-20T10:00:00.000Z';
    const later = '2026-11-20T10:00:00.001Z';
    expect(BigInt(membershipVersion(t, true))).toBeGreaterThan(BigInt(membershipVersion(t, false)));
    expect(BigInt(membershipVersion(later, false))).toBeGreaterThan(BigInt(membershipVersion(t, true)));
  });

  it('removes only the current members a message no longer lists', () => {
    const rows = removalRows('p', 'a', '2026-11-20T10:00:00.000Z', [{ dataSourceId: 'd', userId: 'x' }, { dataSourceId: 'd', userId: 'y' }], new Set(['d/x']));
    expect(rows).toEqual([{ project_id: 'p', data_source_id: 'd', user_id: 'y', audience_id: 'a', version: membershipVersion('2026-11-20T10:00:00.000Z', false), deleted: 1 }]);
  });
});

describe('messageRows', () => {
  const at = '2026-11-20T10:00:00.000Z';
  const base = { schemaVersion: 1 as const, projectId: 'p', audienceId: 'a', version: 2, at };
  const row = (ref: string, live: boolean) => {
    const [ds, user] = [ref.slice(0, ref.indexOf('/')), ref.slice(ref.indexOf('/') + 1)];
    return { project_id: 'p', data_source_id: ds, user_id: user, audience_id: 'a', version: membershipVersion(at, live), deleted: live ? 0 : 1 };
  };

  it('writes live rows for the listed contacts and removal rows for those identity-merge says left', () => {
    const snapshot = { ...base, kind: 'snapshot' as const, attributes: {}, dataSources: ['d'], dsContactIds: ['d/x'], removedDsContactIds: ['d/gone', 'e/moved/away'] };
    expect(messageRows(snapshot)).toEqual({ rows: [row('d/x', true), row('d/gone', false), row('e/moved/away', false)], invalid: [], removalsKnown: true });
    expect(messageRows({ ...base, kind: 'tombstone', removedDsContactIds: ['d/x'] })).toEqual({ rows: [row('d/x', false)], invalid: [], removalsKnown: true });
  });

  it('says when the message does not list removals (older identity-merge), and names malformed refs', () => {
    expect(messageRows({ ...base, kind: 'tombstone' })).toEqual({ rows: [], invalid: [], removalsKnown: false });
    const snapshot = { ...base, kind: 'snapshot' as const, attributes: {}, dataSources: [], dsContactIds: ['bad'], removedDsContactIds: ['/u'] };
    expect(messageRows(snapshot).invalid).toEqual(['bad', '/u']);
  });
});
