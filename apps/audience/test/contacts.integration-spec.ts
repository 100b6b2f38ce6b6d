import { randomUUID } from 'node:crypto';
import type { DataMode, Scope } from '@meld/contracts';
import { type Json, seedTenancy, signedPrincipal } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { ContactReadSchema } from '../src/contacts/contact-read.schema';
import { startAudience } from './app.fixture';

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;

const READ: Scope[] = ['PROJECT_AUDIENCE_READ'];
const BASIC: Scope[] = [...READ, 'PROJECT_AUDIENCE_DATA_BASIC'];
const FULL: Scope[] = [...READ, 'PROJECT_AUDIENCE_DATA_FULL'];

type Signer = (url: string) => Record<string, string>;

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Signs the principal the gateway would forward for a URL, with the project's data mode. */
function as(t: Tenancy, scopes: Scope[], dataMode: DataMode = 'normal'): Signer {
  return (url) =>
    signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: t.organization.id, plan: 'm', scopes, project: { id: t.project.id, uid: t.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', url },
    );
}

interface Seeded {
  id: string;
  userId: string;
  attributes: Record<string, Json>;
  keys?: Array<[string, string]>;
  updatedAt?: string;
}

/** Rows shaped as identity-merge writes them: the audience contact, its one member and its merge keys. */
async function seedContact(db: DataSource, t: Tenancy, c: Seeded) {
  const ds = t.dataSource.id;
  await db.query(
    `INSERT INTO audience_contacts (project_id, id, attributes, lineage, datasources, ds_contact_ids, version, updated_at)
     VALUES ($1, $2, $3, '{}', $4, $5, 1, $6)`,
    [t.project.id, c.id, JSON.stringify({ _user_id: c.userId, ...c.attributes }), JSON.stringify([ds]), JSON.stringify([`${ds}/${c.userId}`]), c.updatedAt ?? new Date().toISOString()],
  );
  await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id, applied_version) VALUES ($1, $2, $3, $4, 1)`, [t.project.id, ds, c.userId, c.id]);
  for (const [attribute, value] of [['_user_id', c.userId] as [string, string], ...(c.keys ?? [])]) {
    await db.query(`INSERT INTO merge_keys (project_id, attribute, value, data_source_id, user_id) VALUES ($1, $2, $3, $4, $5)`, [t.project.id, attribute, value, ds, c.userId]);
  }
}

describe('contact reads (audience): search by phone, by email, read by user id', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let t: Tenancy;
  let other: Tenancy;
  const jane = { id: randomUUID(), userId: 'u-jane' };
  const national = { id: randomUUID(), userId: 'u-national' };
  const older = { id: randomUUID(), userId: 'u-older' };
  const newer = { id: randomUUID(), userId: 'u-newer' };
  const crm = { id: randomUUID(), userId: 'u-crm' };
  // User ids that are a phone (auto-created on an outbound send, ADR 0184) and an email (a source keyed by it).
  const byPhone = { id: randomUUID(), userId: '+33699887766' };
  const byEmail = { id: randomUUID(), userId: 'ada@example.com' };
  const accented = { id: randomUUID(), userId: 'u-jose' };
  const capitals = { id: randomUUID(), userId: 'u-elodie' };
  const JANE = {
    _first_name: 'Jane',
    _last_name: 'Doe',
    _email: 'Jane.Doe@Example.com',
    _phone_mobile: '+33612345678',
    _country: 'FR',
    opt_in: true,
    loyalty_tier: 'gold',
  };

  beforeAll(async () => {
    ({ app, base, db } = await startAudience());
    t = await seedTenancy(db);
    other = await seedTenancy(db);
    await db.query(`UPDATE projects SET locale = 'fr_FR', merging_attributes = '{_email,_phone_mobile}' WHERE id = $1`, [t.project.id]);
    await seedContact(db, t, { ...jane, attributes: JANE, keys: [['_email', 'jane.doe@example.com'], ['_phone_mobile', '+33612345678']] });
    // Raw national phone in the attributes: only the merge key holds the E.164 form.
    await seedContact(db, t, { ...national, attributes: { _first_name: 'Nat', _phone_mobile: '06 98 76 54 32' }, keys: [['_phone_mobile', '+33698765432']] });
    // Two contacts with one email that did not merge them (no merge key): the newer one wins.
    await seedContact(db, t, { ...older, attributes: { _first_name: 'Old', _email: 'shared@example.com' }, updatedAt: '2026-01-01T00:00:00Z' });
    await seedContact(db, t, { ...newer, attributes: { _first_name: 'New', _email: 'shared@example.com' }, updatedAt: '2026-06-01T00:00:00Z' });
    // A source's own custom attribute named `id` (any non-reserved name is custom).
    await seedContact(db, t, { ...crm, attributes: { _first_name: 'Crm', id: 42 } });
    await seedContact(db, t, { ...byPhone, attributes: { _phone_mobile: byPhone.userId } });
    await seedContact(db, t, { ...byEmail, attributes: { _first_name: 'Ada', _email: byEmail.userId } });
    // Keyed as identity-merge keys it: trimmed, lower-cased, NFC (the composed é).
    // A non-merging email in capitals beyond ASCII: only the attribute holds it (no merge key).
    await seedContact(db, t, { ...capitals, attributes: { _first_name: 'Élodie', _email: 'ÉLODIE.Ørsted@Example.com' } });
    await seedContact(db, t, { ...accented, attributes: { _first_name: 'José', _email: 'Jos\u00e9@example.com' }, keys: [['_email', 'jos\u00e9@example.com']] });
    // Another tenant with the same keys: never visible from t.
    await seedContact(db, other, { id: randomUUID(), userId: 'u-jane', attributes: JANE, keys: [['_email', 'jane.doe@example.com']] });
  });
  afterAll(() => app?.close());

  const get = async (path: string, sign: Signer, uid = t.project.uid) => {
    const url = `${base}/v1/project/${uid}/audience/${path}`;
    const res = await fetch(url, { headers: sign(url) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  describe('GET …/audience/search/phone/:phone', () => {
    it('finds by E.164 sent with + as %2B; Full returns every attribute, _datasources and _ds_contact_ids', async () => {
      const { status, body } = await get(`search/phone/%2B33612345678`, as(t, FULL));
      expect(status).toBe(200);
      expect(ContactReadSchema.parse(body)).toBeTruthy();
      expect(body).toEqual({
        entity: {
          id: jane.id,
          _user_id: 'u-jane',
          ...JANE,
          _created_at: expect.stringMatching(ISO_UTC),
          _updated_at: expect.stringMatching(ISO_UTC),
          _datasources: [t.dataSource.id],
          _ds_contact_ids: [`${t.dataSource.id}/u-jane`],
        },
        metadata: { matches: 1 },
      });
    });

    it('reads straight from the pool, no TypeORM query runner (ADR 0233)', async () => {
      const pool = jest.spyOn((db.driver as unknown as { master: { query: (sql: string) => unknown } }).master, 'query');
      const runner = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        expect((await get(`search/phone/%2B33612345678`, as(t, FULL))).status).toBe(200);
        expect(pool).toHaveBeenCalledTimes(2); // the project's locale, then the contact
        expect(runner).not.toHaveBeenCalled();
      } finally {
        pool.mockRestore();
        runner.mockRestore();
      }
    });

    it('parses national formats with the project locale country (fr_FR) and finds through the merge keys', async () => {
      for (const phone of ['06 98 76 54 32', '0698765432', '+33 6 98 76 54 32']) {
        const { status, body } = await get(`search/phone/${encodeURIComponent(phone)}`, as(t, BASIC));
        expect([phone, status, body.entity.id]).toEqual([phone, 200, national.id]);
      }
    });

    it('400 naming the phone when it does not parse; 404 for a valid unknown number', async () => {
      const bad = await get(`search/phone/not-a-phone`, as(t, FULL));
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ statusCode: 400, error: expect.any(String), message: expect.stringContaining('not-a-phone') });
      const missing = await get(`search/phone/%2B33611111111`, as(t, FULL));
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ statusCode: 404, message: 'contact not found' });
    });

    it('403 without mayReadPii (Default level, anonymized or blocked mode), before any look-up', async () => {
      for (const [scopes, mode] of [[READ, 'normal'], [FULL, 'anonymized'], [BASIC, 'blocked'], [[], 'normal']] as Array<[Scope[], DataMode]>) {
        for (const phone of ['%2B33612345678', '%2B33611111111', 'not-a-phone']) {
          const { status, body } = await get(`search/phone/${phone}`, as(t, scopes, mode));
          expect([scopes, mode, phone, status, body.message]).toEqual([scopes, mode, phone, 403, expect.stringContaining('mayReadPii')]);
        }
      }
    });
  });

  describe('GET …/audience/search/email/:userEmail', () => {
    it('trims and lower-cases; Basic returns id, user id, name, phone, email, country and booleans', async () => {
      const { status, body } = await get(`search/email/${encodeURIComponent('  JANE.doe@EXAMPLE.com ')}`, as(t, BASIC));
      expect(status).toBe(200);
      expect(body).toEqual({
        entity: { id: jane.id, _user_id: 'u-jane', _first_name: 'Jane', _last_name: 'Doe', _email: 'Jane.Doe@Example.com', _phone_mobile: '+33612345678', _country: 'FR', opt_in: true },
        metadata: { matches: 1 },
      });
    });

    it('finds an email written with a decomposed accent (e + U+0301) as the composed one it was keyed with (NFC)', async () => {
      const { status, body } = await get(`search/email/${encodeURIComponent('JOSE\u0301@example.com')}`, as(t, BASIC));
      expect([status, body.entity?.id]).toEqual([200, accented.id]);
    });

    it('finds a non-merging email whatever the case of its letters beyond ASCII (É, Ø), as of ASCII ones', async () => {
      for (const sent of ['élodie.ørsted@example.com', 'ÉLODIE.ØRSTED@EXAMPLE.COM', 'Élodie.Ørsted@example.com']) {
        const { status, body } = await get(`search/email/${encodeURIComponent(sent)}`, as(t, BASIC));
        expect([sent, status, body.entity?.id]).toEqual([sent, 200, capitals.id]);
      }
    });

    it('several contacts sharing a non-merging email: the most recently updated, with matches', async () => {
      const { status, body } = await get(`search/email/SHARED@example.com`, as(t, FULL));
      expect(status).toBe(200);
      expect(body.entity).toMatchObject({ id: newer.id, _first_name: 'New' });
      expect(body.metadata).toEqual({ matches: 2 });
    });

    it('404 for an unknown email; 403 without mayReadPii', async () => {
      expect((await get(`search/email/nobody@example.com`, as(t, FULL))).status).toBe(404);
      expect((await get(`search/email/jane.doe@example.com`, as(t, READ))).status).toBe(403);
      expect((await get(`search/email/jane.doe@example.com`, as(t, FULL, 'anonymized'))).status).toBe(403);
    });
  });

  describe('GET …/audience/user/:userId', () => {
    it('Full: _created_at and _updated_at, the times Meld keeps of the contact, as ISO UTC (the instants the audience filters compare)', async () => {
      await db.query(`UPDATE audience_contacts SET created_at = '2025-12-31T23:30:00.125+01:00' WHERE id = $1`, [older.id]);
      const { body } = await get(`user/u-older`, as(t, FULL));
      expect(body.entity).toMatchObject({ _created_at: '2025-12-31T22:30:00.125Z', _updated_at: '2026-01-01T00:00:00.000Z' });
    });

    it('Default level: id, _user_id and the name only', async () => {
      const { status, body } = await get(`user/u-jane`, as(t, READ));
      expect(status).toBe(200);
      expect(body).toEqual({ entity: { id: jane.id, _user_id: 'u-jane', _first_name: 'Jane', _last_name: 'Doe' }, metadata: { matches: 1 } });
    });

    it('anonymized mode masks phone and email (Basic and Full), and Default shows neither', async () => {
      const basic = await get(`user/u-jane`, as(t, BASIC, 'anonymized'));
      expect(basic.body.entity).toMatchObject({ id: jane.id, _email: 'J***@E***.com', _phone_mobile: '+33******78', _country: 'FR' });
      const full = await get(`user/u-jane`, as(t, FULL, 'anonymized'));
      expect(full.body.entity).toMatchObject({ _email: 'J***@E***.com', _phone_mobile: '+33******78', loyalty_tier: 'gold', _ds_contact_ids: [`${t.dataSource.id}/u-jane`] });
      const dflt = await get(`user/u-jane`, as(t, READ, 'anonymized'));
      expect(dflt.body.entity).toEqual({ id: jane.id, _user_id: 'u-jane', _first_name: 'Jane', _last_name: 'Doe' });
    });

    it('`id` is always the audience contact id, even when a source sent a custom attribute named id', async () => {
      for (const headers of [as(t, FULL), as(t, BASIC), as(t, READ), as(t, FULL, 'blocked'), as(t, FULL, 'anonymized')]) {
        const { status, body } = await get(`user/u-crm`, headers);
        expect([status, body.entity.id]).toEqual([200, crm.id]);
      }
    });

    it('blocked mode, or no audience scope, leaves { id } only', async () => {
      for (const headers of [as(t, FULL, 'blocked'), as(t, [])]) {
        const { status, body } = await get(`user/u-jane`, headers);
        expect([status, body.entity]).toEqual([200, { id: jane.id }]);
      }
    });

    it('a user id holding a phone or an email: read in normal mode, 403 before any look-up where the mode hides it (ADR 0045)', async () => {
      // Normal mode shows `_user_id` from the Default level on: reading by it confirms nothing the read would not show.
      for (const c of [byPhone, byEmail]) {
        const { status, body } = await get(`user/${encodeURIComponent(c.userId)}`, as(t, READ));
        expect([c.userId, status, body.entity]).toEqual([c.userId, 200, { id: c.id, _user_id: c.userId, ...(c === byEmail ? { _first_name: 'Ada' } : {}) }]);
      }
      // Anonymized mode masks such an id and blocked mode hides it: a 200 or a 404 would say whether that phone or email is a
      // contact, so both modes answer 403 whether or not a contact has it, at every level.
      for (const [scopes, mode] of [[READ, 'anonymized'], [FULL, 'anonymized'], [FULL, 'blocked']] as Array<[Scope[], DataMode]>) {
        for (const userId of [byPhone.userId, byEmail.userId, '+33611111111', 'nobody@example.com', 'crm 06 11 11 11 11']) {
          const { status, body } = await get(`user/${encodeURIComponent(userId)}`, as(t, scopes, mode));
          expect([mode, userId, status, body.message]).toEqual([mode, userId, 403, expect.stringMatching(/^userId: /)]);
          expect(JSON.stringify(body)).not.toContain(userId);
        }
      }
      // The same modes still read a user id that is neither, masked as before.
      expect((await get(`user/u-jane`, as(t, FULL, 'anonymized'))).body.entity).toMatchObject({ id: jane.id, _user_id: 'u-jane' });
      expect((await get(`user/u-jane`, as(t, FULL, 'blocked'))).body.entity).toEqual({ id: jane.id });
    });

    it('404 for an unknown user id, and for another tenant’s contact or project', async () => {
      const missing = await get(`user/u-nobody`, as(t, FULL));
      expect(missing.status).toBe(404);
      // No contact holds U+0000 (ingest refuses it; Postgres text cannot store it): not found (a phone: not a number), not a 500.
      for (const [path, status] of [[`user/u%00x`, 404], [`search/email/a%00@example.com`, 404], [`search/phone/%2B3361%0023`, 400]]) {
        expect([path, (await get(String(path), as(t, FULL))).status]).toEqual([path, status]);
      }
      expect(missing.body).toMatchObject({ statusCode: 404, message: 'contact not found' });
      // The other tenant's u-jane is a different audience contact.
      expect((await get(`user/u-jane`, as(other, FULL), other.project.uid)).body.entity.id).not.toBe(jane.id);
      expect((await get(`user/u-older`, as(other, FULL), other.project.uid)).status).toBe(404);
      // A path project that is not the principal's is 404.
      expect((await get(`user/u-jane`, as(other, FULL), t.project.uid)).status).toBe(404);
    });
  });
});
