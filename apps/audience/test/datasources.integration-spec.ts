import { DataSourceEntity } from '@meld/db';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DataSourceListSchema } from '../src/datasources/datasources.controller';
import { startAudience } from './app.fixture';

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;

describe('GET /v1/project/:project/datasource (list query filter)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let t: Tenancy;
  let other: Tenancy;

  beforeAll(async () => {
    ({ app, base, db } = await startAudience());
    t = await seedTenancy(db);
    other = await seedTenancy(db);
    // seedTenancy made "Web" (api, priority 0); three more, with known creation times.
    const repo = db.getRepository(DataSourceEntity);
    await repo.save([
      { projectId: t.project.id, uid: 'shopify-eu', name: 'Shopify EU', connector: 'shopify', priority: 10 },
      { projectId: t.project.id, uid: 'shopify-us', name: 'Shopify US', connector: 'shopify', priority: 5 },
      { projectId: t.project.id, uid: 'crm', name: 'CRM import', connector: 'csv', priority: -1 },
    ]);
    await db.query(
      `UPDATE data_sources SET created_at = CASE uid WHEN 'shopify-eu' THEN '2024-01-01T00:00:00Z'::timestamptz WHEN 'shopify-us' THEN '2024-06-01T00:00:00.000001Z'::timestamptz WHEN 'crm' THEN now() - interval '2 days' ELSE created_at END WHERE project_id = $1`,
      [t.project.id],
    );
  });
  afterAll(() => app?.close());

  const list = async (query = '', tenancy = t, uid = tenancy.project.uid) => {
    const url = `${base}/v1/project/${uid}/datasource${query ? `?${query}` : ''}`;
    const res = await fetch(url, { headers: principalHeader(tenancy, { scopes: ['PROJECT_DATASOURCE_READ'] }, { app: 'audience', url }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const names = async (query: string) => {
    const { status, body } = await list(query);
    expect([status, body.message]).toEqual([200, undefined]);
    return body.entity.map((d: Json) => d.name);
  };

  it("lists the project's data sources only, oldest first, with the page in metadata", async () => {
    const { status, body } = await list();
    expect(status).toBe(200);
    expect(DataSourceListSchema.parse(body)).toBeTruthy();
    expect(body.entity.map((d: Json) => d.uid)).toEqual(['shopify-eu', 'shopify-us', 'crm', t.dataSource.uid]);
    expect(body.entity[0]).toEqual({ id: expect.any(String), uid: 'shopify-eu', name: 'Shopify EU', connector: 'shopify', priority: 10, createdAt: '2024-01-01T00:00:00.000+00:00' });
    expect(body.metadata).toEqual({ start: 0, limit: 50, count: 4, total: 4 });
    expect((await list('', other)).body.entity.map((d: Json) => d.uid)).toEqual([other.dataSource.uid]);
  });

  it('filters, sorts and pages; total counts the whole filter', async () => {
    expect(await names('connector_eq=shopify')).toEqual(['Shopify EU', 'Shopify US']);
    expect(await names('connector_in=csv|api&_sort=name:-')).toEqual(['Web', 'CRM import']);
    expect(await names('priority_gte=0&_sort=priority:-')).toEqual(['Shopify EU', 'Shopify US', 'Web']);
    expect(await names('name_startsi=shop&name_endsi=us')).toEqual(['Shopify US']);
    expect(await names('name_eq=Web&name_eq=CRM%20import')).toEqual(['CRM import', 'Web']);
    expect(await names('priority_range=0|10')).toEqual(['Shopify US', 'Web']);
    expect(await names('createdAt_lt=2024-06-01T00:00:00.000001')).toEqual(['Shopify EU']);
    expect(await names('createdAt_lte=2024-06-01T02:00:00.000001%2B02:00')).toEqual(['Shopify EU', 'Shopify US']);
    expect(await names('createdAt_gt=7 days ago')).toEqual(['CRM import', 'Web']);
    expect(await names(`id_eq=${t.dataSource.id}`)).toEqual(['Web']);
    const page = await list('_sort=priority&_start=1&_limit=2');
    expect(page.body.entity.map((d: Json) => d.name)).toEqual(['Web', 'Shopify US']);
    expect(page.body.metadata).toEqual({ start: 1, limit: 2, count: 2, total: 4 });
    const empty = await list('name_eq=nobody');
    expect([empty.status, empty.body.entity, empty.body.metadata.total]).toEqual([200, [], 0]);
  });

  it('the same query in _q gives the same answer', async () => {
    const q = { filter: [cond('connector', 'in', ['shopify', 'csv']), cond('priority', 'lt', 10)], sort: [['priority', 'desc']], paging: { start: 0, limit: 10 } };
    const fromQ = await list(`_q=${encodeURIComponent(JSON.stringify(q))}`);
    const fromUrl = await list('connector_in=shopify|csv&priority_lt=10&_sort=priority:-&_start=0&_limit=10');
    expect(fromQ).toEqual(fromUrl);
    expect(fromQ.body.entity.map((d: Json) => d.name)).toEqual(['Shopify US', 'CRM import']);
  });

  it('400 naming the bad parameter and what it allows', async () => {
    const bad = await list('name_eqq=x');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('name_eqq'), details: { parameter: 'name_eqq', allowed: expect.arrayContaining(['eq', 'containsi']) } });
    expect((await list('colour_eq=red')).body.details).toEqual({ parameter: 'colour_eq', allowed: ['id', 'uid', 'name', 'connector', 'priority', 'createdAt'] });
    expect((await list('priority_eq=high')).body.details).toEqual({ parameter: 'priority_eq' });
    expect((await list('_start=10')).body.details).toEqual({ parameter: '_limit' });
    expect((await list('_start=0&_limit=5000')).body.details).toEqual({ parameter: '_limit' });
    expect((await list('_group=daily')).body).toMatchObject({ statusCode: 400, message: '_group: data sources do not group', details: { parameter: '_group' } });
    const q = await list(`_q=${encodeURIComponent(JSON.stringify({ filter: [cond('name', 'eq', 'a'), cond('name', 'lt', 'b')] }))}`);
    expect([q.status, q.body.details.parameter]).toEqual([400, '_q.filter[1].operator']);
  });

  it('404 when the path project is not the principal project', async () => {
    expect((await list('', t, other.project.uid)).status).toBe(404);
  });
});

function cond(field: string, operator: string, value: unknown) {
  return { field, operator, value };
}
