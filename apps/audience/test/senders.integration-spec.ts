import { SenderCountryEntity, SenderEntity } from '@meld/db';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SenderListSchema } from '../src/senders/sender.schema';
import { startAudience } from './app.fixture';

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;
type Country = { country: string; accepted?: boolean; effectiveStatus?: string; price?: number };

describe('GET /v1/project/:project/channel/{sms,rcs}/sender (list query filter)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let t: Tenancy;
  let other: Tenancy;

  async function sender(tenancy: Tenancy, channel: 'sms' | 'rcs', alias: string, status: string, countries: Country[], createdAt: string) {
    const s = await db.getRepository(SenderEntity).save({ projectId: tenancy.project.id, channel, alias, name: `${alias} sender`, status });
    await db.getRepository(SenderCountryEntity).save(countries.map((c) => ({ senderId: s.id, ...c })));
    await db.query(`UPDATE senders SET created_at = $2 WHERE id = $1`, [s.id, createdAt]);
    return s;
  }

  beforeAll(async () => {
    ({ app, base, db } = await startAudience());
    t = await seedTenancy(db);
    other = await seedTenancy(db);
    await sender(t, 'sms', 'MELD', 'active', [{ country: 'FR', price: 0.045 }, { country: 'BE', effectiveStatus: 'pending' }], '2026-01-01T00:00:00Z');
    await sender(t, 'sms', '+33612345678', 'pending', [{ country: 'FR', accepted: false, effectiveStatus: 'blocked' }], '2026-02-01T00:00:00Z');
    await sender(t, 'sms', 'Promo', 'inactive', [], '2026-03-01T00:00:00Z');
    await sender(t, 'rcs', 'meld_agent', 'active', [{ country: 'DE' }], '2026-01-15T00:00:00Z');
    await sender(other, 'sms', 'OTHER', 'active', [{ country: 'FR' }], '2026-01-01T00:00:00Z');
  });
  afterAll(() => app?.close());

  const list = async (channel: 'sms' | 'rcs', query = '', tenancy = t) => {
    const url = `${base}/v1/project/${tenancy.project.uid}/channel/${channel}/sender${query ? `?${query}` : ''}`;
    const res = await fetch(url, { headers: principalHeader(tenancy, { scopes: ['PROJECT_DIRECT_READ'] }, { app: 'audience', url }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const aliases = async (query: string, channel: 'sms' | 'rcs' = 'sms') => {
    const { status, body } = await list(channel, query);
    expect([status, body.message]).toEqual([200, undefined]);
    return body.entity.map((s: Json) => s.alias);
  };

  it("lists the channel's senders of the project with their countries, oldest first", async () => {
    const { status, body } = await list('sms');
    expect(status).toBe(200);
    expect(SenderListSchema.parse(body)).toBeTruthy();
    expect(body.entity.map((s: Json) => s.alias)).toEqual(['MELD', '+33612345678', 'Promo']);
    expect(body.entity[0]).toEqual({
      id: expect.any(String),
      channel: 'sms',
      alias: 'MELD',
      name: 'MELD sender',
      status: 'active',
      countries: [
        { country: 'BE', accepted: true, effectiveStatus: 'pending', price: 0 },
        { country: 'FR', accepted: true, effectiveStatus: 'active', price: 0.045 },
      ],
      acceptedCountries: ['BE', 'FR'],
      createdAt: '2026-01-01T00:00:00.000+00:00',
    });
    expect(body.entity[2].countries).toEqual([]);
    expect(body.metadata).toEqual({ start: 0, limit: 50, count: 3, total: 3 });
    expect(await aliases('', 'rcs')).toEqual(['meld_agent']);
    expect((await list('sms', '', other)).body.entity.map((s: Json) => s.alias)).toEqual(['OTHER']);
  });

  it('filters on the sender and on its countries (any country matches; negatives: none does)', async () => {
    expect(await aliases('status_eq=active')).toEqual(['MELD']);
    expect(await aliases('status_nin=inactive|pending')).toEqual(['MELD']);
    expect(await aliases(`alias_eq=${encodeURIComponent('+33612345678')}`)).toEqual(['+33612345678']);
    expect(await aliases('name_containsi=PROMO')).toEqual(['Promo']);
    expect(await aliases('countries*country_eq=FR')).toEqual(['MELD', '+33612345678']);
    expect(await aliases('countries*country_ne=FR')).toEqual(['Promo']);
    expect(await aliases('countries*effectiveStatus_eq=blocked')).toEqual(['+33612345678']);
    expect(await aliases('countries*accepted_eq=true&countries*country_eq=BE')).toEqual(['MELD']);
    expect(await aliases('countries*country_exists=false')).toEqual(['Promo']);
    expect(await aliases('countries*price_gt=0.04')).toEqual(['MELD']);
    expect(await aliases('createdAt_gte=2026-02-01T00:00:00Z&_sort=createdAt:-')).toEqual(['Promo', '+33612345678']);
    expect(await aliases('countries*country_eq=DE', 'rcs')).toEqual(['meld_agent']);
  });

  it('the same query in _q gives the same answer', async () => {
    const q = { filter: [{ field: 'countries.country', operator: 'eq', value: 'FR' }, { field: 'status', operator: 'in', value: ['active', 'pending'] }], sort: [['alias', 'desc']] };
    const fromQ = await list('sms', `_q=${encodeURIComponent(JSON.stringify(q))}`);
    expect(fromQ).toEqual(await list('sms', 'countries*country_eq=FR&status_in=active|pending&_sort=alias:-'));
    expect(fromQ.body.entity.map((s: Json) => s.alias)).toEqual(['MELD', '+33612345678']);
  });

  it('400 naming the parameter: countries cannot sort, prices are numbers', async () => {
    const sort = await list('sms', '_sort=countries*country');
    expect([sort.status, sort.body.details.parameter, sort.body.details.allowed]).toEqual([400, '_sort', ['id', 'alias', 'name', 'status', 'createdAt']]);
    expect((await list('sms', 'countries*price_eq=cheap')).body.details).toEqual({ parameter: 'countries*price_eq' });
    expect((await list('rcs', 'countries*accepted_contains=t')).body.details.parameter).toBe('countries*accepted_contains');
  });
});
